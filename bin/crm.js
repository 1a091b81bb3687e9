#!/usr/bin/env node
// The `crm` bin (`npx crm …`, and bin/crm): src/cli/main.ts, compiled ahead of time when the build in dist/ is
// current, else the .ts source (bin/aot.js, decisions D187). It runs in this process on a Node that strips types (the
// pinned Node 24 that `npm start` uses: npm puts node_modules/.bin first on PATH); on an older Node it is handed to
// the pinned one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { entry } from './aot.js';

const cli = entry('src/cli/main.ts');

if (process.features.typescript) {
  await import(pathToFileURL(cli).href);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(
      `crm: needs Node 24 (found ${process.version}); run npm install in ${fileURLToPath(new URL('..', import.meta.url))}\n`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}

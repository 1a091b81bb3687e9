#!/usr/bin/env node
// The `crm` bin (`npx crm …`): src/cli/main.ts runs natively on a Node that strips types (the pinned Node 24 that
// `npm start` uses: npm puts node_modules/.bin first on PATH); on an older Node it is handed to the pinned one.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../src/cli/main.ts', import.meta.url);

if (process.features.typescript) {
  await import(cli.href);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(
      `crm: needs Node 24 (found ${process.version}); run npm install in ${fileURLToPath(new URL('..', import.meta.url))}\n`,
    );
    process.exit(1);
  }
  const child = spawn(pinned, [fileURLToPath(cli), ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}

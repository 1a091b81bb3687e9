#!/usr/bin/env node
// The `crm` bin (`npx crm …`, and bin/crm): src/cli/main.ts, compiled ahead of time when the build in dist/ is
// current, else the .ts source (bin/aot.js, decisions D187). It runs in this process on a Node that strips types (the
// pinned Node 24 that `npm start` uses: npm puts node_modules/.bin first on PATH); on an older Node it is handed to
// the pinned one. Its long-running roles (serve, worker) run with the server's heap flags (bin/node-flags.js, D194).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { entry } from './aot.js';
import { missingServerFlags, withServerFlags } from './node-flags.js';

const cli = entry('src/cli/main.ts');
const role = ['serve', 'worker'].includes(process.argv.slice(2).find((arg) => !arg.startsWith('-')) ?? '');

if (process.features.typescript) {
  if (role) withServerFlags();
  await import(pathToFileURL(cli).href);
} else {
  const pinned = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(pinned)) {
    process.stderr.write(
      `crm: needs Node 24 (found ${process.version}); run npm install in ${fileURLToPath(new URL('..', import.meta.url))}\n`,
    );
    process.exit(1);
  }
  const flags = role ? missingServerFlags([]) : [];
  const child = spawn(pinned, [...flags, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}

// `npm install`'s build step (the `prepare` script): the SDK then the console (which imports the SDK), and beside
// them the pre-migrated embedded database of a first start (decisions D161). Run at once: the image is PGlite's
// single-threaded work, the builds mostly another core's (issue 20 point 4).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')}: ${code}`))));
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
try {
  await Promise.all([
    run(process.execPath, ['scripts/build-pglite-image.ts']),
    run(process.execPath, ['sdk/scripts/build.ts']).then(() => run(npm, ['run', 'console:build'])),
  ]);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

// `npm run build` in sdk/ (also before `npm pack`): ES modules to dist/, CommonJS to dist/cjs/ (marked by its own
// package.json), both with declarations and maps into src/. A clean dist first, so a removed module is not packed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(sdk, 'node_modules', '.bin', 'tsc');

rmSync(join(sdk, 'dist'), { recursive: true, force: true });
for (const config of ['tsconfig.json', 'tsconfig.cjs.json']) {
  const build = spawnSync(tsc, ['-p', join(sdk, config)], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
mkdirSync(join(sdk, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(sdk, 'dist', 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

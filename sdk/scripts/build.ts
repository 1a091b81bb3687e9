// `npm run build` in sdk/ (also before `npm pack`): ES modules to dist/, CommonJS to dist/cjs/ (marked by its own
// package.json), both with declarations and maps into src/. A clean dist first, so a removed module is not packed.
//
// Inside the project's checkout the two builds run at once with the project's TypeScript 7 (native: ≈ 0.5 s each
// instead of seconds with TypeScript 5.9, part of `npm install`'s time: D160). TypeScript
// 7 has no `node10` resolution, so the CommonJS build resolves as `bundler` there (relative imports only: the same
// files). A lone `sdk/` (packed, copied) builds with its own TypeScript 5.9.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = fileURLToPath(new URL('..', import.meta.url));
const project = join(sdk, '..', 'node_modules');

function typeScriptMajor(modules: string): number {
  try {
    return Number(JSON.parse(readFileSync(join(modules, 'typescript', 'package.json'), 'utf8')).version.split('.')[0]);
  } catch {
    return 0;
  }
}

const native = typeScriptMajor(project) >= 7;
const tsc = native ? join(project, '.bin', 'tsc') : join(sdk, 'node_modules', '.bin', 'tsc');

function build(config: string, extra: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(tsc, ['-p', join(sdk, config), ...extra], { stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

rmSync(join(sdk, 'dist'), { recursive: true, force: true });
const codes = await Promise.all([
  build('tsconfig.json', []),
  build('tsconfig.cjs.json', native ? ['--moduleResolution', 'bundler'] : []),
]);
const failed = codes.find((code) => code !== 0);
if (failed !== undefined) process.exit(failed);
mkdirSync(join(sdk, 'dist', 'cjs'), { recursive: true });
writeFileSync(join(sdk, 'dist', 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

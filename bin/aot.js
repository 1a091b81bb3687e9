// The server compiled ahead of time (D187).
//
// `node bin/aot.js` (run by `npm install`'s prepare, or `npm run build`) compiles src/ and the sdk/src it imports to
// dist/ (git-ignored) with the project's TypeScript 7 and tsconfig.build.json, and then writes dist/sources.stamp:
// a fingerprint of the sources, taken before the compiler reads them.
//
// `npm start` (bin/start.js), bin/crm and bin/crm.js ask `entry()` which file to run: the compiled one while the
// sources still have that fingerprint, otherwise (a source edited, added, removed or touched since the build, the
// build's settings changed, no build) the .ts source itself, through Node's type stripping. So the compiled code
// never runs stale. The fingerprint hashes the path, mtime and size of every file and directory under src/ and
// sdk/src/ (so an added, removed or renamed file changes it too) and of the two tsconfig files: about 270 stat calls,
// a few milliseconds at a start. Copying the tree without its mtimes (cp without -p) only makes it run the sources.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join('dist', 'sources.stamp');
const trees = ['src', join('sdk', 'src')];
const configs = ['tsconfig.json', 'tsconfig.build.json'];

/** The sources' fingerprint: path, mtime and size of every file and directory the compiled code is made from. */
export function sourcesFingerprint(dir = root) {
  const paths = [...configs];
  for (const tree of trees) {
    paths.push(tree);
    for (const name of readdirSync(join(dir, tree), { recursive: true })) paths.push(join(tree, name));
  }
  const hash = createHash('sha256');
  for (const path of paths.sort()) {
    const stat = statSync(join(dir, path));
    hash.update(`${path}\0${stat.mtimeMs}\0${stat.size}\n`);
  }
  return hash.digest('hex');
}

/** The file to run for a source (`src/main.ts`): its compiled copy in dist/ when that is current, else itself. */
export function entry(source, dir = root) {
  const compiled = join(dir, 'dist', source.replace(/\.ts$/, '.js'));
  try {
    if (existsSync(compiled) && readFileSync(join(dir, STAMP), 'utf8') === sourcesFingerprint(dir)) return compiled;
  } catch {
    // No stamp, or a source tree unreadable: the sources.
  }
  return join(dir, source);
}

/** Imports the module `entry()` chooses for a source of this project (its compiled copy while current). */
export const importEntry = (source) => import(pathToFileURL(entry(source)).href);

/** Compiles src/ to dist/; without the project's TypeScript (an install without dev dependencies) the sources run. */
async function build() {
  const started = performance.now();
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const out = join(root, 'dist');
  rmSync(out, { recursive: true, force: true });
  if (!existsSync(tsc)) {
    process.stdout.write('server: no TypeScript compiler installed, npm start runs the .ts sources\n');
    return;
  }
  const fingerprint = sourcesFingerprint();
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync(tsc, ['-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    process.exit(result.status ?? 1);
  }
  writeFileSync(join(root, STAMP), fingerprint);
  process.stdout.write(`server: compiled src/ to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

// Run as a script (also on a Node older than 24, which has no `import.meta.main`).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await build();

// bin/aot.js's choice between the compiled server in dist/ and the .ts sources (decisions D187), on a scratch tree.
import { mkdirSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entry, sourcesFingerprint } from '../../bin/aot.js';
import { tempDir } from '../helpers/temp-dir.ts';

/** A project with sources, their compiled copies and a stamp that matches them. */
function project(): string {
  const dir = tempDir('crm-aot-test-');
  for (const path of ['src/lib', 'sdk/src', 'dist/src/lib', 'dist/sdk/src'])
    mkdirSync(join(dir, path), { recursive: true });
  for (const file of ['tsconfig.json', 'tsconfig.build.json']) writeFileSync(join(dir, file), '{}');
  for (const file of ['src/main.ts', 'src/lib/ids.ts', 'sdk/src/index.ts'])
    writeFileSync(join(dir, file), 'export {};');
  for (const file of ['dist/src/main.js', 'dist/src/lib/ids.js', 'dist/sdk/src/index.js'])
    writeFileSync(join(dir, file), 'export {};');
  stamp(dir);
  return dir;
}
const stamp = (dir: string) => writeFileSync(join(dir, 'dist', 'sources.stamp'), sourcesFingerprint(dir));

describe('the ahead-of-time entry', () => {
  it('runs the compiled file while the stamp matches the sources', () => {
    const dir = project();
    expect(entry('src/main.ts', dir)).toBe(join(dir, 'dist', 'src', 'main.js'));
    expect(entry('src/main.ts', dir)).toBe(join(dir, 'dist', 'src', 'main.js'));
  });

  it('runs the source when there is no build, no stamp, or no compiled copy of that file', () => {
    const dir = project();
    expect(entry('src/cli/main.ts', dir)).toBe(join(dir, 'src', 'cli', 'main.ts'));
    unlinkSync(join(dir, 'dist', 'sources.stamp'));
    expect(entry('src/main.ts', dir)).toBe(join(dir, 'src', 'main.ts'));
    rmSync(join(dir, 'dist'), { recursive: true });
    expect(entry('src/main.ts', dir)).toBe(join(dir, 'src', 'main.ts'));
  });

  it('runs the sources once one is edited, touched, added, removed or renamed, or a tsconfig changes', () => {
    const dir = project();
    const changes: (() => void)[] = [
      () => writeFileSync(join(dir, 'src/lib/ids.ts'), 'export const edited = 1;'),
      () => utimesSync(join(dir, 'sdk/src/index.ts'), new Date(), new Date(Date.now() + 60_000)),
      () => writeFileSync(join(dir, 'src/lib/new.ts'), 'export {};'),
      () => unlinkSync(join(dir, 'src/lib/new.ts')),
      () => rmSync(join(dir, 'src/lib/ids.ts')),
      () => writeFileSync(join(dir, 'tsconfig.build.json'), '{ "compilerOptions": {} }'),
    ];
    for (const change of changes) {
      stamp(dir);
      expect(entry('src/main.ts', dir)).toBe(join(dir, 'dist', 'src', 'main.js'));
      change();
      expect(entry('src/main.ts', dir), change.toString()).toBe(join(dir, 'src', 'main.ts'));
    }
  });
});

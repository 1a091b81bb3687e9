// A scratch directory for a test file (a data directory, a backup's archive, a project tree), removed after the
// file's tests: importing this registers the clean-up once for the importing file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory under the system's temporary one, named `<prefix>XXXXXX`. */
export function tempDir(prefix = 'crm-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

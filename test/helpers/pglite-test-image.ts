// The PGlite test databases start from one pre-migrated copy instead of an initdb and every migration each (a file's
// harness: ≈ 0.7 s to load the copy against ≈ 2.2 s on this machine; D357). The copy is built once per change of the
// migrations or of PGlite — `globalSetup` below, before any test file runs — and kept under node_modules/.cache,
// named by a hash of what made it. A test database still runs `migrateToLatest` after loading it (it finds nothing
// to do), so a copy that does not match the checkout could only be a missing one: then the test builds its own.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { pgliteVersion } from '../../src/db/pglite-image.ts';
import { projectPath } from '../../src/lib/project-dir.ts';

/** A hash of what makes a migrated database: PGlite's version, the migrations and their runner. */
export function migrationsKey(): string {
  const hash = createHash('sha256').update(pgliteVersion());
  const migrations = projectPath('src', 'db', 'migrations');
  for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
  for (const file of ['migrate.ts', 'citus.ts']) hash.update(readFileSync(projectPath('src', 'db', file)));
  return hash.digest('hex').slice(0, 16);
}

const imagePath = () => projectPath('node_modules', '.cache', 'crm-tests', `pglite-${migrationsKey()}.tgz`);

/** Builds the pre-migrated copy when this checkout has none (vitest's globalSetup: once, before the files run). */
export async function ensureTestImage(): Promise<void> {
  const path = imagePath();
  if (existsSync(path)) return;
  const database = await openDatabase({ dataDir: 'memory://' });
  try {
    await migrateToLatest(database.db);
    const image = await (database.backup as () => Promise<Uint8Array>)();
    mkdirSync(join(path, '..'), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, image);
    renameSync(temporary, path);
  } finally {
    await database.close();
  }
}

let loaded: Uint8Array | null | undefined;

/** The pre-migrated copy, read once per process, or undefined when none was built (a test then runs initdb). */
export function testImage(): Uint8Array | undefined {
  if (loaded === undefined) {
    const path = imagePath();
    loaded = existsSync(path) ? readFileSync(path) : null;
  }
  return loaded ?? undefined;
}

export default ensureTestImage;

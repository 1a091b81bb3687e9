// `npm run db:image`: the pre-migrated embedded database a first start copies instead of running initdb and every
// migration (src/db/pglite-image.ts, decisions D161). Built in memory, written atomically. Not part of `npm install`:
// building it there cost the install more than it saved the start (docs/benchmarks.md, 2026-11-26 first start).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest, migrations } from '../src/db/migrate.ts';
import { type ImageMeta, PGLITE_IMAGE, PGLITE_IMAGE_META, pgliteVersion } from '../src/db/pglite-image.ts';

const started = performance.now();
const database = await openDatabase({ dataDir: 'memory://' });
try {
  await migrateToLatest(database.db);
  const image = await (database.backup as () => Promise<Uint8Array>)();
  const meta: ImageMeta = { pglite: pgliteVersion(), migrations: Object.keys(migrations) };
  mkdirSync(dirname(PGLITE_IMAGE), { recursive: true });
  writeFileSync(`${PGLITE_IMAGE}.tmp`, image);
  renameSync(`${PGLITE_IMAGE}.tmp`, PGLITE_IMAGE);
  writeFileSync(PGLITE_IMAGE_META, `${JSON.stringify(meta)}\n`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(`pre-migrated embedded database: ${PGLITE_IMAGE} (${image.length} bytes, ${seconds} s)\n`);
} finally {
  await database.close();
}

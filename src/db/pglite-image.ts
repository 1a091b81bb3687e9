// The pre-migrated embedded database (D161): `npm run db:image` builds a PGlite database
// with every migration applied (`build/pglite-image.tgz`, with the PGlite version it was made by), and a process
// opening an EMPTY data directory starts from that copy instead of running initdb and the migrations (on a loaded
// machine ≈ 3–6 s to load it against ≈ 11 s of initdb in memory, more on disk). The start still runs the
// migrations, so an image older than the checkout (a pull with a new migration since) only applies the missing
// ones; an image of another PGlite version, or none, falls back to the usual initdb.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { projectPath } from '../lib/project-dir.ts';

export const PGLITE_IMAGE = projectPath('build', 'pglite-image.tgz');
export const PGLITE_IMAGE_META = `${PGLITE_IMAGE}.json`;

export interface ImageMeta {
  pglite: string;
  migrations: string[];
}

/** The installed PGlite's version (the image is a data directory of its PostgreSQL build). */
export function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve('@electric-sql/pglite');
  // …/node_modules/@electric-sql/pglite/dist/index.cjs → …/node_modules/@electric-sql/pglite/package.json
  const root = main.slice(
    0,
    main.lastIndexOf(join('@electric-sql', 'pglite')) + join('@electric-sql', 'pglite').length,
  );
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The image for a data directory that holds no database yet, or undefined (memory, a database there, no image). */
export function firstStartImage(dataDir: string): Uint8Array | undefined {
  if (dataDir.startsWith('memory://') || process.env.CRM_PGLITE_IMAGE === 'off') return undefined;
  if (existsSync(join(dataDir, 'PG_VERSION'))) return undefined;
  // Only our lock file may be there: anything else is someone's, and initdb's own refusal should speak.
  if (existsSync(dataDir) && readdirSync(dataDir).some((name) => name !== 'crm.lock')) return undefined;
  try {
    const meta = JSON.parse(readFileSync(PGLITE_IMAGE_META, 'utf8')) as ImageMeta;
    if (meta.pglite !== pgliteVersion()) return undefined;
    return readFileSync(PGLITE_IMAGE);
  } catch {
    return undefined;
  }
}

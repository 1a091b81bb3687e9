// `crm backup FILE` and `crm restore FILE` for the embedded database (D147). A backup is PGlite's own
// tarball of the data directory (dumpDataDir, gzipped), taken between transactions after a checkpoint. While a
// server holds DATA_DIR, only it can take a consistent copy: the command asks it (GET /admin/v1/backup with
// ADMIN_TOKEN, at CRM_BASE_URL or http://HOST:PORT). A restore fills a DATA_DIR that holds no database yet, with no
// server on it. PostgreSQL (DATABASE_URL) is backed up with pg_dump and restored with pg_restore: both refuse.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { DataDirLockedError, LOCK_FILE } from '../db/data-dir-lock.ts';
import { CommandRefused } from './output.ts';

export const BACKUP_USAGE = `Backups of the embedded database (DATA_DIR; for PostgreSQL use pg_dump and pg_restore):
  backup FILE                   a consistent copy, also while a server runs (it is asked through /admin/v1:
                                set ADMIN_TOKEN, and CRM_BASE_URL unless it listens on http://HOST:PORT)
  restore FILE                  fills DATA_DIR, which must hold no database and no running server`;

function refusePostgres(config: Config, command: 'backup' | 'restore'): void {
  if (!config.databaseUrl) return;
  throw new CommandRefused(
    command === 'backup'
      ? 'DATABASE_URL is set: this database is a PostgreSQL server; back it up with pg_dump (see the README).'
      : 'DATABASE_URL is set: this database is a PostgreSQL server; restore it with pg_restore or psql (see the README).',
  );
}

/** Writes FILE whole or not at all: a partial file never takes the name of a backup. */
function writeAtomically(file: string, bytes: Uint8Array): void {
  const partial = `${file}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, file);
}

async function backupFromServer(config: Config, env: NodeJS.ProcessEnv, holder: DataDirLockedError) {
  if (!config.adminToken) {
    throw new CommandRefused(
      `a server (pid ${holder.pid}) holds ${holder.dataDir}, and only it can take a consistent copy: set ADMIN_TOKEN ` +
        '(and CRM_BASE_URL if it does not listen on http://HOST:PORT) so that `crm backup` can ask it, or stop it.',
    );
  }
  const baseUrl = env.CRM_BASE_URL || `http://${config.host}:${config.port}`;
  let response: Response;
  try {
    response = await fetch(new URL('/admin/v1/backup', baseUrl), {
      headers: { authorization: `Bearer ${config.adminToken}` },
    });
  } catch (error) {
    throw new CommandRefused(
      `a server (pid ${holder.pid}) holds ${holder.dataDir} but does not answer at ${baseUrl} ` +
        `(${(error as Error).message}): set CRM_BASE_URL to its address.`,
    );
  }
  if (response.status !== 200) {
    throw new CommandRefused(
      `the server at ${baseUrl} refused the backup: ${response.status} ${await response.text()}`,
    );
  }
  return new Uint8Array(await response.arrayBuffer());
}

export async function backupCommand(config: Config, file: string, env: NodeJS.ProcessEnv = process.env) {
  refusePostgres(config, 'backup');
  const { openDatabase } = await import('../db/database.ts');
  let archive: Uint8Array;
  try {
    const database = await openDatabase({ dataDir: config.dataDir });
    try {
      if (!database.backup) throw new CommandRefused('this database cannot be backed up by crm');
      archive = await database.backup();
    } finally {
      await database.close();
    }
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    archive = await backupFromServer(config, env, error);
  }
  writeAtomically(resolve(file), archive);
  return { file: resolve(file), bytes: archive.byteLength };
}

export async function restoreCommand(config: Config, file: string) {
  refusePostgres(config, 'restore');
  if (!existsSync(file)) throw new CommandRefused(`${file} does not exist`);
  const archive = new Uint8Array(readFileSync(file));
  const dataDir = resolve(config.dataDir);
  const present = existsSync(dataDir) ? readdirSync(dataDir).filter((name) => name !== LOCK_FILE) : [];
  if (present.length > 0) {
    throw new CommandRefused(
      `${dataDir} is not empty: a restore never overwrites a database. Restore into a new directory ` +
        `(DATA_DIR=./data-restored crm restore ${file}), then point DATA_DIR at it.`,
    );
  }
  const [{ openDatabase }, { migrateToLatest }] = await Promise.all([
    import('../db/database.ts'),
    import('../db/migrate.ts'),
  ]);
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    // Refuses (DataDirLockedError) while a server runs on this directory.
    database = await openDatabase({ dataDir, restoreFrom: archive });
  } catch (error) {
    if (error instanceof DataDirLockedError) throw error;
    // Nothing half-restored stays behind: the directory was empty before.
    for (const name of readdirSync(dataDir))
      if (name !== LOCK_FILE) rmSync(resolve(dataDir, name), { recursive: true });
    throw new CommandRefused(`${file} is not a backup made by crm backup (${(error as Error).message})`);
  }
  try {
    // A backup of an earlier version is brought up to date, as a start would.
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  return { data_dir: dataDir, restored_from: resolve(file) };
}

// Which database a `crm` command opens, said on stderr before it does (D291): the embedded one in
// DATA_DIR (resolved like the server's, `data` in the project by default) or the PostgreSQL server of DATABASE_URL.
// A command that only reads refuses to create a database where there is none.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { CommandRefused } from './output.ts';

/** The file PGlite (like PostgreSQL) writes into a data directory that holds a database. */
const DATABASE_MARKER = 'PG_VERSION';

export function describeDatabase(config: Config): string {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    return `PostgreSQL at ${url.host}${url.pathname} (DATABASE_URL)`;
  }
  return `the embedded database in ${resolve(config.dataDir)} (${config.dataDirFromEnv ? 'DATA_DIR' : 'the default; set DATA_DIR for another'})`;
}

export function announceDatabase(config: Config): void {
  process.stderr.write(`crm: using ${describeDatabase(config)}\n`);
}

/** For a command that reads: no embedded database in DATA_DIR is a refusal, never a new empty database. */
export function refuseNewDatabase(config: Config, command: string): void {
  if (config.databaseUrl) return;
  const dataDir = resolve(config.dataDir);
  if (existsSync(join(dataDir, DATABASE_MARKER))) return;
  throw new CommandRefused(
    `there is no database in ${dataDir}${config.dataDirFromEnv ? ' (DATA_DIR)' : ' (the default DATA_DIR)'}: ` +
      `\`crm ${command}\` reads one and creates none. Set DATA_DIR to the directory your server uses ` +
      '(or DATABASE_URL), or start the server once (npm start) to create it.',
  );
}

// Opens the database: PGlite under DATA_DIR by default, a PostgreSQL server when DATABASE_URL is set.
// Both return the same JS types: int8 and numeric as numbers, timestamptz as Date, date as 'YYYY-MM-DD'.
import { mkdirSync } from 'node:fs';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.ts';
import type { DB } from './schema.ts';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  poolStats(): PoolStats;
  close(): Promise<void>;
}

const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;

function toNumber(value: string): number {
  return Number(value);
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Directory for PGlite; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPGlite(options.dataDir ?? './data');
}

function openPostgres(connectionString: string, max: number): Database {
  const parsers: Record<number, (value: string) => unknown> = {
    [INT8]: toNumber,
    [NUMERIC]: toNumber,
    [DATE]: (value) => value,
  };
  const pool = new pg.Pool({
    connectionString,
    max,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}

async function openPGlite(dataDir: string): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create({
    dataDir,
    extensions: { pg_trgm, btree_gin },
    parsers: {
      [pgliteTypes.INT8]: toNumber,
      [pgliteTypes.NUMERIC]: toNumber,
      [pgliteTypes.DATE]: (value: string) => value,
    },
  });
  const dialect = new PGliteDialect(pglite);
  const db = new Kysely<DB>({ dialect });
  return {
    db,
    kind: 'pglite',
    poolStats: () => dialect.driver.stats(),
    close: () => db.destroy(),
  };
}

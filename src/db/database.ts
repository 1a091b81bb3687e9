// Opens the database: PGlite under DATA_DIR by default, a PostgreSQL server when DATABASE_URL is set.
// Both return the same JS types: int8 and numeric as numbers, timestamptz as Date, date as 'YYYY-MM-DD'.
import { mkdirSync } from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { withDataDirLock } from './data-dir-lock.ts';
import { type DatabaseHealth, steadyHealth, trackHealth } from './health.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { preparingPool } from './prepared-statements.ts';
import type { DB } from './schema.ts';

export type { DatabaseHealth } from './health.ts';
export { isDatabaseUnavailable } from './health.ts';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Database {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  poolStats(): PoolStats;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /** Whether the database answers: false from a connection failure until a probe gets through again. */
  health: DatabaseHealth;
  close(): Promise<void>;
}

function pinger(db: Kysely<DB>) {
  return () =>
    sql`select 1`.execute(db).then(
      () => true,
      () => false,
    );
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
  /** Where connection-level errors are reported (they are handled, never thrown); silent when absent. */
  onError?: (error: Error, where: string) => void;
  /** Milliseconds to wait for a new connection before the request fails (503). */
  connectTimeoutMs?: number;
  /** Milliseconds a statement may run before it fails (server-side, and client-side when the server is silent). */
  statementTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 2000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return withDataDirLock(options.dataDir ?? './data', openPGlite);
}

function openPostgres(connectionString: string, options: DatabaseOptions): Database {
  const parsers: Record<number, (value: string) => unknown> = {
    [INT8]: toNumber,
    [NUMERIC]: toNumber,
    [DATE]: (value) => value,
  };
  const onError = options.onError ?? (() => {});
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? 10,
    // A database that never answers must fail a request fast (503), not hold it until the database returns.
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statementTimeout,
    // The client-side bound covers a server that stopped answering mid-query; a little over the server's own.
    query_timeout: statementTimeout + 1000,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', (error) => onError(error, 'idle client'));
  // A client checked out by a query has no pool listener: a reset during a query would be an unhandled 'error'
  // event. The query itself fails with the same error (and the client, no longer queryable, leaves the pool).
  pool.on('connect', (client) => {
    client.on('error', (error) => onError(error, 'client'));
  });
  // Statements marked with prepareStatement (the hottest reads) are sent by name: planned once per connection.
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  const health = trackHealth(async () => {
    await pool.query('select 1');
  });
  return {
    db,
    kind: 'postgres',
    ping: pinger(db),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    health,
    close: async () => {
      health.stop();
      await db.destroy();
    },
  };
}

async function openPGlite(dataDir: string): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  // Loaded only here: a process on a PostgreSQL server never loads PGlite (≈ 7 MB of RSS, docs/benchmarks.md).
  const [{ PGlite, types: pgliteTypes }, { btree_gin }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/btree_gin'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ]);
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
    ping: pinger(db),
    poolStats: () => dialect.driver.stats(),
    // In-process: there is no connection to lose.
    health: steadyHealth(),
    close: () => db.destroy(),
  };
}

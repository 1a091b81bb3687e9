// Opens the database: PGlite under DATA_DIR by default, a PostgreSQL server when DATABASE_URL is set.
// Both return the same JS types: int8 and numeric as numbers, timestamptz as Date, date as 'YYYY-MM-DD'.
import { mkdirSync } from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { DATABASE_DEFAULTS } from '../config.ts';
import { withDataDirLock } from './data-dir-lock.ts';
import { type DatabaseHealth, steadyHealth, trackHealth } from './health.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { firstStartImage } from './pglite-image.ts';
import { gatedDialect } from './pool-gate.ts';
import { preparingPool } from './prepared-statements.ts';
import type { DB } from './schema.ts';

export type { DatabaseHealth } from './health.ts';
export { isDatabaseUnavailable } from './health.ts';
export { isPoolBusy, PoolBusyError } from './pool-gate.ts';

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
  /**
   * Runs a short statement of the probes (/readyz) outside the pool's queue: on PostgreSQL on a connection of its
   * own, so that a busy pool never reads as an unreachable database (D130).
   */
  probe<R>(statement: string): Promise<R[]>;
  /** Whether the database answers: false from a connection failure until a probe gets through again. */
  health: DatabaseHealth;
  /**
   * LISTEN on a channel on ONE connection of its own (PostgreSQL) or in-process (PGlite), whatever the number of
   * callers above it. `onReconnect` runs after a lost listening connection is back (notifications of the gap are
   * lost). Returns the function that stops listening.
   */
  listen(channel: string, handlers: NotificationHandlers): Promise<() => Promise<void>>;
  /**
   * The embedded database only: a consistent copy of the whole data directory as a gzipped tarball (D147),
   * taken between transactions (no other statement runs while it is made). Absent on PostgreSQL: use pg_dump.
   */
  backup?(): Promise<Uint8Array>;
  close(): Promise<void>;
}

export interface NotificationHandlers {
  onNotification(payload: string): void;
  onReconnect?(): void;
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

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
  /** Milliseconds to wait for a new connection before the request fails (503 `service_unavailable`). */
  connectTimeoutMs?: number;
  /** Milliseconds a request waits for a busy pool's connection before it fails (503 `service_busy`). */
  poolWaitMs?: number;
  /** Requests that may wait for a busy pool's connection; one more fails at once (503 `service_busy`). */
  poolQueue?: number;
  /** Milliseconds a statement may run before it fails (server-side, and client-side when the server is silent). */
  statementTimeoutMs?: number;
  /** PGlite: fill an empty data directory from a backup (`crm restore`); refused when it holds a database. */
  restoreFrom?: Uint8Array;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 2000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

function poolLimits(options: DatabaseOptions, limit: number) {
  return {
    limit,
    waitMs: options.poolWaitMs ?? DATABASE_DEFAULTS.poolWaitMs,
    queue: options.poolQueue ?? DATABASE_DEFAULTS.poolQueue,
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return withDataDirLock(options.dataDir ?? './data', (dataDir) => openPGlite(dataDir, options));
}

function openPostgres(connectionString: string, options: DatabaseOptions): Database {
  const parsers: Record<number, (value: string) => unknown> = {
    [INT8]: toNumber,
    [NUMERIC]: toNumber,
    [DATE]: (value) => value,
  };
  const onError = options.onError ?? (() => {});
  const statementTimeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const poolSize = options.poolSize ?? DATABASE_DEFAULTS.poolSize;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // A database that never answers must fail a request fast (503), not hold it until the database returns.
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statementTimeout,
    // The client-side bound covers a server that stopped answering mid-query; a little over the server's own.
    query_timeout: statementTimeout + 1000,
    // D185: one connection is one backend. A parallel plan let one organization's search take three CPUs through
    // the one connection its bulkhead place allows (quiet organizations' p99 under a flood 181 → 101 ms without
    // it); a statement of this product reads a bounded part of one organization, where parallelism gains little.
    options: [process.env.PGOPTIONS, '-c max_parallel_workers_per_gather=0'].filter(Boolean).join(' '),
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
  // Statements run through executePrepared (the hottest read, the workers' polls, the fan-out's steps) are sent by
  // name: parsed once per connection.
  // Every connection is taken through the gate (pool-gate.ts): the pool is never asked for more than it has.
  const { dialect, gate } = gatedDialect(
    new PostgresDialect({ pool: preparingPool(pool) }),
    poolLimits(options, poolSize),
  );
  const db = new Kysely<DB>({ dialect });
  // The probes' own connection (the health probe, /readyz): a busy pool leaves it free, so "busy" never reads as
  // "unreachable"; its connect timeout is the same fast one.
  const probePool = new pg.Pool({
    connectionString,
    max: 1,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1000,
    idleTimeoutMillis: 30_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  probePool.on('error', (error) => onError(error, 'probe client'));
  const health = trackHealth(async () => {
    await probePool.query('select 1');
  });
  return {
    db,
    kind: 'postgres',
    ping: pinger(db),
    probe: async <R>(statement: string) => (await probePool.query<R & pg.QueryResultRow>(statement)).rows,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: gate.waiting + pool.waitingCount }),
    health,
    listen: (channel, handlers) => listenPostgres(connectionString, channel, handlers, onError),
    close: async () => {
      health.stop();
      await Promise.all([db.destroy(), probePool.end()]);
    },
  };
}

/** A dedicated client outside the pool that LISTENs, and connects again (after 1 s) when its connection is lost. */
async function listenPostgres(
  connectionString: string,
  channel: string,
  handlers: NotificationHandlers,
  onError: (error: Error, where: string) => void,
): Promise<() => Promise<void>> {
  if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (again: boolean): Promise<void> => {
    const next = new pg.Client({
      connectionString,
      keepAlive: true,
      connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS,
    });
    const lost = () => {
      if (stopped || client !== next) return;
      client = undefined;
      retry = setTimeout(() => void connect(true).catch(() => lost()), 1000);
      retry.unref();
    };
    client = next;
    next.on('error', (error) => {
      onError(error, 'listener');
      lost();
    });
    next.on('end', lost);
    next.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) handlers.onNotification(message.payload);
    });
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
    } catch (error) {
      if (!again) throw error;
      lost();
      return;
    }
    if (again) handlers.onReconnect?.();
  };
  await connect(false);
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = undefined;
    await current?.end().catch(() => {});
  };
}

async function openPGlite(dataDir: string, options: DatabaseOptions): Promise<Database> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  // An empty directory starts from the pre-migrated image `npm install` built (pglite-image.ts, decisions D161).
  const restoreFrom = options.restoreFrom ?? firstStartImage(dataDir);
  // Loaded only here: a process on a PostgreSQL server never loads PGlite (≈ 7 MB of RSS, decisions D28).
  const [{ PGlite, types: pgliteTypes }, { btree_gin }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/btree_gin'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ]);
  const pglite = await PGlite.create({
    dataDir,
    ...(restoreFrom ? { loadDataDir: new Blob([restoreFrom as Uint8Array<ArrayBuffer>]) } : {}),
    extensions: { pg_trgm, btree_gin },
    parsers: {
      [pgliteTypes.INT8]: toNumber,
      [pgliteTypes.NUMERIC]: toNumber,
      [pgliteTypes.DATE]: (value: string) => value,
    },
  });
  const sessions = new PGliteDialect(pglite);
  // One session: requests queue for its lease, a bounded time (pool-gate.ts), like a pool of one connection.
  const { dialect, gate } = gatedDialect(sessions, poolLimits(options, 1));
  const db = new Kysely<DB>({ dialect });
  return {
    db,
    kind: 'pglite',
    ping: pinger(db),
    // In-process: a probe's read-only statement runs between the statements of whichever request holds the
    // session (PGlite runs one statement at a time), not after its whole transaction.
    probe: async <R>(statement: string) => (await pglite.query<R>(statement)).rows,
    poolStats: () => {
      const stats = sessions.driver.stats();
      return { ...stats, waiting: stats.waiting + gate.waiting };
    },
    // In-process: there is no connection to lose.
    health: steadyHealth(),
    listen: async (channel, handlers) => {
      if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
      return pglite.listen(channel, (payload) => handlers.onNotification(payload));
    },
    // Inside a lease of the one session (pglite-dialect.ts): no transaction is open while the files are copied, and
    // the checkpoint first writes every change to the data files, so the copy opens without replaying WAL.
    backup: () =>
      db.connection().execute(async (connection) => {
        await sql`checkpoint`.execute(connection);
        return new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer());
      }),
    close: () => db.destroy(),
  };
}

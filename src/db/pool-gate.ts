// The queue in front of the connection pool (D129): a request waits for a connection a bounded time in
// a queue of bounded length, then fails with PoolBusyError, which the API answers 503 `service_busy` with
// Retry-After. Busy is not down: the database's health is not touched, and /readyz stays green. The pool underneath
// is never asked for more connections than it has, so its own connect timeout measures only reaching the database
// ("cannot be reached": the fast 503 `service_unavailable`, decisions D24).
import type {
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  TransactionSettings,
} from 'kysely';
import { BoundedSemaphore, BusyError, type SemaphoreLimits } from '../lib/bounded-semaphore.ts';

/** Every connection is in use and the wait for one ran out (or its queue is full). */
export class PoolBusyError extends BusyError {}

/** True for a request that found the pool busy (ours, or node-postgres's own queue timing out). */
export function isPoolBusy(error: unknown): boolean {
  if (error instanceof PoolBusyError) return true;
  // node-postgres's pool says this when its own queue waited past connectionTimeoutMillis: busy, not unreachable.
  return error instanceof Error && error.message === 'timeout exceeded when trying to connect';
}

export interface PoolGate {
  readonly held: number;
  readonly waiting: number;
}

class GatedDriver implements Driver {
  readonly #inner: Driver;
  readonly #gate: BoundedSemaphore;
  savepoint?: Driver['savepoint'];
  rollbackToSavepoint?: Driver['rollbackToSavepoint'];
  releaseSavepoint?: Driver['releaseSavepoint'];

  constructor(inner: Driver, gate: BoundedSemaphore) {
    this.#inner = inner;
    this.#gate = gate;
    if (inner.savepoint) this.savepoint = inner.savepoint.bind(inner);
    if (inner.rollbackToSavepoint) this.rollbackToSavepoint = inner.rollbackToSavepoint.bind(inner);
    if (inner.releaseSavepoint) this.releaseSavepoint = inner.releaseSavepoint.bind(inner);
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      await this.#gate.acquire();
    } catch (error) {
      if (error instanceof BusyError) throw new PoolBusyError('database pool', error.reason);
      throw error;
    }
    try {
      return await this.#inner.acquireConnection();
    } catch (error) {
      this.#gate.release();
      throw error;
    }
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#gate.release();
    }
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

/** `dialect` with every connection taken through a bounded queue of `limits.limit` places (the pool's size). */
export function gatedDialect(dialect: Dialect, limits: SemaphoreLimits): { dialect: Dialect; gate: PoolGate } {
  const gate = new BoundedSemaphore('database pool', limits);
  return {
    gate,
    dialect: {
      createAdapter: (): DialectAdapter => dialect.createAdapter(),
      createDriver: (): Driver => new GatedDriver(dialect.createDriver(), gate),
      createQueryCompiler: (): QueryCompiler => dialect.createQueryCompiler(),
      // biome-ignore lint/suspicious/noExplicitAny: Kysely's introspector takes any database shape.
      createIntrospector: (db: Kysely<any>): DatabaseIntrospector => dialect.createIntrospector(db),
    },
  };
}

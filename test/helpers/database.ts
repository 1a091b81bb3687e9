// Each test file gets its own database: a fresh PostgreSQL database on the server, or a fresh in-memory PGlite.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { type Database, type DatabaseOptions, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { migrationsKey, testImage } from './pglite-test-image.ts';
import { delay, waitUntil } from './wait.ts';

export type TestDatabaseKind = 'postgres' | 'pglite';

export function testDatabaseKind(): TestDatabaseKind {
  return process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/**
 * The `citus` project (D347): the database is a Citus coordinator with workers. A test of one PostgreSQL's own
 * machinery (its planner's plans and buffers, pg_stat, transaction ids, locks seen in pg_locks) says so and skips
 * here with `describe.skipIf(onCitus)`, its reason beside it.
 */
export const onCitus = Boolean(process.env.TEST_CITUS_WORKERS);

export interface TestDatabase {
  database: Database;
  /** Connection string of the PostgreSQL test database (undefined on PGlite). */
  url: string | undefined;
  drop(): Promise<void>;
}

/** One statement on a server's database (a short session of its own). */
async function onServer(serverUrl: string, statement: string, database?: string): Promise<void> {
  const url = new URL(serverUrl);
  if (database) url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * The Citus project (TEST_CITUS_WORKERS set, TEST_POSTGRES_URL the coordinator): a database is made on every node,
 * with the extension, and the coordinator is told its own address and the workers' (as `../shared/citus/cluster.sh
 * createdb` does), so that migrations distribute the tables over the workers (D316). D347: the registrations of
 * files running at once take turns (an advisory lock in the coordinator's own database): each one replays the
 * `postgres` role on the workers, and two at once fail there with "tuple concurrently updated". A test database's
 * tables have CITUS_TEST_SHARDS shards each (4: two per worker, so two organizations still land on different shards
 * and nodes), not the cluster's 32: the migrations of a file take a third of the time; routing does not depend on it.
 */
const CITUS_TEST_SHARDS = Number(process.env.TEST_CITUS_SHARDS ?? 4);
const CITUS_REGISTRATION_LOCK = 4_170_347;

async function citusNodes(serverUrl: string, name: string): Promise<string[]> {
  const workers = (process.env.TEST_CITUS_WORKERS ?? '').split(',').filter(Boolean);
  const coordinator = new URL(serverUrl);
  const nodes = [serverUrl, ...workers.map((hostPort) => `postgres://postgres@${hostPort}/postgres`)];
  for (const node of nodes) await onServer(node, `create database ${name}`);
  for (const node of nodes) await onServer(node, 'create extension citus', name);
  await onServer(serverUrl, `alter database ${name} set citus.shard_count = ${CITUS_TEST_SHARDS}`);
  const turn = new pg.Client({ connectionString: serverUrl });
  await turn.connect();
  try {
    await turn.query('select pg_advisory_lock($1)', [CITUS_REGISTRATION_LOCK]);
    await onServer(
      serverUrl,
      `select citus_set_coordinator_host('${coordinator.hostname}', ${coordinator.port})`,
      name,
    );
    for (const hostPort of workers) {
      const [host, port] = hostPort.split(':');
      await onServer(serverUrl, `select citus_add_node('${host}', ${port})`, name);
    }
  } finally {
    await turn.end();
  }
  return nodes;
}

/**
 * Drops a test database on one server. `with (force)` ends its sessions, but on Citus the other nodes' maintenance
 * daemons connect to it again at once (deadlock detection, recovery of prepared transactions), and on a loaded machine
 * the drop then fails with "is being accessed by other users" (D351): it is tried again, up to five times.
 */
async function dropOn(serverUrl: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await onServer(serverUrl, `drop database if exists ${name} with (force)`);
      return;
    } catch (error) {
      if (attempt >= 5 || !/being accessed by other users/.test(String(error))) throw error;
      await delay(1000 * attempt);
    }
  }
}

/**
 * D357: on one PostgreSQL a test database is a copy of a migrated template (`create database … template`, ≈ 60 ms
 * against ≈ 380 ms of migrations here), made once per change of the migrations by the first file that needs it,
 * under an advisory lock, and named by the same hash as PGlite's copy. Nobody connects to the template after it is
 * made (a copy fails while someone does); templates of other migrations are dropped a day after they were made. Not on Citus: a database there
 * is made on every node and its tables distributed.
 */
const TEMPLATE_LOCK = 4_170_357;
let template: Promise<string> | undefined;

function migratedTemplate(serverUrl: string): Promise<string> {
  template ??= (async () => {
    const name = `crm_test_tpl_${migrationsKey()}`;
    const server = new pg.Client({ connectionString: serverUrl });
    await server.connect();
    try {
      await server.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      const { rows } = await server.query<{ datname: string }>(
        `select datname from pg_database where datname like 'crm\\_test\\_tpl\\_%'`,
      );
      if (rows.some((row) => row.datname === name)) return name;
      // Another checkout's template may be in use right now (a helper's worktree): only day-old ones go.
      const { rows: stale } = await server.query<{ datname: string }>(
        `select datname from pg_database where datname like 'crm\\_test\\_tpl\\_%'
           and (pg_stat_file('base/' || oid || '/PG_VERSION')).modification < now() - interval '1 day'`,
      );
      for (const row of stale) await server.query(`drop database if exists ${row.datname} with (force)`);
      const building = `${name}_building`;
      await server.query(`drop database if exists ${building} with (force)`);
      await server.query(`create database ${building}`);
      const url = new URL(serverUrl);
      url.pathname = `/${building}`;
      const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
      try {
        await migrateToLatest(database.db);
      } finally {
        await database.close();
      }
      await server.query(`alter database ${building} rename to ${name}`);
      return name;
    } finally {
      await server.end();
    }
  })();
  template.catch(() => {
    template = undefined;
  });
  return template;
}

/** Creates an empty PostgreSQL database on the test server and returns its URL and a way to drop it. */
export async function createPostgresDatabase(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = process.env.TEST_POSTGRES_URL;
  if (!serverUrl) throw new Error('PostgreSQL is not reachable (TEST_POSTGRES_URL is empty)');
  const name = `crm_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  let nodes = [serverUrl];
  if (process.env.TEST_CITUS_WORKERS) nodes = await citusNodes(serverUrl, name);
  else
    await onServer(
      serverUrl,
      `create database ${name}${options.migrated ? ` template ${await migratedTemplate(serverUrl)}` : ''}`,
    );
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      for (const node of nodes) await dropOn(node, name);
    },
  };
}

/**
 * On Citus a test database's pool waits 10 s for a connection, not the product's 2 s (D351): each statement is a hop
 * from the coordinator to a worker, and the creates of one organization's contacts take turns at its version row
 * (D315), so fifty concurrent creates of one organization outlast 2 s on a loaded machine and answer 503
 * `service_busy`, which is not what their tests check. Tests of "busy" set their own wait.
 */
const CITUS_POOL_WAIT_MS = 10_000;

/** The pool's settings of a test database (a small pool makes "busy" easy to reach). */
export type TestPoolOptions = Pick<DatabaseOptions, 'poolSize' | 'poolWaitMs' | 'poolQueue'>;

export async function createTestDatabase(
  kind: TestDatabaseKind = testDatabaseKind(),
  pool: TestPoolOptions = {},
): Promise<TestDatabase> {
  if (kind === 'postgres') {
    const created = await createPostgresDatabase({ migrated: true });
    const database = await openDatabase({
      databaseUrl: created.url,
      poolSize: 20,
      ...(onCitus ? { poolWaitMs: CITUS_POOL_WAIT_MS } : {}),
      ...pool,
    });
    try {
      await migrateToLatest(database.db);
    } catch (error) {
      await database.close();
      await created.drop();
      throw error;
    }
    return {
      database,
      url: created.url,
      drop: async () => {
        await database.close();
        await created.drop();
      },
    };
  }
  const image = testImage();
  const database = await openDatabase({ dataDir: 'memory://', ...pool, ...(image ? { restoreFrom: image } : {}) });
  await migrateToLatest(database.db);
  return { database, url: undefined, drop: () => database.close() };
}

/**
 * A session of its own on the harness's PostgreSQL database (to hold a lock, or read pg_locks, while the product
 * works): the caller ends it.
 */
export async function controlClient(database: Database): Promise<pg.Client> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(database.db);
  const url = new URL(process.env.TEST_POSTGRES_URL as string);
  url.pathname = `/${rows[0]?.name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  return client;
}

/**
 * How many sessions of this database wait for a lock (a row's, a table's, an advisory one) now, read through `client`
 * (a control client, which may be inside its own transaction: its statistics snapshot is cleared first).
 */
export async function sessionsWaitingForALock(client: pg.Client): Promise<number> {
  await client.query('select pg_stat_clear_snapshot()');
  const { rows } = await client.query(LOCK_WAITS_SQL);
  return rows[0].n;
}

/**
 * The sessions of this database waiting for a lock, as `n`: on Citus a row lock is taken, and waited for, on the
 * worker holding the shard, which the coordinator's `pg_stat_activity` does not show; `citus_stat_activity` shows
 * every node's backends of the database.
 */
export const LOCK_WAITS_SQL = `select count(*)::int as n from ${onCitus ? 'citus_stat_activity' : 'pg_stat_activity'}
  where datname = current_database() and wait_event_type = 'Lock'`;

/** Waits until a session of this database waits for a lock (the work under test reached the lock it must wait for). */
export async function untilASessionWaitsForALock(client: pg.Client, message = 'a session waiting for a lock') {
  await waitUntil(async () => (await sessionsWaitingForALock(client)) > 0, { intervalMs: 10, message });
}

/**
 * Runs `work` to its end and fails as soon as a session of this database waits for a lock before then: the state
 * "it never waited", read while it runs, not a guess of how long a wait would take.
 */
export async function withoutWaitingForALock<T>(client: pg.Client, work: Promise<T>, what = 'the work'): Promise<T> {
  let settled = false;
  const done = work.finally(() => {
    settled = true;
  });
  while (!settled) {
    if ((await sessionsWaitingForALock(client)) > 0 && !settled) throw new Error(`${what} waited for a lock`);
    await Promise.race([done.catch(() => undefined), delay(10)]);
  }
  return done;
}

// `npm run bench` (fan-out part): throughput of 1 and 2 `crm worker` processes with the sandbox platform and the
// per-number cap lifted, on PostgreSQL, each beside its baseline measured in the same run; and a worker's peak RSS
// through a 100,000-recipient fan-out.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_broadcasts is made on it)
//   BENCH_DATABASE_NAME  another name for that database (two benches on one server, or a worker left running)
//   BENCH_FANOUT         recipients per throughput run, default 20000 (BENCH_QUICK=1: 20000 too: shorter runs weigh
//                        start-up skew and the idle poll too much for the scaling row)
//   BENCH_RSS_FANOUT     recipients of the memory run, default 100000; BENCH_QUICK=1 skips that run and reports the
//                        1-worker run's peak instead (the row says how many recipients it saw)
//   BENCH_WORKER_ROOT    a checkout whose `src/cli/main.ts worker` to run instead of this one (before/after comparisons
//                        on the same database server; its migrations must match)
//   FANOUT_*             the worker's fan-out settings (FANOUT_BATCHES_IN_FLIGHT, FANOUT_BATCH_SIZE, …) pass through
//   BENCH_WORKER_NODE_OPTIONS  NODE_OPTIONS of the worker processes (heap flags beyond bin/crm's own)
//   BENCH_AUTO_EXPLAIN   a sample rate (0.02): the bench database's sessions log that share of their statements with
//                        EXPLAIN (ANALYZE, BUFFERS, WAL) to the server's log (auto_explain), to read the hot plans,
//                        with their triggers' times and the statements the triggers run
//   BENCH_AUTO_EXPLAIN_NESTED=0  without the statements the triggers run: logging each one inflates its trigger's
//                        time (a foreign key's check 77 µs logged, 8 µs not)
//   BENCH_ENDPOINT=1     the organization has a webhook endpoint taking every event (a receiver in this process
//                        answering 200 at once): each message also stores its event and a delivery, which the
//                        workers deliver during the run, as an integrator's would
//   BENCH_STATEMENTS=1   after the 1-worker run, print its statements' time per message (plan and execution, calls,
//                        WAL) from pg_stat_statements, reset before the run (the extension must be loaded)
// Baseline: a bare SKIP LOCKED loop (bench/bare-queue.ts) on the same database, with as many processes, doing the
// minimum per message. Messages/s counts from the first claim to the last recorded answer as the database saw them
// (worker start-up excluded); the hand-off latency is each recipient's claim → recorded answer (reached_at →
// sent_at). Bench workers run the sandbox without SANDBOX_AUTO_REPORTS_MS: no delivery reports come back.
// WAL bytes per message: `pg_stat_reset_shared('wal')` before each run, `pg_stat_wal.wal_bytes`
// after, over the messages of the run. The counter is the server's: other databases' writes meanwhile count too
// (run it on a quiet server). After the 1-worker run, each hot table's updates (and how many were HOT) and each of
// its indexes' scans (`pg_stat_user_indexes`) are printed to stderr.
// Lock waits: `pg_stat_activity` sampled every 100 ms on a connection of its own during each run; of the samples of
// the bench database's active backends (not the sampler's, not idle in transaction), the share waiting on a
// heavyweight lock (`wait_event_type = 'Lock'`), with the most frequent waits' events and statements to stderr.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { bareQueueRate } from './bare-queue-rate.ts';
import { benchApp, SECRETS_KEY } from './bench-app.ts';
import { benchServer, freshDatabase, log } from './bench-database.ts';
import { cpuSecondsOf } from './measure.ts';
import { recordSummary, type SummaryRow } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const workerRoot = process.env.BENCH_WORKER_ROOT ?? root;
const quick = process.env.BENCH_QUICK === '1';
const fanoutSize = Number(process.env.BENCH_FANOUT ?? 20_000);
const rssSize = Number(process.env.BENCH_RSS_FANOUT ?? 100_000);
const ADMIN = 'bench-admin';
const PATH = 'fan-out, sandbox, cap lifted';
const databaseName = process.env.BENCH_DATABASE_NAME ?? 'crm_bench_broadcasts';

let phoneSequence = 0;
const nextPhones = (count: number) =>
  Array.from({ length: count }, () => {
    phoneSequence += 1;
    const number = 6_000_000_000 + phoneSequence * 7; // never ends in the sandbox's 0404/0500 by construction
    return `+1${number}`;
  }).filter((phone) => !phone.endsWith('0404') && !phone.endsWith('0500'));

function startWorker(databaseUrl: string): ChildProcess {
  // Started as the product starts it: `bin/crm` (the pinned Node, with the server's heap flags: bin/node-flags.js).
  const child = spawn('bin/crm', ['worker'], {
    cwd: workerRoot,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: ADMIN,
      FANOUT_PER_NUMBER_PER_SECOND: '0',
      WORKER_POLL_MS: '20',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      SECRETS_KEY,
      // FANOUT_* settings of the bench's own environment reach the workers (the batch, group and in-flight knobs).
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('FANOUT_'))),
      ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

/** Resident set size of a process in KiB (0 when it is gone). */
function rssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) || 0;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds used so far by the PostgreSQL server's processes when it runs on this machine (every `postgres`
 * process: backends, WAL writer, checkpointer), so that the work per message is read beside the throughput, which
 * moves with the machine's load much more than the work does. Processes that ended between two readings drop out:
 * read it around a run whose connections stay open.
 */
function postgresCpuSeconds(): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') seconds.set(pid, cpuSecondsOf(pid));
    } catch {}
  }
  return seconds;
}
const cpuSince = (before: Map<string, number>) =>
  [...postgresCpuSeconds()].reduce((sum, [pid, now]) => sum + now - (before.get(pid) ?? 0), 0);

type Queryable = { query: (text: string) => Promise<{ rows: Record<string, unknown>[] }> };
/** Zeroes the server's WAL counter (for WAL bytes per message). */
const resetWal = (client: Queryable) => client.query(`select pg_stat_reset_shared('wal')`);
/** WAL bytes the server wrote since resetWal. */
const walSince = async (client: Queryable) =>
  Number((await client.query('select wal_bytes::float8 as bytes from pg_stat_wal')).rows[0]?.bytes);

/** Messages per second of the bare loop with 1 and 2 processes, each over `size` fresh rows; WAL bytes per message. */
async function bareBaseline(databaseUrl: string, size: number): Promise<{ rates: number[]; walPerMessage: number[] }> {
  const runs = [await bareQueueRate(databaseUrl, size, 1), await bareQueueRate(databaseUrl, size, 2)];
  return { rates: runs.map((run) => run.rate), walPerMessage: runs.map((run) => run.walPerMessage) };
}

/** Updates (HOT among them) of the fan-out's hot tables and the scans of each of their indexes, to stderr. */
async function printTableStats(client: Queryable): Promise<void> {
  const tables = `('broadcast_recipients', 'contacts', 'messages', 'conversations', 'messaging_accounts', 'broadcasts')`;
  const updates = await client.query(
    `select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relname in ${tables}
     order by relname`,
  );
  for (const row of updates.rows) {
    log(`  ${row.relname}: ${row.n_tup_ins} inserts, ${row.n_tup_upd} updates, ${row.n_tup_hot_upd} of them HOT`);
  }
  const indexes = await client.query(
    `select relname, indexrelname, idx_scan, pg_relation_size(indexrelid) as bytes from pg_stat_user_indexes
     where relname in ${tables} order by relname, indexrelname`,
  );
  for (const row of indexes.rows)
    log(`    ${row.relname}.${row.indexrelname}: ${row.idx_scan} scans, ${row.bytes} bytes`);
}

/** The run's statements by their share of the database's time, per message (BENCH_STATEMENTS=1), to stderr. */
async function printStatements(client: Queryable, messages: number): Promise<void> {
  const top = await client.query(
    `select calls, total_plan_time + total_exec_time as ms, total_plan_time as plan_ms, wal_bytes,
       regexp_replace(left(query, 160), '\\s+', ' ', 'g') as query
     from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
       and toplevel order by 2 desc limit 15`,
  );
  for (const row of top.rows) {
    const perMessage = (Number(row.ms) * 1000) / messages;
    log(
      `  ${perMessage.toFixed(0)} µs/msg (plan ${((Number(row.plan_ms) * 1000) / messages).toFixed(0)}), ${row.calls} calls, ${(Number(row.wal_bytes) / messages).toFixed(0)} WAL B/msg: ${row.query}`,
    );
  }
}

/**
 * Samples `pg_stat_activity` every 100 ms on its own connection: the bench database's active
 * backends, and those of them waiting on a heavyweight lock. `stop()` answers the counts and the top waits.
 */
async function lockWaitSampler(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let active = 0;
  let waiting = 0;
  const waits = new Map<string, number>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ wait_event_type: string | null; wait_event: string | null; query: string }>(
        `select wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as query
         from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      );
      active += rows.length;
      for (const row of rows.filter((row) => row.wait_event_type === 'Lock')) {
        waiting += 1;
        const key = `${row.wait_event}: ${row.query}`;
        waits.set(key, (waits.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await client.end();
      const top = [...waits].sort((a, b) => b[1] - a[1]).slice(0, 5);
      return { active, waiting, top };
    },
  };
}

interface FanoutRun {
  /** Samples of active backends of the bench database, and of them those waiting on a lock (lockWaitSampler). */
  activeSamples: number;
  lockWaitSamples: number;
  walPerMessage: number;
  /** CPU µs per message of the worker processes and of the database server's processes. */
  workerCpuUs: number;
  postgresCpuUs: number;
  workers: number;
  recipients: number;
  seconds: number;
  rate: number;
  p50: number;
  p99: number;
  peakRssMb: number;
}

/** An integrator's receiver that takes every delivery at once (BENCH_ENDPOINT=1). */
async function webhookReceiver() {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return server;
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase(databaseName);
  const sampled = process.env.BENCH_AUTO_EXPLAIN;
  if (sampled) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const settings = {
      session_preload_libraries: 'auto_explain',
      'auto_explain.log_min_duration': '0',
      'auto_explain.log_analyze': 'on',
      'auto_explain.log_buffers': 'on',
      'auto_explain.log_wal': 'on',
      'auto_explain.log_triggers': 'on',
      'auto_explain.log_nested_statements': process.env.BENCH_AUTO_EXPLAIN_NESTED === '0' ? 'off' : 'on',
      'auto_explain.sample_rate': String(Number(sampled)),
    };
    for (const [name, value] of Object.entries(settings)) {
      await client.query(`alter database ${databaseName} set ${name} = '${value}'`);
    }
    await client.end();
  }
  const database = await openDatabase({ databaseUrl, poolSize: 20 });
  await migrateToLatest(database.db);
  const app = await benchApp(database, ADMIN);
  const call = async (method: string, url: string, body: unknown, key: string) => {
    const response = await app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    if (response.statusCode >= 400) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };
  const org = await call('POST', '/admin/v1/organizations', { name: 'Bench' }, ADMIN);
  const { key } = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  await call(
    'POST',
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1e9, messaging_limit_24h: 10_000_000, numbers: [{ phone: '+15550100001' }] },
    ADMIN,
  );
  const template = await call(
    'POST',
    '/v1/templates',
    {
      name: 'bench_notice',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hi, your code is {{1}}', example: { body_text: [['1']] } }],
    },
    key,
  );
  await call('POST', `/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' }, ADMIN);
  const receiver = process.env.BENCH_ENDPOINT === '1' ? await webhookReceiver() : undefined;
  if (receiver) {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await call('POST', '/v1/webhook-endpoints', { url, events: ['*'] }, key);
  }

  /** Queues `size` recipients through the API (sends of 100, 4 in flight); answers how many are queued. */
  async function queue(size: number): Promise<number> {
    let next = 0;
    const sender = async () => {
      for (; next < size; ) {
        next += 100;
        const recipients = nextPhones(100).map((phone) => ({ phone, variables: { 'body.1': '42' } }));
        await call('POST', `/v1/templates/${template.id}/send`, { recipients }, key);
      }
    };
    await Promise.all(Array.from({ length: 4 }, sender));
    const row = await database.db
      .selectFrom('broadcast_recipients')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'queued')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  const benchDb: Queryable = {
    query: async (text) => ({ rows: (await sql.raw(text).execute(database.db)).rows as Record<string, unknown>[] }),
  };

  async function fanout(workers: number, size: number): Promise<FanoutRun> {
    const queued = await queue(size);
    log(`fan-out of ${queued} recipients with ${workers} worker process(es)`);
    if (process.env.BENCH_ANALYZE === '1') await sql`analyze`.execute(database.db);
    await sql`checkpoint`.execute(database.db);
    await sql`select pg_stat_reset()`.execute(database.db);
    await resetWal(benchDb);
    const statements = process.env.BENCH_STATEMENTS === '1';
    if (statements) {
      await sql`create extension if not exists pg_stat_statements`.execute(database.db);
      await sql`select pg_stat_statements_reset()`.execute(database.db);
    }
    const runStarted = new Date();
    const sampler = await lockWaitSampler(databaseUrl);
    const children = Array.from({ length: workers }, () => startWorker(databaseUrl));
    // Work per message: the workers' CPU and the database server's from the first claim seen (a poll every 50 ms
    // from the workers' spawn) to the queue's end. The workers' start-up (≈ 0.8 s of CPU each) is left out. Until
    // 11-27 (seventh session) the counters were read 3 s after the spawn, when the workers had been handing off for
    // about 2 s of a 5 s run: the CPU per message printed before then was low by up to two fifths.
    let postgresBefore: Map<string, number> | undefined;
    let workersBefore: number[] = [];
    let peakRss = 0;
    for (;;) {
      // A worker that died (say, on a migration its checkout does not know) would leave this loop waiting for ever.
      const dead = children.find((child) => child.exitCode !== null || child.signalCode !== null);
      if (dead) throw new Error(`a worker exited (${dead.exitCode ?? dead.signalCode}) before the queue was empty`);
      for (const child of children) peakRss = Math.max(peakRss, rssOf(child.pid));
      // Whether any is left, each status read from its partial index (claim_idx, leased_idx): one `status in (…)`
      // was planned as a scan of the whole table, which with a year of history read 10 M rows a second beside the
      // workers; counting them read every queued row (13 ms a poll at 20,000, 6 % of a CPU taken from the workers).
      const state = await sql<{ queued: boolean; sending: boolean }>`select
          exists (select 1 from broadcast_recipients where status = 'queued') as queued,
          exists (select 1 from broadcast_recipients where status = 'sending') as sending`.execute(database.db);
      const { queued: queuedLeft, sending } = state.rows[0] ?? { queued: false, sending: false };
      if (postgresBefore === undefined && (sending || !queuedLeft)) {
        postgresBefore = postgresCpuSeconds();
        workersBefore = children.map((child) => cpuSecondsOf(child.pid ?? 0));
      }
      if (!queuedLeft && !sending) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const workerCpu = children.reduce(
      (sum, child, i) => sum + cpuSecondsOf(child.pid ?? 0) - (workersBefore[i] ?? 0),
      0,
    );
    const postgresCpu = cpuSince(postgresBefore ?? new Map());
    for (const child of children) child.kill('SIGTERM');
    const locks = await sampler.stop();
    log(
      `  lock waits: ${locks.waiting} of ${locks.active} active backend samples (${((100 * locks.waiting) / Math.max(1, locks.active)).toFixed(1)} %)`,
    );
    for (const [what, count] of locks.top) log(`    ${count}× ${what}`);
    const wal = await walSince(benchDb);
    if (workers === 1) await printTableStats(benchDb);
    if (statements) await printStatements(benchDb, queued);
    // From the first claim to the last recorded answer, as the database saw them (worker start-up excluded); each
    // recipient's claim → recorded answer.
    const span = await sql<{ seconds: number; p50: number; p99: number }>`
      select extract(epoch from max(sent_at) - min(reached_at))::float8 as seconds,
        percentile_cont(0.5) within group (order by extract(epoch from sent_at - reached_at))::float8 * 1000 as p50,
        percentile_cont(0.99) within group (order by extract(epoch from sent_at - reached_at))::float8 * 1000 as p99
      from broadcast_recipients where reached_at >= ${runStarted} and sent_at is not null`.execute(database.db);
    const { seconds, p50, p99 } = span.rows[0] as { seconds: number; p50: number; p99: number };
    return {
      workers,
      recipients: queued,
      seconds,
      rate: queued / seconds,
      p50,
      p99,
      peakRssMb: peakRss / 1024,
      activeSamples: locks.active,
      lockWaitSamples: locks.waiting,
      walPerMessage: wal / queued,
      workerCpuUs: (workerCpu * 1e6) / queued,
      postgresCpuUs: (postgresCpu * 1e6) / queued,
    };
  }

  const { rates: bare, walPerMessage: bareWal } = await bareBaseline(databaseUrl, fanoutSize);
  const runs = [await fanout(1, fanoutSize), await fanout(2, fanoutSize)];
  const memory = quick ? (runs[0] as FanoutRun) : await fanout(1, rssSize);
  const [one, two] = runs as [FanoutRun, FanoutRun];
  const scaling = two.rate / one.rate;
  const flags = process.env.BENCH_WORKER_NODE_OPTIONS;
  const label = `${workerRoot === root ? '' : ` (worker from ${workerRoot})`}${flags ? ` (NODE_OPTIONS ${flags})` : ''}`;

  const rows: SummaryRow[] = runs.map((run) => {
    const baseline = bare[run.workers - 1] as number;
    const ratio = run.rate / baseline;
    return {
      path: PATH,
      row: `${run.workers} worker${run.workers > 1 ? 's' : ''}, ${run.recipients} recipients${label}`,
      baseline: `bare SKIP LOCKED loop, ${run.workers} process${run.workers > 1 ? 'es' : ''}: ${baseline.toFixed(0)} msg/s`,
      value: `${run.rate.toFixed(0)} msg/s`,
      ratio,
      p50Ms: run.p50,
      p99Ms: run.p99,
      rssMb: run.peakRssMb,
      target: run.workers === 1 ? '>= 0.25x bare' : '>= 0.25x bare (2 processes)',
      met: ratio >= 0.25,
    };
  });
  rows.push(
    {
      path: PATH,
      row: `scaling, 2 workers vs 1${label}`,
      baseline: `1 worker, same run: ${one.rate.toFixed(0)} msg/s`,
      value: `${two.rate.toFixed(0)} msg/s`,
      ratio: scaling,
      p50Ms: null,
      p99Ms: null,
      rssMb: null,
      target: '>= 1.8x 1 worker',
      met: scaling >= 1.8,
    },
    {
      path: PATH,
      row: `worker peak RSS, ${memory.recipients} recipients${quick ? ' (quick mode: the 1-worker run)' : ''}${label}`,
      baseline: '—',
      value: `${memory.peakRssMb.toFixed(0)} MB`,
      ratio: null,
      p50Ms: memory.p50,
      p99Ms: memory.p99,
      rssMb: memory.peakRssMb,
      target: '<= 200 MB',
      met: memory.peakRssMb <= 200,
    },
  );
  recordSummary(rows);

  const line = (run: FanoutRun, baseline: number) =>
    `| ${run.workers} | ${run.recipients} | ${run.seconds.toFixed(1)} | ${run.rate.toFixed(0)} | ${baseline.toFixed(0)} | ` +
    `${(run.rate / baseline).toFixed(2)}× | ${(run.rate / one.rate).toFixed(2)}× | ${run.p50.toFixed(0)} | ` +
    `${run.p99.toFixed(0)} | ${run.peakRssMb.toFixed(0)} | ${run.walPerMessage.toFixed(0)} | ` +
    `${(bareWal[run.workers - 1] as number).toFixed(0)} | ${run.workerCpuUs.toFixed(0)} | ${run.postgresCpuUs.toFixed(0)} | ` +
    `${((100 * run.lockWaitSamples) / Math.max(1, run.activeSamples)).toFixed(1)} % of ${run.activeSamples} |`;
  process.stdout.write(
    [
      '',
      `Load average at the end: ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
      '',
      `Fan-out with the sandbox platform and the per-number cap lifted (worker processes on PostgreSQL at ${benchServer.host})${label}:`,
      '',
      '| Workers | Recipients | Seconds | Messages/s | Bare SKIP LOCKED loop, same processes (msg/s) | Ratio to bare | Scaling vs 1 worker | Hand-off p50 (ms) | Hand-off p99 (ms) | Peak worker RSS (MB) | WAL bytes/msg | Bare loop WAL bytes/msg | Worker CPU µs/msg | PostgreSQL CPU µs/msg | Lock waits (share of active backend samples) |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...runs.map((run) => line(run, bare[run.workers - 1] as number)),
      ...(quick ? [] : [line(memory, bare[0] as number)]),
      '',
    ].join('\n'),
  );
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

// `npm run bench` (second part): send-request latency with 100 recipients, and fan-out throughput of 1 and 2
// `crm worker` processes with the sandbox platform and the per-number cap lifted, on PostgreSQL.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_broadcasts is made on it)
//   BENCH_SENDS          send requests to time, default 100 (each with 100 recipients)
//   BENCH_FANOUT         recipients per fan-out run, default 5000 (BENCH_QUICK=1: 2000)
// Each fan-out row is measured beside its baseline in the same run: a bare SKIP LOCKED loop (bench/bare-queue.ts) on
// the same database, with as many processes; the worker's peak RSS is sampled while it runs.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { benchServer, freshDatabase, log, unlimited } from './bench-database.ts';
import { measure, table } from './measure.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = benchServer;
const sends = Number(process.env.BENCH_SENDS ?? 100);
const fanoutSize = Number(process.env.BENCH_FANOUT ?? (process.env.BENCH_QUICK === '1' ? 2000 : 5000));
const ADMIN = 'bench-admin';

let phoneSequence = 0;
const nextPhones = (count: number) =>
  Array.from({ length: count }, () => {
    phoneSequence += 1;
    const number = 6_000_000_000 + phoneSequence * 7; // never ends in the sandbox's 0404/0500 by construction
    return `+1${number}`;
  }).filter((phone) => !phone.endsWith('0404') && !phone.endsWith('0500'));

function startWorker(databaseUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/cli.ts', 'worker'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: ADMIN,
      FANOUT_PER_NUMBER_PER_SECOND: '0',
      WORKER_POLL_MS: '20',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve) => setTimeout(() => resolve(child), 3000));
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

/** Messages per second of the bare loop with 1 and 2 processes, each over `size` fresh rows. */
async function bareBaseline(databaseUrl: string, size: number): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const rates: number[] = [];
  try {
    await client.query(
      `create table if not exists bare_queue (id bigserial primary key, status text not null, payload jsonb,
        sent_at timestamptz)`,
    );
    for (const processes of [1, 2]) {
      await client.query('truncate bare_queue');
      await client.query(
        `insert into bare_queue (status, payload) select 'queued', '{"to":"+15550000000"}' from generate_series(1, $1)`,
        [size],
      );
      const started = Date.now();
      await Promise.all(
        Array.from(
          { length: processes },
          () =>
            new Promise<void>((resolve, reject) => {
              const child = spawn(process.execPath, ['bench/bare-queue.ts', databaseUrl], {
                cwd: root,
                stdio: 'inherit',
              });
              child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bare loop exited ${code}`))));
            }),
        ),
      );
      // From the first message marked to the last, as the database saw them (process start-up excluded).
      const span = await client.query(
        'select extract(epoch from max(sent_at) - min(sent_at)) as seconds, count(*) as n from bare_queue',
      );
      const seconds = Number(span.rows[0].seconds) || (Date.now() - started) / 1000;
      rates.push(Number(span.rows[0].n) / seconds);
    }
  } finally {
    await client.end();
  }
  return rates;
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_broadcasts');
  const database = await openDatabase({ databaseUrl, poolSize: 20 });
  await migrateToLatest(database.db);
  const app = await buildApp(wire({ database, rateLimitStore: unlimited, adminToken: ADMIN }));
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
  const sendBody = () => ({ recipients: nextPhones(100).map((phone) => ({ phone, variables: { 'body.1': '42' } })) });

  log(`timing ${sends} send requests of 100 recipients`);
  const latency = [
    await measure('send, 100 new recipients (one at a time)', sends, 1, async () => {
      await call('POST', `/v1/templates/${template.id}/send`, sendBody(), key);
    }),
    await measure('send, 100 new recipients (4 in flight)', sends, 4, async () => {
      await call('POST', `/v1/templates/${template.id}/send`, sendBody(), key);
    }),
  ];
  // The queue those sends made is not part of the fan-out runs below.
  await database.db.updateTable('broadcasts').set({ stored_status: 'cancelled' }).execute();
  await database.db
    .updateTable('broadcast_recipients')
    .set({ status: 'cancelled' })
    .where('status', '=', 'queued')
    .execute();

  const throughput: string[] = [];
  const bare = await bareBaseline(databaseUrl, fanoutSize);
  const rates: number[] = [];
  for (const workers of [1, 2]) {
    for (let sent = 0; sent < fanoutSize; sent += 100) {
      await call('POST', `/v1/templates/${template.id}/send`, sendBody(), key);
    }
    const queued = Number(
      (
        await database.db
          .selectFrom('broadcast_recipients')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '=', 'queued')
          .executeTakeFirstOrThrow()
      ).n,
    );
    log(`fan-out of ${queued} recipients with ${workers} worker process(es)`);
    const runStarted = new Date();
    const children = await Promise.all(Array.from({ length: workers }, () => startWorker(databaseUrl)));
    let peakRss = 0;
    for (;;) {
      for (const child of children) peakRss = Math.max(peakRss, rssOf(child.pid));
      const left = Number(
        (
          await database.db
            .selectFrom('broadcast_recipients')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('status', 'in', ['queued', 'sending'])
            .executeTakeFirstOrThrow()
        ).n,
      );
      if (left === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const child of children) child.kill('SIGTERM');
    // From the first hand-off to the last recorded answer, as the database saw them (worker start-up excluded).
    const span = await database.db
      .selectFrom('broadcast_recipients')
      .select((eb) => [eb.fn.min('reached_at').as('first'), eb.fn.max('sent_at').as('last')])
      .where('reached_at', '>=', runStarted)
      .executeTakeFirstOrThrow();
    const seconds = (new Date(span.last as Date).getTime() - new Date(span.first as Date).getTime()) / 1000;
    const rate = queued / seconds;
    rates.push(rate);
    const baseline = bare[workers - 1] as number;
    throughput.push(
      `| ${workers} | ${queued} | ${seconds.toFixed(1)} | ${rate.toFixed(0)} | ${baseline.toFixed(0)} | ${(rate / baseline).toFixed(2)}× | ${workers === 1 ? '1.00×' : `${(rate / (rates[0] as number)).toFixed(2)}×`} | ${(peakRss / 1024).toFixed(0)} |`,
    );
  }

  process.stdout.write(
    [
      '',
      `Send requests on PostgreSQL at ${server.host} (in-process API, sandbox platform):`,
      '',
      table(latency),
      '',
      'Fan-out with the sandbox platform and the per-number cap lifted (worker processes on one PostgreSQL):',
      '',
      '| Workers | Recipients | Seconds | Messages/s | Bare SKIP LOCKED loop, same processes (msg/s) | Ratio to bare | Scaling vs 1 worker | Peak worker RSS (MB) |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...throughput,
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

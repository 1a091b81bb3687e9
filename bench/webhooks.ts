// `npm run bench:webhooks`: webhook deliveries per second to a local receiver, and the lag from an event's
// recording to its first delivery (p50/p99), with 1 and 2 `crm worker` processes on PostgreSQL. The baseline, in
// the same run: the same receiver driven directly by a keep-alive HTTP client at the same concurrency, with the
// same body (a payload of the backlog) and the same headers.
// Events come from a backlog recorded before the workers start (the drain rate; with the CPU a delivery of the
// workers, from /proc/<pid>/stat, and of the bench database's PostgreSQL backends, between the first and the last
// arrival), from contact creates (POST /v1/contacts, 8 in flight), and from a campaign (sends of 100 recipients, 4 in
// flight, handed off by the same workers with the sandbox platform): one `broadcast.recipient.updated` per recipient
// and one `broadcast.finished` per broadcast, recorded by the fan-out's own transactions and delivered while it
// runs; its row says how long after the last hand-off the last event arrived (target: 60 s at 100,000).
//
//   BENCH_DATABASE_URL     server to use (a fresh database crm_bench_webhooks is made on it)
//   BENCH_WEBHOOK_BACKLOG  events of the backlog, default 20000 (BENCH_QUICK=1: 10000)
//   BENCH_EVENTS           contact creates per run, default 3000
//   BENCH_WEBHOOK_FANOUT   recipients of the campaign, default 100000 (BENCH_QUICK=1: 10000; a multiple of 100)
//   BENCH_WORKER_NODE_OPTIONS  NODE_OPTIONS of the workers (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
//   BENCH_WEBHOOK_WORKERS  the worker counts to run, default `1,2`
//   BENCH_WEBHOOK_BACKLOG_ONLY=1  only the backlog rows (no contact creates, no campaign): for alternating pairs
//   BENCH_COMPARE_ROOT     another checkout (e.g. main) whose `crm worker` also drains each backlog, in turn with
//                          this one's, on the same database (its migrations must be this checkout's)
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { recordEvents } from '../src/modules/events/events.ts';
import { signature } from '../src/modules/webhook-endpoints/delivery-http.ts';
import { benchApp, SECRETS_KEY } from './bench-app.ts';
import { benchServer, freshDatabase, log } from './bench-database.ts';
import { cpuMeter, rssSampler } from './measure.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// The API (in this process) seals endpoint secrets and the `crm worker` processes open them: one keyring for all.
const server = benchServer;
const quick = process.env.BENCH_QUICK === '1';
const eventCount = Number(process.env.BENCH_EVENTS ?? 3000);
const backlogSize = Number(process.env.BENCH_WEBHOOK_BACKLOG ?? (quick ? 10_000 : 20_000));
const fanoutSize = Math.max(
  100,
  Math.floor(Number(process.env.BENCH_WEBHOOK_FANOUT ?? (quick ? 10_000 : 100_000)) / 100) * 100,
);
/** decisions §11 goal of this path: a campaign's events all delivered within this long of its last hand-off. */
const CAMPAIGN_TARGET_S = 60;
const CONCURRENCY = 32;
const ADMIN = 'bench-admin';

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);

/** The integrator's receiver: answers 200 at once and notes when each event id first arrived. */
async function startReceiver() {
  const firstSeen = new Map<string, { at: number; createdAt: number }>();
  let requests = 0;
  const receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests++;
      const id = String(request.headers['webhook-id'] ?? '');
      if (id && !firstSeen.has(id)) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at?: string };
        firstSeen.set(id, { at: Date.now(), createdAt: body.created_at ? Date.parse(body.created_at) : Date.now() });
      }
      response.writeHead(200).end('ok');
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    firstSeen,
    requests: () => requests,
    reset() {
      firstSeen.clear();
      requests = 0;
    },
    close: () => new Promise<void>((resolve) => receiver.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Baseline: the receiver driven directly, CONCURRENCY requests in flight over keep-alive connections, each with
 * `body` and the headers a delivery carries (signed once: the wire's bytes, not the product's work).
 */
async function baseline(receiver: Receiver, total: number, body: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const timestamp = Math.floor(Date.now() / 1000);
  const signed = signature(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, 'evt_base', timestamp, body);
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const request = http.request(
        `${receiver.url}/baseline`,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'crm-messaging-webhooks/1',
            'webhook-id': `evt_base_${i}`,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signed,
            'content-length': String(Buffer.byteLength(body)),
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            latencies.push(performance.now() - t0);
            resolve();
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) await one(next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const compareRoot = process.env.BENCH_COMPARE_ROOT;

function startWorker(databaseUrl: string, checkout = root): ChildProcess {
  // Started as the product starts it: `bin/crm` (the pinned Node, the compiled dist/ while it is current, the server's
  // heap flags of bin/node-flags.js), so that the RSS column is a `crm worker`'s. Until 11-28 it ran the .ts sources
  // with node's default heap, which the column showed as 271–299 MB.
  const child = spawn('bin/crm', ['worker'], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: ADMIN,
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      SECRETS_KEY,
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      WORKER_POLL_MS: '20',
      FANOUT_PER_NUMBER_PER_SECOND: '0',
      LOG_LEVEL: 'warn',
      ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_webhooks');
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
  const receiver = await startReceiver();
  const org = await call('POST', '/admin/v1/organizations', { name: 'Bench' }, ADMIN);
  const { key } = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  await call('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/crm`, events: ['*'] }, key);

  // The fan-out's organization: an account that can pay for everything, an approved template, and an endpoint
  // that takes the fan-out's events (the contacts its sends create are not counted).
  const sender = await call('POST', '/admin/v1/organizations', { name: 'Fan-out' }, ADMIN);
  const senderKey = (await call('POST', `/admin/v1/organizations/${sender.id}/api-keys`, {}, ADMIN)).key;
  await call(
    'POST',
    `/admin/v1/organizations/${sender.id}/messaging-accounts`,
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
    senderKey,
  );
  await call('POST', `/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' }, ADMIN);
  await call(
    'POST',
    '/v1/webhook-endpoints',
    { url: `${receiver.url}/fanout`, events: ['broadcast.recipient.updated', 'broadcast.finished'] },
    senderKey,
  );
  let phoneCounter = 0;
  /** Distinct phones, never ending in the sandbox's failure suffixes 0404 and 0500. */
  const nextPhones = (count: number) => {
    const list: string[] = [];
    while (list.length < count) {
      const phone = `+1555${String(++phoneCounter).padStart(7, '0')}`;
      if (!phone.endsWith('0404') && !phone.endsWith('0500')) list.push(phone);
    }
    return list;
  };

  /** The backlog: contact events recorded 500 per call for the first organization's endpoint. */
  const recordBacklog = async () => {
    for (let done = 0; done < backlogSize; done += 500) {
      const batch = Array.from({ length: Math.min(500, backlogSize - done) }, (_, i) => ({
        type: 'contact.deleted' as const,
        data: { id: `ct_bench_${String(done + i).padStart(8, '0')}` },
      }));
      await database.db.transaction().execute((trx) => recordEvents(trx, org.id, batch));
    }
  };
  /** Drivers make events while the workers run; each resolves with how many it made. */
  const drivers: Record<string, { campaign: boolean; drive: () => Promise<number> }> = {
    'contact creates (8 in flight)': {
      campaign: false,
      drive: async () => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < eventCount) {
              const i = next++;
              await call(
                'POST',
                '/v1/contacts',
                { first_name: `Bench ${i}`, email: `bench${Date.now()}_${i}@x.io` },
                key,
              );
            }
          }),
        );
        return eventCount;
      },
    },
    [`a ${fanoutSize}-recipient campaign (sends of 100, 4 in flight)`]: {
      campaign: true,
      drive: async () => {
        const broadcasts = fanoutSize / 100;
        let next = 0;
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            while (next < broadcasts) {
              next++;
              const recipients = nextPhones(100).map((phone) => ({ phone, variables: { 'body.1': '42' } }));
              await call('POST', `/v1/templates/${template.id}/send`, { recipients }, senderKey);
            }
          }),
        );
        // One event per recipient (`sent`) and one `broadcast.finished` per broadcast.
        return fanoutSize + broadcasts;
      },
    },
  };

  // What recordEvents costs a change when the organization has no subscribed endpoint (the fan-out calls it for
  // every recipient move), against the bare round trip of `select 1`, in the same run.
  const quiet = await call('POST', '/admin/v1/organizations', { name: 'No endpoints' }, ADMIN);
  const timeCalls = async (work: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t0 = performance.now();
      await work();
      samples.push(performance.now() - t0);
    }
    return samples.sort((a, b) => a - b);
  };
  const bareRoundTrip = await timeCalls(() => sql`select 1`.execute(database.db));
  const quietRecord = await timeCalls(() =>
    recordEvents(database.db, quiet.id, [{ type: 'contact.deleted', data: { id: 'ct_x' } }]),
  );
  const costRows = [
    ['`select 1` (bare round trip)', bareRoundTrip],
    ['`recordEvents`, 1 event, no endpoint', quietRecord],
  ].map(
    ([name, samples]) =>
      `| ${name} | ${((percentile(samples as number[], 50) * 1000) | 0).toString()} | ${((percentile(samples as number[], 99) * 1000) | 0).toString()} | ${(percentile(samples as number[], 50) / percentile(bareRoundTrip, 50)).toFixed(2)} |`,
  );

  // The bench database's backends (the workers' and this process's pool, idle during a backlog's drain).
  const backends = async () =>
    (
      await sql<{ pid: number }>`select pid from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`.execute(database.db)
    ).rows.map((row) => row.pid);

  // The bare client's body: a payload of the backlog, byte for byte the size the workers send.
  await recordBacklog();
  const sample = await sql<{ payload: string }>`select payload from webhook_events where org_id = ${org.id} limit 1`
    .execute(database.db)
    .then((result) => result.rows[0]?.payload ?? '{}');
  log(`baseline: ${backlogSize} requests straight to the receiver (${Buffer.byteLength(sample)} bytes each)`);
  const bare = await baseline(receiver, backlogSize, sample);
  const rows: string[] = [
    `| bare receiver (keep-alive client, ${CONCURRENCY} in flight, the same body and headers) | — | ${backlogSize} | ${bare.perSecond.toFixed(0)} | — | — | ${bare.p50.toFixed(1)} | ${bare.p99.toFixed(1)} | — |`,
  ];
  const backlogRates: number[] = [];
  let campaignMet = true;
  let campaignWorst = 0;
  const workerCounts = (process.env.BENCH_WEBHOOK_WORKERS ?? '1,2').split(',').map(Number);
  const backlogOnly = process.env.BENCH_WEBHOOK_BACKLOG_ONLY === '1';
  for (const workers of workerCounts) {
    // The backlog: recorded before the workers start; its drain rate is the delivery capacity.
    for (const checkout of compareRoot ? [root, compareRoot, root, compareRoot] : [root]) {
      receiver.reset();
      if (workers > 1 || checkout !== root || backlogRates.length > 0) await recordBacklog();
      const label = checkout === root ? '' : ` (${compareRoot})`;
      log(`backlog of ${backlogSize} contact events, ${workers} worker process(es)${label}`);
      const children = Array.from({ length: workers }, () => startWorker(databaseUrl, checkout));
      const samplers = children.map((child) => rssSampler(child.pid));
      const workerCpu = cpuMeter(() => children.map((child) => child.pid ?? 0));
      const databaseCpu = cpuMeter(backends);
      while (receiver.firstSeen.size === 0) await sleep(5);
      const before = receiver.firstSeen.size;
      await Promise.all([workerCpu.start(), databaseCpu.start()]);
      while (receiver.firstSeen.size < backlogSize) await sleep(10);
      const [workerSeconds, databaseSeconds] = await Promise.all([workerCpu.since(), databaseCpu.since()]);
      const measured = Math.max(1, backlogSize - before);
      const seen = [...receiver.firstSeen.values()];
      const seconds = Math.max(0.001, (Math.max(...seen.map((e) => e.at)) - Math.min(...seen.map((e) => e.at))) / 1000);
      const rate = backlogSize / seconds;
      if (checkout === root) backlogRates.push(rate);
      const rss = samplers.map((sampler) => (sampler.peak() / (1024 * 1024)).toFixed(0)).join(' + ');
      for (const sampler of samplers) sampler.stop();
      for (const child of children) child.kill('SIGTERM');
      rows.push(
        `| backlog: contact events recorded 500 per call${label} | ${workers} | ${backlogSize} | ${rate.toFixed(0)} (${(rate / bare.perSecond).toFixed(2)}×) | ${((workerSeconds * 1e6) / measured).toFixed(0)} | ${((databaseSeconds * 1e6) / measured).toFixed(0)} | — | — | ${rss} |`,
      );
      log(
        `  ${rate.toFixed(0)}/s (${receiver.requests()} requests), worker ${((workerSeconds * 1e6) / measured).toFixed(0)} µs a delivery, load ${loadavg()[0]?.toFixed(1)}`,
      );
      await sleep(1000);
    }
    for (const [name, { campaign, drive }] of backlogOnly ? [] : Object.entries(drivers)) {
      receiver.reset();
      log(`${name}, ${workers} worker process(es)`);
      const children = Array.from({ length: workers }, () => startWorker(databaseUrl));
      const samplers = children.map((child) => rssSampler(child.pid));
      await sleep(3000);
      const started = Date.now();
      const expected = await drive();
      while (receiver.firstSeen.size < expected) await sleep(20);
      const seen = [...receiver.firstSeen.values()];
      const first = Math.min(...seen.map((entry) => entry.at));
      const last = Math.max(...seen.map((entry) => entry.at));
      const lags = seen.map((entry) => entry.at - entry.createdAt).sort((a, b) => a - b);
      // The campaign's last event is recorded at its last hand-off (or its last broadcast's end, just after).
      const afterLast = (last - Math.max(...seen.map((entry) => entry.createdAt))) / 1000;
      if (campaign) {
        campaignWorst = Math.max(campaignWorst, afterLast);
        campaignMet &&= afterLast <= CAMPAIGN_TARGET_S;
      }
      const rss = samplers.map((sampler) => (sampler.peak() / (1024 * 1024)).toFixed(0)).join(' + ');
      for (const sampler of samplers) sampler.stop();
      for (const child of children) child.kill('SIGTERM');
      const seconds = Math.max(0.001, (last - first) / 1000);
      rows.push(
        `| ${name}${campaign ? `: all delivered ${afterLast.toFixed(1)} s after the last hand-off` : ''} | ${workers} | ${expected} | ${(expected / seconds).toFixed(0)} | — | — | ${percentile(lags, 50).toFixed(0)} | ${percentile(lags, 99).toFixed(0)} | ${rss} |`,
      );
      log(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s (${receiver.requests()} requests)`);
      await sleep(1000);
    }
  }

  // This checkout's first backlog with one worker and its first with two.
  const perCount = backlogRates.length / 2;
  const one = backlogRates[0] ?? 0;
  const two = backlogRates[perCount] ?? 0;
  recordSummary([
    {
      path: 'webhook deliveries from a backlog, one endpoint',
      row: `${backlogSize} events, 1 worker (2 workers: ${two.toFixed(0)}/s, ${(two / Math.max(1, one)).toFixed(2)}× one)`,
      baseline: `bare keep-alive client, ${CONCURRENCY} in flight: ${bare.perSecond.toFixed(0)} req/s`,
      value: `${one.toFixed(0)} deliveries/s`,
      ratio: one / bare.perSecond,
      p50Ms: null,
      p99Ms: null,
      rssMb: null,
      target: '≥ 0.5× bare; 2 workers ≥ 1 worker',
      met: one / bare.perSecond >= 0.5 && two >= one,
    },
    {
      path: 'webhook deliveries behind a campaign',
      row: `${fanoutSize} recipients, 1 and 2 workers`,
      baseline: '—',
      value: `all delivered ${campaignWorst.toFixed(1)} s after the last hand-off`,
      ratio: null,
      p50Ms: null,
      p99Ms: null,
      rssMb: null,
      target: `≤ ${CAMPAIGN_TARGET_S} s`,
      met: campaignMet,
    },
  ]);

  process.stdout.write(
    [
      '',
      `Webhook deliveries on PostgreSQL at ${server.host} to a receiver on 127.0.0.1 (answers 200 at once):`,
      '',
      '| Events from | Workers | Events | Deliveries/s | Worker CPU µs a delivery | PostgreSQL CPU µs a delivery | Lag p50 ms | Lag p99 ms | Worker peak RSS MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'Deliveries/s: events over the time from the first to the last first arrival at the receiver (for the backlog,',
      'its ratio to the bare client). CPU a delivery (backlog rows): user + system time of the `crm worker` processes',
      '(/proc/<pid>/stat) and of the bench database’s PostgreSQL backends, from the first arrival to the last, over',
      'the deliveries in between. Lag: from the event’s `created_at` (recorded in the change’s transaction) to its',
      'first arrival. Bare receiver row: requests/s and latency p50/p99 (in the lag columns) of the same receiver',
      'without the product.',
      '',
      'Cost of recording an event for an organization without subscribed endpoints (2000 sequential calls):',
      '',
      '| Call | p50 µs | p99 µs | p50 ratio to `select 1` |',
      '|---|---:|---:|---:|',
      ...costRows,
      '',
    ].join('\n'),
  );
  await receiver.close();
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

// `npm run bench:webhooks`: webhook deliveries per second to a local receiver, and the lag from an event's
// recording to its first delivery (p50/p99), with 1 and 2 `crm worker` processes on PostgreSQL. The baseline, in
// the same run: the same receiver driven directly by a keep-alive HTTP client at the same concurrency.
// Events come from drivers: contact creates (POST /v1/contacts, 8 in flight), and a 10,000-recipient fan-out
// (sends of 100 recipients, 4 in flight, handed off by the same workers with the sandbox platform): one
// `broadcast.recipient.updated` per recipient and one `broadcast.finished` per broadcast, recorded by the fan-out's
// own transactions and delivered while it runs.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_webhooks is made on it)
//   BENCH_EVENTS         contact events per run, default 3000
//   BENCH_WEBHOOK_FANOUT recipients of the fan-out run, default 10000 (a multiple of 100)
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { recordEvents } from '../src/modules/events/events.ts';
import { benchApp, SECRETS_KEY } from './bench-app.ts';
import { benchServer, freshDatabase, log } from './bench-database.ts';
import { rssSampler } from './measure.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// The API (in this process) seals endpoint secrets and the `crm worker` processes open them: one keyring for all.
const server = benchServer;
const eventCount = Number(process.env.BENCH_EVENTS ?? 3000);
const fanoutSize = Math.max(100, Math.floor(Number(process.env.BENCH_WEBHOOK_FANOUT ?? 10_000) / 100) * 100);
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

/** Baseline: the receiver driven directly, CONCURRENCY requests in flight over keep-alive connections. */
async function baseline(receiver: Receiver, total: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ id: 'evt_x', type: 'contact.created', created_at: new Date().toISOString(), data: {} });
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const request = http.request(
        `${receiver.url}/baseline`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'webhook-id': `evt_base_${i}` } },
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

function startWorker(databaseUrl: string): Promise<ChildProcess> {
  // Started as the product starts it: `bin/crm` (the pinned Node, the compiled dist/ while it is current, the server's
  // heap flags of bin/node-flags.js), so that the RSS column is a `crm worker`'s. Until 11-28 it ran the .ts sources
  // with node's default heap, which the column showed as 271–299 MB.
  const child = spawn('bin/crm', ['worker'], {
    cwd: root,
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
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return new Promise((resolve) => setTimeout(() => resolve(child), 3000));
}

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

  /**
   * Drivers make events; each resolves with how many it made. `backlog` ones run before the workers start (the
   * queue's drain rate: the delivery capacity); the others run while the workers deliver (the lag as events come).
   */
  const backlog: Record<string, () => Promise<number>> = {
    'backlog: contact events recorded 500 per call': async () => {
      for (let done = 0; done < eventCount; done += 500) {
        const batch = Array.from({ length: Math.min(500, eventCount - done) }, (_, i) => ({
          type: 'contact.deleted' as const,
          data: { id: `ct_bench_${done + i}` },
        }));
        await database.db.transaction().execute((trx) => recordEvents(trx, org.id, batch));
      }
      return eventCount;
    },
  };
  const drivers: Record<string, () => Promise<number>> = {
    'contact creates (8 in flight)': async () => {
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
    [`a ${fanoutSize}-recipient fan-out (sends of 100, 4 in flight)`]: async () => {
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

  log(`baseline: ${eventCount} requests straight to the receiver`);
  const bare = await baseline(receiver, eventCount);
  const rows: string[] = [
    `| bare receiver (keep-alive client, ${CONCURRENCY} in flight) | — | ${eventCount} | ${bare.perSecond.toFixed(0)} | ${bare.p50.toFixed(1)} | ${bare.p99.toFixed(1)} | — |`,
  ];
  for (const workers of [1, 2]) {
    const scenarios = [
      ...Object.entries(backlog).map(([name, drive]) => ({ name, drive, before: true })),
      ...Object.entries(drivers).map(([name, drive]) => ({ name, drive, before: false })),
    ];
    for (const { name, drive, before } of scenarios) {
      receiver.reset();
      log(`${name}: ${eventCount} events, ${workers} worker process(es)`);
      const made = before ? await drive() : 0;
      const children = await Promise.all(Array.from({ length: workers }, () => startWorker(databaseUrl)));
      const samplers = children.map((child) => rssSampler(child.pid));
      const started = Date.now();
      const expected = before ? made : await drive();
      while (receiver.firstSeen.size < expected) await new Promise((resolve) => setTimeout(resolve, 20));
      const seen = [...receiver.firstSeen.values()];
      const first = Math.min(...seen.map((entry) => entry.at));
      const last = Math.max(...seen.map((entry) => entry.at));
      const lags = seen.map((entry) => entry.at - entry.createdAt).sort((a, b) => a - b);
      const rss = samplers.map((sampler) => (sampler.peak() / (1024 * 1024)).toFixed(0)).join(' + ');
      for (const sampler of samplers) sampler.stop();
      for (const child of children) child.kill('SIGTERM');
      const seconds = Math.max(0.001, (last - first) / 1000);
      rows.push(
        `| ${name} | ${workers} | ${expected} | ${(expected / seconds).toFixed(0)} | ${before ? '—' : percentile(lags, 50).toFixed(0)} | ${before ? '—' : percentile(lags, 99).toFixed(0)} | ${rss} |`,
      );
      log(`  done in ${((Date.now() - started) / 1000).toFixed(1)} s (${receiver.requests()} requests)`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  process.stdout.write(
    [
      '',
      `Webhook deliveries on PostgreSQL at ${server.host} to a receiver on 127.0.0.1 (answers 200 at once):`,
      '',
      '| Events from | Workers | Events | Deliveries/s | Lag p50 ms | Lag p99 ms | Worker peak RSS MB |',
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      'Deliveries/s: events over the time from the first to the last first arrival at the receiver. Lag: from the',
      'event’s `created_at` (recorded in the change’s transaction) to its first arrival, for events made while the',
      'workers run (a backlog’s lag is its queueing time, so it is not shown).',
      'Bare receiver row: requests/s and request latency p50/p99 of the same receiver without the product.',
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

// `node bench/webhook-lag.ts` (D99, D229): how late a `message.received` reaches an endpoint while an
// import floods the same endpoint with `contact.created`. An organization with one `["*"]` endpoint imports
// BENCH_LAG_CONTACTS contacts (100,000; 10,000 with BENCH_QUICK=1) through POST /v1/contacts/batch-upsert (100 per
// call, 4 in flight, as the CLI does); meanwhile an inbound message arrives every 250 ms through the sandbox. One
// `crm worker` process with default settings delivers; the receiver is a default Node http server answering each
// request after 5 ms. Lag: from the event's `created_at` to its arrival. Target: p99 <= 2 s.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_webhook_lag is made on it)
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { benchApp, SECRETS_KEY } from './bench-app.ts';
import { freshDatabase, log } from './bench-database.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
// The API (in this process) seals endpoint secrets and the `crm worker` processes open them: one keyring for all.
const quick = process.env.BENCH_QUICK === '1';
const contacts = Number(process.env.BENCH_LAG_CONTACTS ?? (quick ? 10_000 : 100_000));
const ADMIN = 'bench-admin';
const ANSWER_MS = 5;
const MESSAGE_EVERY_MS = 250;
const TARGET_P99_MS = 2000;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);

/** The integrator's receiver: Node's defaults, an answer after 5 ms; notes each event's first arrival. */
async function startReceiver() {
  const lags = new Map<string, { type: string; lagMs: number }>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id: string;
        type: string;
        created_at: string;
      };
      if (!lags.has(event.id))
        lags.set(event.id, { type: event.type, lagMs: Date.now() - Date.parse(event.created_at) });
      setTimeout(() => response.writeHead(200).end('ok'), ANSWER_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    lags,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function startWorker(databaseUrl: string): ChildProcess {
  return spawn(process.execPath, [...process.execArgv, 'src/cli/main.ts', 'worker'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: ADMIN,
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
      SECRETS_KEY,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_webhook_lag');
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
  const org = await call('POST', '/admin/v1/organizations', { name: 'Lag' }, ADMIN);
  const { key } = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  const account = await call(
    'POST',
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1000, numbers: [{ phone: '+15550100001' }] },
    ADMIN,
  );
  await call('POST', '/v1/webhook-endpoints', { url: `${receiver.url}/crm`, events: ['*'] }, key);
  const worker = startWorker(databaseUrl);

  log(`importing ${contacts} contacts while a message arrives every ${MESSAGE_EVERY_MS} ms`);
  const started = Date.now();
  let importing = true;
  let messages = 0;
  const inbound = (async () => {
    while (importing) {
      const from = `+1666${String(++messages).padStart(7, '0')}`;
      await call('POST', '/admin/v1/sandbox/inbound', { channel_id: account.numbers[0].id, from, text: 'hi' }, ADMIN);
      await new Promise((resolve) => setTimeout(resolve, MESSAGE_EVERY_MS));
    }
  })();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < contacts) {
        const start = next;
        next += 100;
        const items = Array.from({ length: Math.min(100, contacts - start) }, (_, i) => ({
          phone: `+1555${String(start + i).padStart(7, '0')}`,
          first_name: `Imported ${start + i}`,
        }));
        await call('POST', '/v1/contacts/batch-upsert', { match_on: 'phone', items }, key);
      }
    }),
  );
  importing = false;
  await inbound;
  const importSeconds = (Date.now() - started) / 1000;
  // Every message's event, however late (the bulk backlog may still be draining).
  const messageLags = () => [...receiver.lags.values()].filter((entry) => entry.type === 'message.received');
  const deadline = Date.now() + 120_000;
  while (messageLags().length < messages && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const lags = messageLags()
    .map((entry) => entry.lagMs)
    .sort((a, b) => a - b);
  const bulkDelivered = [...receiver.lags.values()].filter((entry) => entry.type === 'contact.created').length;
  worker.kill('SIGTERM');

  const p50 = percentile(lags, 50);
  const p99 = percentile(lags, 99);
  const lost = messages - lags.length;
  process.stdout.write(
    [
      '',
      `message.received lag during an import (${quick ? 'quick' : 'full'} mode), one worker with default settings,`,
      `a default Node http receiver answering in ${ANSWER_MS} ms:`,
      '',
      '| Contacts imported | Import s | contact.created delivered by then | Messages | Lag p50 ms | Lag p99 ms | Max ms |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      `| ${contacts} | ${importSeconds.toFixed(1)} | ${bulkDelivered} | ${lags.length}${lost ? ` (${lost} not arrived)` : ''} | ${p50.toFixed(0)} | ${p99.toFixed(0)} | ${(lags.at(-1) ?? 0).toFixed(0)} |`,
      '',
    ].join('\n'),
  );
  recordSummary([
    {
      path: 'webhook deliveries: message.received during an import',
      row: `${contacts} contacts imported (batch-upsert, 4 in flight), a message every ${MESSAGE_EVERY_MS} ms, 1 worker`,
      baseline: `receiver answering in ${ANSWER_MS} ms`,
      value: `p99 ${p99.toFixed(0)} ms`,
      ratio: null,
      p50Ms: p50,
      p99Ms: p99,
      rssMb: null,
      target: `p99 ≤ ${TARGET_P99_MS} ms`,
      met: lost === 0 && p99 <= TARGET_P99_MS,
    },
  ]);
  await receiver.close();
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

// `node bench/replies.ts` (issue 17, decisions §15): how soon a reply reaches the platform after its 202 on a quiet
// server. One text reply at a time (one every 50 ms) into a conversation whose window is open, on the sandbox
// platform; latency runs from the moment the 202 is in the client's hands to the reply's `sent_at` (written when the
// platform's answer is recorded; same host clock). Two deployments: the API and the worker in one process (woken in
// process), and a separate `crm worker` process (woken by the commit's notification). Baseline, measured in the same
// run: a bare LISTEN/NOTIFY hand-off on the same database (insert a row and notify in one transaction; a listener
// on another connection marks the row sent). Target: p99 < 1 s (decisions §15: "within a second").
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_replies is made on it)
//   BENCH_REPLIES        replies per deployment (200; 100 with BENCH_QUICK=1)
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { bareBaseline } from './bare-handoff.ts';
import { freshDatabase, log, unlimited } from './bench-database.ts';
import { percentile } from './measure.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.env.BENCH_QUICK === '1';
const REPLIES = Number(process.env.BENCH_REPLIES ?? (quick ? 100 : 200));
const ADMIN = 'bench-admin';
const GAP_MS = 50;
const TARGET_P99_MS = 1000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function startWorkerProcess(databaseUrl: string): ChildProcess {
  return spawn(process.execPath, [...process.execArgv, 'src/cli/main.ts', 'worker'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Replies one at a time; answers each one's latency from its 202 to its `sent_at`. */
async function measureReplies(databaseUrl: string, separateWorker: boolean): Promise<number[]> {
  const database = await openDatabase({ databaseUrl, poolSize: 10 });
  const wiring = wire({ database, rateLimitStore: unlimited, adminToken: ADMIN });
  const app = await buildApp(wiring);
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
  const org = await call('POST', '/admin/v1/organizations', { name: 'Replies' }, ADMIN);
  const { key } = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  const account = await call(
    'POST',
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1000, numbers: [{ phone: separateWorker ? '+15550100002' : '+15550100001' }] },
    ADMIN,
  );
  const from = separateWorker ? '+16660000002' : '+16660000001';
  await call('POST', '/admin/v1/sandbox/inbound', { channel_id: account.numbers[0].id, from, text: 'hi' }, ADMIN);
  const conversations = await app.inject({
    method: 'GET',
    url: '/v1/conversations',
    headers: { authorization: `Bearer ${key}` },
  });
  const conversationId = conversations.json().items[0].id as string;

  const child = separateWorker ? startWorkerProcess(databaseUrl) : undefined;
  const worker = separateWorker ? undefined : wiring.startWorker();
  // The separate worker is listening once it hands off a first reply (not measured).
  const warmup = await call('POST', `/v1/conversations/${conversationId}/messages`, { type: 'text', text: 'w' }, key);
  for (;;) {
    const row = await database.db
      .selectFrom('messages')
      .select('status')
      .where('id', '=', warmup.id)
      .executeTakeFirstOrThrow();
    if (row.status !== 'sending') break;
    await pause(20);
  }
  const lags: number[] = [];
  for (let index = 0; index < REPLIES; index++) {
    const answered = await call(
      'POST',
      `/v1/conversations/${conversationId}/messages`,
      { type: 'text', text: `reply ${index}` },
      key,
    );
    const answeredAt = Date.now();
    let sentAt: number | undefined;
    for (let tries = 0; sentAt === undefined && tries < 5000; tries++) {
      const row = await database.db
        .selectFrom('messages')
        .select(['sent_at'])
        .where('id', '=', answered.id)
        .executeTakeFirstOrThrow();
      if (row.sent_at) sentAt = row.sent_at.getTime();
      else await pause(2);
    }
    lags.push(Math.max(0, (sentAt ?? Number.POSITIVE_INFINITY) - answeredAt));
    await pause(GAP_MS);
  }
  child?.kill('SIGTERM');
  await worker?.stop();
  await app.close();
  await wiring.close();
  return lags.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_replies');
  const migrator = await openDatabase({ databaseUrl });
  await migrateToLatest(migrator.db);
  await migrator.close();

  log(`bare LISTEN/NOTIFY baseline, ${REPLIES} hand-offs`);
  const bare = (await bareBaseline(databaseUrl, REPLIES, GAP_MS)).sort((a, b) => a - b);
  log(`replies, API and worker in one process, ${REPLIES} replies`);
  const inProcess = await measureReplies(databaseUrl, false);
  log(`replies, a separate crm worker process, ${REPLIES} replies`);
  const separate = await measureReplies(databaseUrl, true);

  const line = (name: string, lags: number[]) =>
    `| ${name} | ${lags.length} | ${percentile(lags, 50).toFixed(0)} | ${percentile(lags, 99).toFixed(0)} | ${(lags.at(-1) ?? 0).toFixed(0)} |`;
  process.stdout.write(
    [
      '',
      `Reply latency on a quiet server (${quick ? 'quick' : 'full'} mode): from the 202 to \`sent\`, one reply every ${GAP_MS} ms,`,
      'sandbox platform, PostgreSQL:',
      '',
      '| Path | Replies | p50 ms | p99 ms | Max ms |',
      '|---|---:|---:|---:|---:|',
      line('bare LISTEN/NOTIFY hand-off (baseline)', bare),
      line('reply, API + worker in one process', inProcess),
      line('reply, separate `crm worker` process', separate),
      '',
    ].join('\n'),
  );
  const bareText = `bare LISTEN/NOTIFY: p50 ${percentile(bare, 50).toFixed(0)} ms, p99 ${percentile(bare, 99).toFixed(0)} ms`;
  recordSummary(
    [
      ['API + worker in one process', inProcess],
      ['separate crm worker process', separate],
    ].map(([name, lags]) => {
      const sorted = lags as number[];
      const p99 = percentile(sorted, 99);
      return {
        path: 'POST /v1/conversations/{id}/messages: 202 → sent',
        row: `${name}, one text reply every ${GAP_MS} ms, sandbox`,
        baseline: bareText,
        value: `p99 ${p99.toFixed(0)} ms`,
        ratio: null,
        p50Ms: percentile(sorted, 50),
        p99Ms: p99,
        rssMb: null,
        target: `p99 < ${TARGET_P99_MS} ms (decisions §15)`,
        met: p99 < TARGET_P99_MS,
      };
    }),
  );
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

// `node bench/automation.ts` (decisions §20: "on a quiet server their messages reach the platform within 2 seconds
// of the contact's"): how soon a rule's `send_text`, the away message and the assistant's answer reach the platform
// after the contact's message arrives. One contact message at a time (one every 50 ms after the previous answer),
// through the sandbox platform's inbound (`POST /admin/v1/sandbox/inbound`, the same path as a platform webhook);
// latency runs from just before that request leaves to the answer's `sent_at` (written when the sandbox platform's
// answer is recorded; same host clock). The API and the worker run in one process (`npm start`'s deployment): a
// rule's and the away message are queued in the webhook's transaction and woken at once; the assistant's job is
// found by the worker's poll (WORKER_POLL_MS, 200 ms), answered, and its reply woken at once. The assistant runs
// twice: with the sandbox provider (an FAQ match) and with a fake OpenAI-compatible server answering in 200 ms (the
// deployment's AI_BASE_URL). Baseline, measured in the same run: bench/replies' bare LISTEN/NOTIFY hand-off.
//
//   BENCH_DATABASE_URL    server to use (a fresh database crm_bench_automation is made on it)
//   BENCH_MESSAGES        contact messages per path (100; 30 with BENCH_QUICK=1)
import { buildApp } from '../src/app.ts';
import type { DeploymentModel } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { startFakeOpenAi } from '../test/fakes/fake-openai.ts';
import { bareBaseline } from './bare-handoff.ts';
import { freshDatabase, log, poster, unlimited } from './bench-database.ts';
import { percentile } from './measure.ts';
import { recordSummary } from './summary.ts';

const quick = process.env.BENCH_QUICK === '1';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? (quick ? 30 : 100));
const ADMIN = 'bench-admin';
const GAP_MS = 50;
const MODEL_MS = 200;
const TARGET_P99_MS = 2000;
const FAQS = [{ question: 'opening hours', answer: 'Every day from 8:00 to 19:00.' }];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Post = ReturnType<typeof poster>;

interface Path {
  name: string;
  /** The organization's settings that make each contact message answered (`post` and `put` with its key). */
  setup(post: Post, put: Post, key: string): Promise<void>;
  /** A new contact (a new conversation) for each message, or one contact throughout. */
  newContactEach: boolean;
  /** The deployment's model (AI_BASE_URL, AI_MODEL), when not the sandbox provider. */
  ai?: Partial<DeploymentModel>;
}

const assistant = (name: string, ai?: Partial<DeploymentModel>): Path => ({
  name,
  // A new conversation each time: the assistant owns new ones, and the reply limit is per conversation.
  newContactEach: true,
  setup: async (_post, put, key) => {
    await put('/v1/ai-assistant', { enabled: true, mode: 'autonomous', faqs: FAQS }, key);
  },
  ...(ai ? { ai } : {}),
});

const ruleAndAway: Path[] = [
  {
    name: "a rule's send_text",
    newContactEach: false,
    setup: async (post, _put, key) => {
      await post(
        '/v1/automation-rules',
        { name: 'ack', event: 'message.received', conditions: [], actions: [{ type: 'send_text', text: 'Got it.' }] },
        key,
      );
    },
  },
  {
    name: 'the away message',
    // Once per closed period per conversation (decisions §20): a new conversation each time.
    newContactEach: true,
    setup: async (_post, put, key) => {
      await put('/v1/business-hours', { enabled: true, week: [], away_message: { text: 'We are closed.' } }, key);
    },
  },
];

/** One path on a fresh API + worker process: answers each contact message's latency to its answer's `sent_at`. */
async function measurePath(databaseUrl: string, path: Path, index: number): Promise<number[]> {
  const { ai } = path;
  const database = await openDatabase({ databaseUrl, poolSize: 10 });
  const wiring = wire({ database, rateLimitStore: unlimited, adminToken: ADMIN, ...(ai ? { ai } : {}) });
  const app = await buildApp(wiring);
  const post = poster(app);
  const put = poster(app, 'PUT');
  const org = await post('/admin/v1/organizations', { name: `Automation ${index}` }, ADMIN);
  const { key } = await post(`/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  const account = await post(
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1000, numbers: [{ phone: `+1555010010${index}` }] },
    ADMIN,
  );
  const channelId = account.numbers[0].id as string;
  await path.setup(post, put, key);
  const worker = wiring.startWorker();

  const sentSoFar = async () => {
    const row = await database.db
      .selectFrom('messages')
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('sent_at').as('last')])
      .where('org_id', '=', org.id)
      .where('direction', '=', 'outbound')
      .where('sent_at', 'is not', null)
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), last: row.last as Date | null };
  };
  const lags: number[] = [];
  // The first message is a warm-up (not measured): compiled schemas, the worker's first poll, connections.
  for (let n = 0; n <= MESSAGES; n++) {
    const from = `+1666${String(index).padStart(2, '0')}${String(path.newContactEach ? n : 0).padStart(6, '0')}`;
    const arrivedAt = Date.now();
    await post(
      '/admin/v1/sandbox/inbound',
      { channel_id: channelId, from, text: 'What are your opening hours?' },
      ADMIN,
    );
    let sentAt: number | undefined;
    for (let tries = 0; sentAt === undefined && tries < 5000; tries++) {
      const sent = await sentSoFar();
      if (sent.count > n && sent.last) sentAt = sent.last.getTime();
      else await pause(2);
    }
    if (n > 0) lags.push(Math.max(0, (sentAt ?? Number.POSITIVE_INFINITY) - arrivedAt));
    await pause(GAP_MS);
  }
  await worker.stop();
  await app.close();
  await wiring.close();
  return lags.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_automation');
  const migrator = await openDatabase({ databaseUrl });
  await migrateToLatest(migrator.db);
  await migrator.close();

  log(`bare LISTEN/NOTIFY baseline, ${MESSAGES} hand-offs`);
  const bare = (await bareBaseline(databaseUrl, MESSAGES, GAP_MS)).sort((a, b) => a - b);
  const model = await startFakeOpenAi();
  model.defaultAnswer = {
    content: JSON.stringify({ action: 'reply', text: 'Every day from 8:00 to 19:00.' }),
    delayMs: MODEL_MS,
  };
  const paths = [
    ...ruleAndAway,
    assistant("the assistant's answer, sandbox provider"),
    assistant(`the assistant's answer, a model answering in ${MODEL_MS} ms`, {
      baseUrl: model.baseUrl,
      model: 'fake-model',
    }),
  ];
  const results: { name: string; lags: number[] }[] = [];
  try {
    for (const [index, path] of paths.entries()) {
      log(`${path.name}, ${MESSAGES} contact messages`);
      results.push({ name: path.name, lags: await measurePath(databaseUrl, path, index) });
    }
  } finally {
    await model.close();
  }

  const line = (name: string, lags: number[]) =>
    `| ${name} | ${lags.length} | ${percentile(lags, 50).toFixed(0)} | ${percentile(lags, 99).toFixed(0)} | ${(lags.at(-1) ?? 0).toFixed(0)} |`;
  process.stdout.write(
    [
      '',
      `Automated answers on a quiet server (${quick ? 'quick' : 'full'} mode): from the contact's message to the answer's`,
      `\`sent\`, one message at a time, sandbox platform, API + worker in one process, PostgreSQL:`,
      '',
      '| Path | Messages | p50 ms | p99 ms | Max ms |',
      '|---|---:|---:|---:|---:|',
      line('bare LISTEN/NOTIFY hand-off (baseline)', bare),
      ...results.map((result) => line(result.name, result.lags)),
      '',
    ].join('\n'),
  );
  const bareText = `bare LISTEN/NOTIFY: p50 ${percentile(bare, 50).toFixed(0)} ms, p99 ${percentile(bare, 99).toFixed(0)} ms`;
  recordSummary(
    results.map(({ name, lags }) => {
      const p99 = percentile(lags, 99);
      return {
        path: "contact's message (sandbox inbound) → automated answer sent",
        row: `${name}, one message at a time, API + worker in one process, sandbox platform`,
        baseline: bareText,
        value: `p99 ${p99.toFixed(0)} ms`,
        ratio: null,
        p50Ms: percentile(lags, 50),
        p99Ms: p99,
        rssMb: null,
        target: `p99 ≤ ${TARGET_P99_MS} ms (decisions §20)`,
        met: p99 <= TARGET_P99_MS,
      };
    }),
  );
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

// `npm run bench:audience` (decisions §16): a broadcast to an audience of BENCH_AUDIENCE contacts
// (1,000,000; BENCH_QUICK=1: 100,000). Rows, each beside a bare baseline measured in the same run:
//   - POST /v1/broadcasts answering 202 (scheduled, so the request is timed alone), p50/p99, beside one pg
//     transaction inserting one row;
//   - recipients added per second by the worker's chunks, beside a bare `INSERT … SELECT` of the same contacts into
//     a table of the same columns in one statement;
//   - the first hand-off after the start (the fan-out runs beside the chunks, in this process);
//   - the whole run's messages per second, from the start to the last hand-off, beside the bare SKIP LOCKED loop
//     (bench/bare-queue.ts, 1 process) over as many rows;
//   - the peak RSS of this process (API and worker), while adding recipients and through the whole run.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_audience is made on it)
//   BENCH_AUDIENCE       contacts in the audience
//   BENCH_REQUESTS       POST /v1/broadcasts to time, default 200 (quick: 100)
//   BENCH_WHOLE_RUN_S    the whole run's span at most, in seconds, default 60 (it ends earlier when all are handed off)
//   AUDIENCE_CHUNK_SIZE  contacts per chunk, as the worker's setting (default 5,000)
import { loadavg } from 'node:os';
import pg from 'pg';
import { importEntry as load } from '../bin/aot.js';
import { withServerFlags } from '../bin/node-flags.js';
import { bareQueueRate } from './bare-queue-rate.ts';
import { freshDatabase, log, poster, unlimited } from './bench-database.ts';
import { mb, measure, rssSampler, table } from './measure.ts';
import { recordSummary } from './summary.ts';

// The API and the worker run here as `crm serve` and `crm worker` run: with the server's heap flags (this process
// starts again with them) and the compiled dist/ while it is current (bin/aot.js), so that the RSS rows are theirs.
withServerFlags();
const [{ buildApp }, { FANOUT_DEFAULTS }, { openDatabase }, { analyze, migrateToLatest }, { wire }] = await Promise.all(
  [
    load<typeof import('../src/app.ts')>('src/app.ts'),
    load<typeof import('../src/config.ts')>('src/config.ts'),
    load<typeof import('../src/db/database.ts')>('src/db/database.ts'),
    load<typeof import('../src/db/migrate.ts')>('src/db/migrate.ts'),
    load<typeof import('../src/wiring.ts')>('src/wiring.ts'),
  ],
);

const quick = process.env.BENCH_QUICK === '1';
const audience = Number(process.env.BENCH_AUDIENCE ?? (quick ? 100_000 : 1_000_000));
const requests = Number(process.env.BENCH_REQUESTS ?? (quick ? 100 : 200));
const wholeRunSeconds = Number(process.env.BENCH_WHOLE_RUN_S ?? 60);
const ADMIN = 'bench-admin';
const TARGET_P99_MS = 50;
const TARGET_RATE = 50_000;
const TARGET_FIRST_MS = 2000;
const TARGET_RSS_MB = 200;

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_audience');
  const database = await openDatabase({ databaseUrl, poolSize: 20 });
  await migrateToLatest(database.db);
  const wiring = wire({
    database,
    rateLimitStore: unlimited,
    adminToken: ADMIN,
    fanout: { perNumberPerSecond: null },
    ...(process.env.AUDIENCE_CHUNK_SIZE ? { worker: { audienceChunk: Number(process.env.AUDIENCE_CHUNK_SIZE) } } : {}),
  });
  const app = await buildApp(wiring);
  const call = poster(app);
  const org = await call('/admin/v1/organizations', { name: 'Bench audience', plan: 'scale' }, ADMIN);
  const { key } = await call(`/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  await call(
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1e9, messaging_limit_24h: 10_000_000, numbers: [{ phone: '+15550100001' }] },
    ADMIN,
  );
  const template = await call(
    '/v1/templates',
    {
      name: 'bench_audience',
      language: 'en_US',
      category: 'MARKETING',
      components: [
        {
          type: 'BODY',
          text: 'Hi {{first_name}}, {{offer}} off today',
          example: {
            body_text_named_params: [
              { param_name: 'first_name', example: 'Ana' },
              { param_name: 'offer', example: '20%' },
            ],
          },
        },
      ],
    },
    key,
  );
  await call(`/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' }, ADMIN);

  const bare = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  log(`seeding ${audience.toLocaleString('en')} contacts`);
  // Every 50th contact has no first name (missing_variables), every 100th is opted out (a MARKETING template).
  // Phones are not in the order of creation, as in life: contact i has 2000000000 + (i × 7919 mod N), a permutation
  // (7919 is prime and divides no audience size used here). With phones in creation order (until 11-28) every
  // chunk's entries in the phone-keyed indexes landed next to the last chunk's, and the window's sort found its rows
  // sorted already.
  await bare.query(
    `insert into contacts (org_id, id, first_name, phone, origin, messaging_status, opted_out, created_at, updated_at)
     select $1, 'ct_bench' || lpad(i::text, 9, '0'), case when i % 50 = 0 then null else 'Name' || i end,
       '+1' || (2000000000 + (i::bigint * 7919) % $2)::text, 'API', 'unverified', i % 100 = 0,
       now() - interval '2 days' + i * interval '1 millisecond', now()
     from generate_series(1, $2) as i`,
    [org.id, audience],
  );
  // Statistics as the product gathers them: the tables that hold rows (D202).
  await analyze(database.db);

  const body = (sendAt?: string) => ({
    template_id: template.id,
    audience: {},
    variables: { 'body.offer': '20%' },
    ...(sendAt ? { send_at: sendAt } : {}),
  });
  const later = new Date(Date.now() + 7 * 86_400_000).toISOString();
  await bare.query('create table bare_broadcasts (id bigserial primary key, payload jsonb not null)');
  const baseline202 = await measure('bare: 1 transaction inserting 1 row', requests, 1, async () => {
    const client = await bare.connect();
    try {
      await client.query('begin');
      await client.query('insert into bare_broadcasts (payload) values ($1)', [JSON.stringify(body(later))]);
      await client.query('commit');
    } finally {
      client.release();
    }
  });
  const rss = rssSampler();
  const accept = await measure(
    `POST /v1/broadcasts, audience of ${audience.toLocaleString('en')}`,
    requests,
    1,
    async () => {
      await call('/v1/broadcasts', body(later), key);
    },
  );
  // Those were scheduled a week ahead: cancelled, so that the worker below works on one broadcast.
  await bare.query(`update broadcasts set stored_status = 'cancelled' where org_id = $1`, [org.id]);

  // The baseline of adding recipients: the same contacts, in the same order, into a table of the same columns.
  await bare.query('create table bare_recipients (like broadcast_recipients including defaults)');
  const bareStart = performance.now();
  await bare.query(
    `insert into bare_recipients (org_id, broadcast_id, position, account_id, channel_id, contact_id, phone,
       send_values)
     select c.org_id, 'bc_bare', (row_number() over (order by c.created_at, c.id))::int - 1, 'acc', 'ch', c.id, c.phone,
       array[c.first_name]
     from contacts c where c.org_id = $1 and c.deleted_at is null order by c.created_at, c.id`,
    [org.id],
  );
  const bareRate = audience / ((performance.now() - bareStart) / 1000);

  log('one broadcast at once: the worker adds its recipients while the fan-out hands them off');
  rss.reset();
  const created = await call('/v1/broadcasts', body(), key);
  const runStarted = performance.now();
  let preparedMs = 0;
  const phaseOf = async () =>
    (await bare.query('select phase from broadcasts where org_id = $1 and id = $2', [org.id, created.id])).rows[0]
      ?.phase as string | null;
  // As the worker's task does, but without its 200 ms poll: a round that found the broadcast locked (the fan-out
  // recording a batch of it) answers 0 and is tried again at once, until every recipient is added.
  let added = true;
  const audienceLoop = (async () => {
    for (;;) {
      if ((await wiring.audiences.runOnce()) > 0) continue;
      const phase = await phaseOf();
      if (phase !== 'preparing' && phase !== null) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    preparedMs = performance.now() - runStarted;
    added = false;
  })();
  // The fan-out beside it, as the worker's task runs it (FANOUT_DEFAULTS.batchesInFlight loops), until every
  // recipient is handed off or the whole run has lasted BENCH_WHOLE_RUN_S (the fan-out hands off hundreds a
  // second: a million would take most of an hour).
  const wholeRunMs = wholeRunSeconds * 1000;
  const fanoutOnce = async () => {
    for (;;) {
      if (performance.now() - runStarted >= wholeRunMs) break;
      if ((await wiring.fanout.runOnce()) > 0) continue;
      if (!added) {
        const left = await bare.query(
          `select 1 from broadcast_recipients where org_id = $1 and broadcast_id = $2
             and status in ('queued', 'sending', 'held') limit 1`,
          [org.id, created.id],
        );
        if (left.rowCount === 0) break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const fanoutLoop = Promise.all(Array.from({ length: FANOUT_DEFAULTS.batchesInFlight }, fanoutOnce));
  await audienceLoop;
  const timing = (
    await bare.query(
      `select extract(epoch from ((select min(r.reached_at) from broadcast_recipients r
           where r.org_id = b.org_id and r.broadcast_id = b.id) - b.started_at)) * 1000 as first_ms,
         b.requested
       from broadcasts b where b.org_id = $1 and b.id = $2`,
      [org.id, created.id],
    )
  ).rows[0] as { first_ms: number | null; requested: number };
  const preparedRss = rss.peak();
  await fanoutLoop;
  const whole = (
    await bare.query(
      `select count(*) filter (where r.sent_at is not null)::int as sent,
         extract(epoch from (max(r.sent_at) - b.started_at))::float8 as seconds
       from broadcasts b join broadcast_recipients r on r.org_id = b.org_id and r.broadcast_id = b.id
       where b.org_id = $1 and b.id = $2 group by b.started_at`,
      [org.id, created.id],
    )
  ).rows[0] as { sent: number; seconds: number };
  const wholeRate = whole.sent / whole.seconds;
  const bareRateQueue = (await bareQueueRate(databaseUrl, whole.sent, 1)).rate;
  // From the creation (the worker's start step included) to the last chunk's commit, as this process saw them.
  const rate = Number(timing.requested) / (preparedMs / 1000);
  const firstMs = timing.first_ms === null ? Number.NaN : Number(timing.first_ms);
  const rssMb = rss.peak() / (1024 * 1024);

  process.stdout.write(
    [
      '',
      `Audience broadcast of ${audience.toLocaleString('en')} contacts, in-process API and worker on PostgreSQL:`,
      '',
      table([baseline202, accept]),
      '',
      '| Row | value | bare baseline | ratio | target |',
      '|---|---:|---:|---:|---:|',
      `| 202 p99 | ${accept.p99.toFixed(1)} ms | ${baseline202.p99.toFixed(1)} ms | ${(accept.p99 / baseline202.p99).toFixed(1)}× | ≤ ${TARGET_P99_MS} ms |`,
      `| recipients added per second | ${Math.round(rate).toLocaleString('en')} | ${Math.round(bareRate).toLocaleString('en')} (one INSERT … SELECT) | ${(bareRate / rate).toFixed(1)}× slower | ≥ ${TARGET_RATE.toLocaleString('en')} |`,
      `| first hand-off after the start | ${firstMs.toFixed(0)} ms | | | ≤ ${TARGET_FIRST_MS} ms |`,
      `| whole run: messages per second, start → last hand-off (at most BENCH_WHOLE_RUN_S) | ${Math.round(wholeRate).toLocaleString('en')} (${whole.sent.toLocaleString('en')} sent in ${whole.seconds.toFixed(1)} s) | ${Math.round(bareRateQueue).toLocaleString('en')} (bare SKIP LOCKED loop, 1 process) | ${(wholeRate / bareRateQueue).toFixed(2)}× | |`,
      `| peak RSS (API + worker), while adding / whole run | ${mb(preparedRss)} / ${mb(rssMb * 1024 * 1024)} | | | ≤ ${TARGET_RSS_MB} MB |`,
      `| load average | ${loadavg()[0]?.toFixed(1)} | | | |`,
      '',
    ].join('\n'),
  );
  const path = `audience of ${audience.toLocaleString('en')}`;
  recordSummary([
    {
      path,
      row: 'POST /v1/broadcasts → 202',
      baseline: `bare pg, 1 transaction inserting 1 row: p99 ${baseline202.p99.toFixed(1)} ms (ratio = p99 ÷ bare p99)`,
      value: `p99 ${accept.p99.toFixed(1)} ms`,
      ratio: accept.p99 / baseline202.p99,
      p50Ms: accept.p50,
      p99Ms: accept.p99,
      rssMb,
      target: `p99 <= ${TARGET_P99_MS} ms`,
      met: accept.p99 <= TARGET_P99_MS,
    },
    {
      path,
      row: 'recipients added per second',
      baseline: `bare INSERT … SELECT of the same rows: ${Math.round(bareRate)}/s (ratio = bare ÷ ours)`,
      value: `${Math.round(rate)}/s`,
      ratio: bareRate / rate,
      p50Ms: null,
      p99Ms: null,
      rssMb,
      target: `>= ${TARGET_RATE}/s`,
      met: rate >= TARGET_RATE,
    },
    {
      path,
      row: 'first hand-off after the start',
      baseline: 'none',
      value: `${firstMs.toFixed(0)} ms`,
      ratio: null,
      p50Ms: null,
      p99Ms: null,
      rssMb,
      target: `<= ${TARGET_FIRST_MS} ms, RSS <= ${TARGET_RSS_MB} MB`,
      met: firstMs <= TARGET_FIRST_MS && rssMb <= TARGET_RSS_MB,
    },
    {
      path,
      row: `whole run: messages per second, start → last hand-off, ${whole.sent} sent (at most ${wholeRunSeconds} s)`,
      baseline: `bare SKIP LOCKED loop, 1 process, ${whole.sent} rows: ${Math.round(bareRateQueue)} msg/s (ratio = ours ÷ bare)`,
      value: `${Math.round(wholeRate)} msg/s`,
      ratio: wholeRate / bareRateQueue,
      p50Ms: null,
      p99Ms: null,
      rssMb,
      target: 'reported',
      met: null,
    },
  ]);
  rss.stop();
  await bare.end();
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

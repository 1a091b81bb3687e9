// `npm run bench:sends`: POST /v1/templates/{id}/send with 100 new recipients, one at a time and 4
// in flight, first with an empty 24-hour window, then with 100,000 messages already in the account's window; each
// beside a bare baseline measured in the same run (one pg transaction inserting 100 rows), with p50/p99 and the RSS
// of this process (the API runs in it).
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_sends is made on it)
//   BENCH_SENDS          sends to time per row, default 200 (BENCH_QUICK=1: 100)
//   BENCH_WINDOW         messages seeded into the window, default 100000
//
// The window is seeded by SQL: one broadcast and BENCH_WINDOW `sent` recipients with distinct phones queued over the
// last 23 hours, inserted in one statement (the same triggers as a send's insert build the window from them).
import { loadavg } from 'node:os';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { analyze, migrateToLatest } from '../src/db/migrate.ts';
import { wire } from '../src/wiring.ts';
import { freshDatabase, log, poster, unlimited } from './bench-database.ts';
import { mb, measure, type Result, rssSampler, table } from './measure.ts';
import { recordSummary } from './summary.ts';

const sends = Number(process.env.BENCH_SENDS ?? (process.env.BENCH_QUICK === '1' ? 100 : 200));
const windowSize = Number(process.env.BENCH_WINDOW ?? 100_000);
const ADMIN = 'bench-admin';
const TARGET_P99_MS = 50;

let phoneSequence = 0;
/** 100 phones never used before in this run (none ends in the sandbox's 0404/0500: the step is 7 from 6e9). */
const nextPhones = () =>
  Array.from({ length: 100 }, () => {
    phoneSequence += 1;
    return `+1${6_000_000_000 + phoneSequence * 7}`;
  }).filter((phone) => !phone.endsWith('0404') && !phone.endsWith('0500'));

async function main(): Promise<void> {
  const databaseUrl = await freshDatabase('crm_bench_sends');
  const database = await openDatabase({ databaseUrl, poolSize: 20 });
  await migrateToLatest(database.db);
  const app = await buildApp(wire({ database, rateLimitStore: unlimited, adminToken: ADMIN }));
  const call = poster(app);
  const org = await call('/admin/v1/organizations', { name: 'Bench sends' }, ADMIN);
  const { key } = await call(`/admin/v1/organizations/${org.id}/api-keys`, {}, ADMIN);
  const account = await call(
    `/admin/v1/organizations/${org.id}/messaging-accounts`,
    { balance: 1e9, messaging_limit_24h: 10_000_000, numbers: [{ phone: '+15550100001' }] },
    ADMIN,
  );
  const template = await call(
    '/v1/templates',
    {
      name: 'bench_sends',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hi, your code is {{1}}', example: { body_text: [['1']] } }],
    },
    key,
  );
  await call(`/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' }, ADMIN);
  const sendOne = async () => {
    await call(
      `/v1/templates/${template.id}/send`,
      { recipients: nextPhones().map((phone) => ({ phone, variables: { 'body.1': '42' } })) },
      key,
    );
  };

  // The baseline: what the send must at least do, one transaction inserting 100 rows, through a pg pool.
  const bare = new pg.Pool({ connectionString: databaseUrl, max: 20 });
  await bare.query(`create table bare_sends (id bigserial primary key, phone text not null, payload jsonb not null,
    created_at timestamptz not null default now())`);
  const bareOne = async () => {
    const client = await bare.connect();
    try {
      const phones = nextPhones();
      await client.query('begin');
      await client.query('insert into bare_sends (phone, payload) select unnest($1::text[]), unnest($2::jsonb[])', [
        phones,
        phones.map((phone) => JSON.stringify({ to: phone, components: [{ type: 'body', text: '42' }] })),
      ]);
      await client.query('commit');
    } finally {
      client.release();
    }
  };

  const rss = rssSampler();
  const rows: { result: Result; baseline: Result; rssMb: number; load: number; inFlight: number; window: string }[] =
    [];
  const scenario = async (window: string) => {
    for (const inFlight of [1, 4]) {
      const label = inFlight === 1 ? 'one at a time' : `${inFlight} in flight`;
      const baseline = await measure(`bare: 1 transaction inserting 100 rows (${label})`, sends, inFlight, bareOne);
      rss.reset();
      const result = await measure(`send of 100 new recipients, ${window} (${label})`, sends, inFlight, sendOne);
      rows.push({ result, baseline, rssMb: rss.peak() / (1024 * 1024), load: loadavg()[0] ?? 0, inFlight, window });
    }
  };

  log(`timing ${sends} sends of 100 recipients with an empty 24-hour window`);
  await scenario('empty window');

  log(`seeding ${windowSize} messages into the account's 24-hour window`);
  const seeded = Date.now();
  await database.db
    .insertInto('broadcasts')
    .values({
      org_id: org.id,
      id: 'bc_bench_window',
      template_id: template.id,
      template_name: template.name,
      template_language: template.language,
      template_category: template.category,
      account_id: account.id,
      channel_id: account.numbers[0].id,
      requested: windowSize,
    })
    .execute();
  await bare.query(
    `insert into broadcast_recipients (org_id, broadcast_id, position, account_id, channel_id, contact_id, phone,
       send_components, status, queued_at, sent_at)
     select $1, 'bc_bench_window', i, $2, $3, 'ct_bench_window', '+1700' || lpad(i::text, 7, '0'), '[]', 'sent',
       now() - (i % 1380) * interval '1 minute', now()
     from generate_series(0, $4 - 1) as i`,
    [org.id, account.id, account.numbers[0].id, windowSize],
  );
  // Statistics as the product gathers them: the tables that hold rows (D202).
  await analyze(database.db);
  log(`seeded in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

  log(`timing ${sends} sends of 100 recipients with ${windowSize} messages in the window`);
  await scenario(`${windowSize.toLocaleString('en')} in the window`);

  process.stdout.write(
    [
      '',
      `Sends of 100 new recipients, in-process API on PostgreSQL (${sends} per row), beside the bare baseline:`,
      '',
      table(rows.flatMap((row) => [row.baseline, row.result])),
      '',
      '| Scenario | p50 ms | p99 ms | bare p50 ms | bare p99 ms | p99 ÷ bare p99 | API RSS | load |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        ({ result, baseline, rssMb, load }) =>
          `| ${result.name} | ${result.p50.toFixed(1)} | ${result.p99.toFixed(1)} | ${baseline.p50.toFixed(1)} | ` +
          `${baseline.p99.toFixed(1)} | ${(result.p99 / baseline.p99).toFixed(1)}× | ${mb(rssMb * 1024 * 1024)} | ${load.toFixed(1)} |`,
      ),
      '',
    ].join('\n'),
  );
  recordSummary(
    rows.map(({ result, baseline, rssMb, inFlight, window }) => ({
      path: 'send of 100 recipients',
      row: `${window}, ${inFlight === 1 ? 'one at a time' : `${inFlight} in flight (information)`}`,
      baseline: `bare pg, 1 transaction inserting 100 rows: p99 ${baseline.p99.toFixed(1)} ms (ratio = p99 ÷ bare p99)`,
      value: `p99 ${result.p99.toFixed(1)} ms`,
      ratio: result.p99 / baseline.p99,
      p50Ms: result.p50,
      p99Ms: result.p99,
      rssMb,
      target: inFlight === 1 ? `p99 <= ${TARGET_P99_MS} ms` : 'information',
      met: inFlight === 1 ? result.p99 <= TARGET_P99_MS : null,
    })),
  );
  rss.stop();
  await bare.end();
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

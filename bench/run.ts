// `npm run bench:contacts`: the contact list at scale. Seeds one organization (1,000,000 contacts; BENCH_QUICK=1:
// 50,000) on PostgreSQL and measures every contact-list row of docs/benchmarks.md through real HTTP, one at a time
// and 8 in flight, beside its baselines measured in the same run: the same list without HTTP (the service, every SQL
// statement), and a bare Fastify + pg server answering one fixed page of 50 contacts. The API runs as its own process
// (bench/list-server.js, with the heap flags of `crm serve`), so that its peak RSS under the list rows is the API's
// (target <= 200 MB, docs/benchmarks.md). Each row also goes to the summary table of `npm run bench`
// (bench/summary.ts). `node bench/explain.ts QUERY [PAGE]` explains a row's statements. Not part of `npm test`.
//
//   BENCH_DATABASE_URL  default postgres://postgres@127.0.0.1:5432/crm_bench, crm_bench_quick with BENCH_QUICK=1
//                       (created when missing; apart, so that the small organization has statistics of its own)
//   BENCH_QUICK=1       50,000 contacts and 100 requests per measurement (a few minutes)
//   BENCH_CONTACTS      contacts to seed (default 1,000,000, or 50,000 quick); a seeded organization is reused
//   BENCH_REQUESTS      requests per measurement (default 200, or 100 quick)
//   BENCH_CONCURRENCY   requests in flight for the concurrent column (default 8)
//   BENCH_ONLY          a regular expression: only the rows whose name matches (e.g. for `node --cpu-prof`)
//   BENCH_FRESH=1       drop and recreate the database first
//   BENCH_API_NODE_FLAGS  extra node flags for the API process (e.g. --cpu-prof, --heapsnapshot-signal=SIGUSR2)
//   BENCH_API_HEAP_SAMPLE a path for the API's sampling heap profile of every allocation (bench/list-server.js)
// The API process prints its garbage collector's pauses during the run when it stops (one line on stderr).
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from '../bin/node-flags.js';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { startBareServer } from './bare-server.ts';
import { templateClause } from './bench-database.ts';
import { mb, measure, rssSampler } from './measure.ts';
import { listWithoutHttp } from './queries.ts';
import { start, stop } from './read-load.ts';
import { rows as listRows, type Row, report, summaryRows } from './report.ts';
import { seed } from './seed.ts';
import { recordSummary } from './summary.ts';

const quick = process.env.BENCH_QUICK === '1';
const url = new URL(
  process.env.BENCH_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/crm_bench${quick ? '_quick' : ''}`,
);
const contacts = Number(process.env.BENCH_CONTACTS ?? (quick ? 50_000 : 1_000_000));
const requests = Number(process.env.BENCH_REQUESTS ?? (quick ? 100 : 200));
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const PAGE_SIZE = 50;
const WARM_UP = 3;
const log = (line: string) => process.stderr.write(`${line}\n`);

async function ensureDatabase(): Promise<void> {
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsupported database name ${name}`);
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    if (process.env.BENCH_FRESH === '1') await client.query(`drop database if exists ${name} with (force)`);
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${name}${templateClause()}`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  await ensureDatabase();
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 20 });
  await migrateToLatest(database.db);
  const seeded = await seed(database.db, contacts, log);
  // The API as `crm serve` runs it (its heap flags, the compiled server): a process of its own, whose RSS is the API's.
  const api = await start(
    [
      ...SERVER_NODE_FLAGS,
      ...(process.env.BENCH_API_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      'bench/list-server.js',
    ],
    {
      DATABASE_URL: url.toString(),
      ...(process.env.BENCH_API_HEAP_SAMPLE ? { BENCH_API_HEAP_SAMPLE: process.env.BENCH_API_HEAP_SAMPLE } : {}),
    },
    '/livez',
    fileURLToPath(new URL('..', import.meta.url)),
  );
  const base = api.base;
  const bare = await startBareServer(url.toString(), seeded.orgId);
  const headers = { authorization: `Bearer ${seeded.key}` };
  const get = async (target: string) => {
    const response = await fetch(target, { headers });
    const body = await response.text();
    if (response.status >= 400) throw new Error(`${target}: ${response.status} ${body}`);
  };
  const direct = listWithoutHttp(database.db, seeded.orgId);
  const rss = rssSampler();
  const apiRss = rssSampler(api.pid);

  const times = async (name: string, call: () => Promise<unknown>) => {
    for (let i = 0; i < WARM_UP; i++) await call();
    const one = await measure(name, requests, 1, async () => void (await call()));
    const many = await measure(name, requests, concurrency, async () => void (await call()));
    return { one, many };
  };
  const bareRun = async (label: string) => ({
    http: await times(`bare Fastify + pg, fixed page of 50 (${label})`, () => get(bare.url)),
    sql: await times(`bare SQL, fixed page of 50 (${label})`, () => bare.query()),
  });

  log('measuring the bare baselines');
  const bareBefore = await bareRun('start');
  const measured: Row[] = [];
  rss.reset();
  apiRss.reset();
  for (const row of listRows(seeded.contacts, PAGE_SIZE)) {
    if (only && !only.test(row.name)) continue;
    let search = row.search;
    if (row.page > 1) {
      log(`finding page ${row.page} of ${row.name}`);
      const cursor = await direct.cursorAt(row.search, row.page, PAGE_SIZE);
      if (!cursor) throw new Error(`${row.name}: the list has fewer than ${row.page} pages`);
      search = `${row.search}&cursor=${cursor}`;
    }
    log(`measuring ${row.name}`);
    // The bare server right before each row, so that the ratio compares requests made under the same load.
    const bareHttp = await times('bare', () => get(bare.url));
    const api = await times(row.name, () => get(`${base}/v1/contacts?${search}`));
    const service = await times(row.name, () => direct.service(search));
    const sql = await measure(row.name, requests, 1, async () => void (await direct.pageAndCount(search)));
    measured.push({ ...row, api, service, sql, bare: bareHttp });
    log(
      `  API p50/p99 ${api.one.p50.toFixed(1)}/${api.one.p99.toFixed(1)} ms, ${concurrency} in flight ${api.many.p50.toFixed(1)}/${api.many.p99.toFixed(1)} ms`,
    );
  }
  const peakRss = rss.peak();
  const apiPeakRss = apiRss.peak();
  apiRss.stop();
  log('measuring the bare baselines again');
  const bareAfter = await bareRun('end');
  rss.stop();

  process.stdout.write(
    report({
      contacts: seeded.contacts,
      pageSize: PAGE_SIZE,
      requests,
      concurrency,
      host: url.host,
      bare: [bareBefore, bareAfter],
      rows: measured,
      peakRss,
      apiPeakRss,
    }),
  );
  recordSummary([
    ...summaryRows({ contacts: seeded.contacts, concurrency, rows: measured, rssMb: apiPeakRss / (1024 * 1024) }),
    {
      path: `contact list, ${seeded.contacts.toLocaleString('en')} contacts`,
      row: `API RSS under the list rows (its own process, ${requests} requests per row 1 and ${concurrency} at a time)`,
      baseline: `bench process (bare server, service, load generator): ${mb(peakRss)}`,
      value: mb(apiPeakRss),
      ratio: null,
      p50Ms: null,
      p99Ms: null,
      rssMb: apiPeakRss / (1024 * 1024),
      target: '<= 200 MB RSS',
      met: apiPeakRss <= 200 * 1024 * 1024,
    },
  ]);
  await bare.close();
  await stop(api.child);
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

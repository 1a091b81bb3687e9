// `npm run bench`: seeds one organization with BENCH_CONTACTS contacts (default 1,000,000) on PostgreSQL and
// measures the contact API through real HTTP. Not part of `npm test`.
//
//   BENCH_DATABASE_URL  default postgres://postgres@127.0.0.1:5432/crm_bench (created when missing)
//   BENCH_CONTACTS      default 1000000; e.g. 20000 for a quick run (a seeded organization is reused)
//   BENCH_REQUESTS      requests per scenario, default 200
//   BENCH_CONCURRENCY   requests in flight, default 8
//   BENCH_FRESH=1       drop and recreate the database first
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { RateLimitStore } from '../src/http/rate-limit.ts';
import { wire } from '../src/wiring.ts';
import { measure, type Result, table } from './measure.ts';
import { measureQueries } from './queries.ts';
import { seed } from './seed.ts';

const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench');
const contacts = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PAGE_SIZE = 50;
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
    if (found.rowCount === 0) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
}

// The benchmark measures the API, not the rate limit.
const unlimited: RateLimitStore = { hit: async () => 1, close: async () => {} };

async function main(): Promise<void> {
  await ensureDatabase();
  const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 20 });
  await migrateToLatest(database.db);
  const seeded = await seed(database.db, contacts, log);
  const app = await buildApp(wire({ database, rateLimitStore: unlimited }));
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const headers = { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' };
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${base}${path}`, { ...init, headers });
    const body = await response.json().catch(() => undefined);
    if (response.status >= 400) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
    return body as { id: string; items: { id: string }[]; next_cursor: string | null };
  };

  let results: Result[] = [];
  let inFlight = concurrency;
  const run = async (name: string, request: (i: number) => Promise<unknown>) => {
    log(`measuring ${name} (${inFlight} in flight)`);
    results.push(await measure(name, requests, inFlight, async (i) => void (await request(i))));
  };
  const stamp = Date.now().toString(36);
  const phoneBase = 3_000_000_000 + (Date.now() % 1_000_000) * 1000;
  await run('create contact', (i) =>
    call('/v1/contacts', {
      method: 'POST',
      body: JSON.stringify({
        first_name: 'bench',
        email: `b${stamp}_${i}@new.example`,
        phone: `+1${phoneBase + i}`,
        properties: { score: { kind: 'NUMBER', value_number: i } },
      }),
    }),
  );
  const sample = (await call('/v1/contacts?limit=200&sort=name')).items.map((item) => item.id);
  await run('read contact by id', (i) => call(`/v1/contacts/${sample[i % sample.length]}`));

  const targetPage = Math.max(2, Math.min(1000, Math.floor(seeded.contacts / PAGE_SIZE)));
  const cursors = new Map<string, string>();
  for (const sort of ['recent', 'name', 'country', 'city', 'origin']) {
    await run(`list ${sort}, page 1`, () => call(`/v1/contacts?sort=${sort}`));
    log(`walking to page ${targetPage} of ${sort}`);
    const walkStarted = performance.now();
    let cursor: string | null = null;
    for (let page = 1; page < targetPage; page++) {
      const body = await call(`/v1/contacts?sort=${sort}${cursor ? `&cursor=${cursor}` : ''}`);
      cursor = body.next_cursor;
    }
    log(`  ${targetPage - 1} pages in ${((performance.now() - walkStarted) / 1000).toFixed(1)} s`);
    cursors.set(sort, cursor as string);
    await run(`list ${sort}, page ${targetPage}`, () => call(`/v1/contacts?sort=${sort}&cursor=${cursor}`));
  }
  await run('q=garcia (common name)', () => call('/v1/contacts?q=garcia'));
  await run('q=user123456 (one email)', () => call('/v1/contacts?q=user123456%40'));
  await run('property_filter tier:eq:gold', () => call('/v1/contacts?property_filter=tier:eq:gold'));
  await run('property_filter score:gte:990 & sort=name', () =>
    call('/v1/contacts?sort=name&property_filter=score:gte:990'),
  );

  const concurrent = results;
  // The same requests one at a time: the latency of a request on an idle server.
  results = [];
  inFlight = 1;
  await run('read contact by id', (i) => call(`/v1/contacts/${sample[i % sample.length]}`));
  for (const sort of ['recent', 'name']) {
    await run(`list ${sort}, page 1`, () => call(`/v1/contacts?sort=${sort}`));
    await run(`list ${sort}, page ${targetPage}`, () => call(`/v1/contacts?sort=${sort}&cursor=${cursors.get(sort)}`));
  }
  await run('q=garcia (common name)', () => call('/v1/contacts?q=garcia'));
  await run('property_filter tier:eq:gold', () => call('/v1/contacts?property_filter=tier:eq:gold'));
  const serial = results;
  log('measuring the list queries alone');
  const queries = await measureQueries(database, seeded.orgId, cursors, targetPage, Math.min(requests, 100));

  const summary = [
    `Contacts: ${seeded.contacts.toLocaleString('en')} in one organization; page size ${PAGE_SIZE}; ` +
      `PostgreSQL at ${url.host}.`,
    '',
    `Through HTTP, ${concurrency} requests in flight, ${requests} per scenario:`,
    '',
    table(concurrent),
    '',
    'Through HTTP, one request at a time:',
    '',
    table(serial),
    '',
    'The list queries alone (no HTTP), one at a time:',
    '',
    table(queries),
  ].join('\n');
  process.stdout.write(`${summary}\n`);
  await app.close();
  await database.close();
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

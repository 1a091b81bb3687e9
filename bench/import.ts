// `npm run bench:import` (decisions §12, D42, D65): `crm contacts import` of BENCH_IMPORT_ROWS contacts
// (default 100,000; 10,000 with BENCH_QUICK=1) from a CSV, as its own process (the CLI, through the public API over
// HTTP, within the organization's real rate budget of 20 requests a second) against the app listening on
// 127.0.0.1 on PostgreSQL, in contacts/s, with the CLI's peak RSS. And the endpoint alone: one batch of 100 new
// contacts at a time, p50/p99. The baseline, in the same run and database: the same rows written by bare
// multi-row INSERTs of 100 (no API, no checks), so the ratio is the cost of the API, its checks, events and HTTP.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_import is made on it)
//   BENCH_IMPORT_ROWS    rows in the file
//   BENCH_IMPORT_BATCHES batches of the endpoint-alone row, default 300
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createMemoryRateLimitStore } from '../src/http/rate-limit.ts';
import { newId } from '../src/lib/ids.ts';
import { wire } from '../src/wiring.ts';
import { freshDatabase, log, unlimited } from './bench-database.ts';
import { measure } from './measure.ts';
import { recordSummary } from './summary.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const rows = Number(process.env.BENCH_IMPORT_ROWS ?? (process.env.BENCH_QUICK === '1' ? 10_000 : 100_000));
const endpointBatches = Number(process.env.BENCH_IMPORT_BATCHES ?? 300);
const ADMIN = 'bench-admin';
const TARGET_RATE = 2000;
const round = (value: number) => Math.round(value).toLocaleString('en-US');

/** Runs the CLI import as its own process; answers its result, wall time and peak RSS (reported at its exit). */
function runCli(file: string, env: Record<string, string>) {
  // A preloaded module reports the process's peak RSS on stderr as it exits.
  const reportRss = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss '+process.resourceUsage().maxRSS+'\\n'))`;
  const args = [
    '--import',
    reportRss,
    join(root, 'src/cli/main.ts'),
    'contacts',
    'import',
    file,
    '--match-on',
    'email',
  ];
  return new Promise<{ seconds: number; imported: number; rssMb: number }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (status) => {
      const seconds = (performance.now() - started) / 1000;
      if (status !== 0) return reject(new Error(`crm contacts import exited ${status}: ${stderr.slice(-2000)}`));
      const rss = Number(/maxrss (\d+)/.exec(stderr)?.[1] ?? 0);
      resolve({ seconds, imported: JSON.parse(stdout).imported, rssMb: Math.round(rss / 1024) });
    });
  });
}

async function main(): Promise<void> {
  // A connection may take more than the default 2 s to open on a machine this loaded: that is not an outage here.
  const database = await openDatabase({
    databaseUrl: await freshDatabase('crm_bench_import'),
    poolSize: 10,
    connectTimeoutMs: 10_000,
  });
  await migrateToLatest(database.db);
  // The CLI meets the real budget (decisions §4: 20 requests a second); the endpoint-alone row measures the server.
  const budgeted = await buildApp(wire({ database, rateLimitStore: createMemoryRateLimitStore(), adminToken: ADMIN }));
  const open = await buildApp(wire({ database, rateLimitStore: unlimited, adminToken: ADMIN }));
  const baseUrl = await budgeted.listen({ port: 0, host: '127.0.0.1' });
  const openUrl = await open.listen({ port: 0, host: '127.0.0.1' });
  const admin = async (url: string, body: unknown) =>
    (
      await budgeted.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      })
    ).json();
  const orgWithKey = async (name: string) => {
    const org = await admin('/admin/v1/organizations', { name });
    return { org, key: (await admin(`/admin/v1/organizations/${org.id}/api-keys`, {})).key as string };
  };
  const importer = await orgWithKey('Import bench');
  const endpoint = await orgWithKey('Endpoint bench');
  const bare = await admin('/admin/v1/organizations', { name: 'Baseline' });

  const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const file = join(dir, 'contacts.csv');
  const lines = ['email,first_name,last_name,phone,country,city'];
  for (let index = 0; index < rows; index++) {
    lines.push(`c${index}@example.com,First${index},Last${index},+1555${String(index).padStart(7, '0')},MX,Lima`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);

  // Baseline: bare INSERTs of 100 rows, no API, one after another.
  const baseline = await measure('bare INSERT of 100', Math.ceil(rows / 100), 1, async (batch) => {
    const done = batch * 100;
    await database.db
      .insertInto('contacts')
      .values(
        Array.from({ length: Math.min(100, rows - done) }, (_, i) => ({
          org_id: bare.id,
          id: newId('ct'),
          email: `c${done + i}@example.com`,
          first_name: `First${done + i}`,
          last_name: `Last${done + i}`,
          phone: `+1555${String(done + i).padStart(7, '0')}`,
          country: 'MX',
          city: 'Lima',
          messaging_status: 'unverified',
          origin: 'API',
        })),
      )
      .execute();
  });
  const baselineRate = baseline.throughput * 100;

  // The endpoint alone: one batch of 100 new contacts at a time, over HTTP, no budget. A 503 (the shared server out
  // of connections for a moment, say) is waited out as its Retry-After says, counted, and stays in the latency.
  let unavailable = 0;
  const single = await measure('batch-upsert of 100 new', endpointBatches, 1, async (batch) => {
    const body = JSON.stringify({
      match_on: 'email',
      items: Array.from({ length: 100 }, (_, i) => ({
        email: `e${batch * 100 + i}@example.com`,
        first_name: `First${i}`,
        phone: `+1666${String(batch * 100 + i).padStart(7, '0')}`,
        country: 'MX',
      })),
    });
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${openUrl}/v1/contacts/batch-upsert`, {
        method: 'POST',
        headers: { authorization: `Bearer ${endpoint.key}`, 'content-type': 'application/json' },
        body,
      });
      const text = await response.text();
      if (response.status === 200) return;
      if (response.status !== 503 || attempt >= 10)
        throw new Error(`batch-upsert answered ${response.status}: ${text}`);
      unavailable += 1;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  });
  const singleRate = single.throughput * 100;

  const load = loadavg()[0]?.toFixed(1);
  const cli = await runCli(file, { CRM_API_KEY: importer.key, CRM_BASE_URL: baseUrl });
  if (cli.imported !== rows) throw new Error(`imported ${cli.imported} of ${rows}`);
  const importRate = rows / cli.seconds;
  const serverRssMb = Math.round(process.memoryUsage().rss / 1024 / 1024);

  log(`load average ${load} before the import, ${loadavg()[0]?.toFixed(1)} after; ${unavailable} 503s waited out`);
  log('| what | contacts | contacts/s | ratio to baseline | p50 ms | p99 ms | RSS MB |');
  log('| --- | --- | --- | --- | --- | --- | --- |');
  log(
    `| baseline: bare INSERT of 100 | ${rows} | ${round(baselineRate)} | 1.00 | ${baseline.p50.toFixed(1)} | ${baseline.p99.toFixed(1)} | |`,
  );
  log(
    `| POST /v1/contacts/batch-upsert, 100 new, 1 in flight | ${endpointBatches * 100} | ${round(singleRate)} | ` +
      `${(singleRate / baselineRate).toFixed(2)} | ${single.p50.toFixed(1)} | ${single.p99.toFixed(1)} | ${serverRssMb} (server) |`,
  );
  log(
    `| crm contacts import (own process, budget 20 req/s) | ${rows} | ${round(importRate)} | ` +
      `${(importRate / baselineRate).toFixed(2)} | | | ${cli.rssMb} (CLI) |`,
  );
  const baselineLabel = `bare INSERT of 100 (same database): ${round(baselineRate)} contacts/s`;
  recordSummary([
    {
      path: 'contacts import (CSV, batch-upsert)',
      row: `${round(rows)} rows, the CLI as its own process, budget 20 req/s, load ${load}`,
      baseline: baselineLabel,
      value: `${round(importRate)} contacts/s`,
      ratio: importRate / baselineRate,
      p50Ms: null,
      p99Ms: null,
      rssMb: cli.rssMb,
      target: '≈ 2,000 contacts/s (decisions §12)',
      met: importRate >= TARGET_RATE * 0.9,
    },
    {
      path: 'POST /v1/contacts/batch-upsert',
      row: `one batch of 100 new contacts, 1 in flight, ${endpointBatches} batches`,
      baseline: `${baselineLabel}; p50 ${baseline.p50.toFixed(1)} ms per 100`,
      value: `${round(singleRate)} contacts/s`,
      ratio: singleRate / baselineRate,
      p50Ms: single.p50,
      p99Ms: single.p99,
      rssMb: serverRssMb,
      // A budget's 20 batches a second fit in one connection's second.
      target: 'p50 ≤ 50 ms (20 batches/s on one connection)',
      met: single.p50 <= 50,
    },
  ]);
  await budgeted.close();
  await open.close();
  await database.close();
}

await main();

// `npm run bench:import`: `crm contacts import` (decisions §12) of BENCH_IMPORT_ROWS contacts (default 100,000)
// from a CSV, through the public API over HTTP (the app listening on 127.0.0.1, PostgreSQL), in contacts/s. The
// baseline, in the same run and database: the same rows written by bare multi-row INSERTs of 100 (no API, no
// checks), so the ratio is the cost of the API's checks, events and HTTP per contact.
//
//   BENCH_DATABASE_URL   server to use (a fresh database crm_bench_import is made on it)
//   BENCH_IMPORT_ROWS    rows in the file, default 100000
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrmClient } from '../sdk/src/index.ts';
import { buildApp } from '../src/app.ts';
import { importContacts } from '../src/contact-import.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { newId } from '../src/lib/ids.ts';
import { wire } from '../src/wiring.ts';
import { benchServer, freshDatabase, log, unlimited } from './bench-database.ts';

const _server = benchServer;
const rows = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const ADMIN = 'bench-admin';
const rssMb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);

async function main(): Promise<void> {
  const database = await openDatabase({ databaseUrl: await freshDatabase('crm_bench_import'), poolSize: 10 });
  await migrateToLatest(database.db);
  const app = await buildApp(wire({ database, rateLimitStore: unlimited, adminToken: ADMIN }));
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const admin = async (url: string, body: unknown) =>
    (
      await app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      })
    ).json();
  const org = await admin('/admin/v1/organizations', { name: 'Import bench' });
  const { key } = await admin(`/admin/v1/organizations/${org.id}/api-keys`, {});
  const bare = await admin('/admin/v1/organizations', { name: 'Baseline' });

  const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
  const file = join(dir, 'contacts.csv');
  const lines = ['email,first_name,last_name,phone,country,city'];
  for (let index = 0; index < rows; index++) {
    lines.push(`c${index}@example.com,First${index},Last${index},+1555${String(index).padStart(7, '0')},MX,Lima`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);

  // Baseline: bare INSERTs of 100 rows, no API.
  let started = performance.now();
  for (let done = 0; done < rows; done += 100) {
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
  }
  const baselineRate = rows / ((performance.now() - started) / 1000);

  started = performance.now();
  const result = await importContacts(new CrmClient({ apiKey: key, baseUrl }), file, 'email', {
    tty: false,
    write: () => {},
  });
  const importRate = result.imported / ((performance.now() - started) / 1000);
  if (result.imported !== rows) throw new Error(`imported ${result.imported} of ${rows}`);

  log(`| what | contacts | contacts/s | ratio to baseline | RSS MB |`);
  log(`| --- | --- | --- | --- | --- |`);
  log(`| baseline: bare INSERT of 100 | ${rows} | ${Math.round(baselineRate)} | 1.00 | |`);
  log(
    `| crm contacts import (batch-upsert of 100 over HTTP) | ${rows} | ${Math.round(importRate)} | ${(importRate / baselineRate).toFixed(2)} | ${rssMb()} |`,
  );
  await app.close();
  await database.close();
}

await main();

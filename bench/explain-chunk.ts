// `node bench/explain-chunk.ts [chunks]`: where an audience chunk's time goes (issue 22). On the organization that
// `npm run bench:audience` seeded (its database is kept), a new audience broadcast is accepted and its first chunks
// are added by the worker's own step, with PostgreSQL's auto_explain logging every statement of more than 20 ms with
// its plan, buffers and trigger times (nested statements and triggers included) into the server's log; this prints
// the part of the log those chunks wrote. No fan-out runs.
//
//   BENCH_DATABASE_URL   the server (default postgres://postgres@127.0.0.1:5432/crm_bench_audience)
//   PG_LOG               the server's log file (default /var/log/postgresql/postgresql-15-main.log)
import { openSync, readSync, statSync } from 'node:fs';
import { sql } from 'kysely';
import { buildApp } from '../src/app.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { materializeChunk } from '../src/modules/broadcasts/audience-materialize.ts';
import { wire } from '../src/wiring.ts';
import { log, poster, unlimited } from './bench-database.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench_audience';
const pgLog = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const chunks = Number(process.argv[2] ?? 3);
const ADMIN = 'bench-admin';

// auto_explain for this process's connections only (a superuser's session setting; the pool passes PGOPTIONS on).
process.env.PGOPTIONS = [
  '-c session_preload_libraries=auto_explain',
  '-c auto_explain.log_min_duration=20',
  '-c auto_explain.log_analyze=on',
  '-c auto_explain.log_buffers=on',
  '-c auto_explain.log_triggers=on',
  '-c auto_explain.log_nested_statements=on',
].join(' ');

const database = await openDatabase({ databaseUrl: url, poolSize: 4 });
const { db } = database;
await migrateToLatest(db);
const org = await sql<{ org_id: string; template_id: string }>`select t.org_id, t.id as template_id
  from templates t where t.name = 'bench_audience' order by t.created_at desc limit 1`.execute(db);
const found = org.rows[0];
if (!found) throw new Error('run `npm run bench:audience` first: its organization is not in this database');
const wiring = wire({ database, rateLimitStore: unlimited, adminToken: ADMIN, fanout: { perNumberPerSecond: null } });
const app = await buildApp(wiring);
const call = poster(app);
const { key } = await call(`/admin/v1/organizations/${found.org_id}/api-keys`, {}, ADMIN);
const created = await call(
  '/v1/broadcasts',
  { template_id: found.template_id, audience: {}, variables: { 'body.offer': '20%' } },
  key,
);
log(`broadcast ${created.id}: started, then ${chunks} chunks`);
await wiring.audiences.runOnce(); // starts it (and adds its first chunk)
const from = statSync(pgLog).size;
for (let i = 0; i < chunks; i++) {
  const started = performance.now();
  const added = await materializeChunk(db, 5000);
  log(`chunk ${i + 1}: ${added} recipients in ${(performance.now() - started).toFixed(0)} ms`);
}
await sql`update broadcasts set stored_status = 'cancelled' where org_id = ${found.org_id} and id = ${created.id}`.execute(
  db,
);
await app.close();
await database.close();
const size = statSync(pgLog).size - from;
const buffer = Buffer.alloc(size);
readSync(openSync(pgLog, 'r'), buffer, 0, size, from);
process.stdout.write(buffer.toString('utf8'));

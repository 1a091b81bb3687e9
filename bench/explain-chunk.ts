// `node bench/explain-chunk.ts [chunks]`: where an audience chunk's time goes. On the organization that
// `npm run bench:audience` seeded (its database is kept), a new audience broadcast is accepted and its first chunks
// are added by the worker's own step, with PostgreSQL's auto_explain logging every statement of more than 20 ms with
// its plan, buffers and trigger times (nested statements and triggers included) into the server's log; this prints
// the part of the log those chunks wrote. No fan-out runs.
//
//   BENCH_DATABASE_URL   the server (default postgres://postgres@127.0.0.1:5432/crm_bench_audience)
//   PG_LOG               the server's log file (default /var/log/postgresql/postgresql-15-main.log)
import { openSync, readSync, statSync } from 'node:fs';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { broadcastMoves } from '../src/modules/broadcasts/broadcasts.repo.ts';
import { materializeChunk } from '../src/modules/recipients/audience-materialize.ts';
import { startSeededAudience } from './audience-seeded.ts';
import { log } from './bench-database.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench_audience';
const pgLog = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const chunks = Number(process.argv[2] ?? 3);

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
const broadcast = await startSeededAudience(database);
log(`broadcast ${broadcast.broadcastId}: started, then ${chunks} chunks`);
const from = statSync(pgLog).size;
for (let i = 0; i < chunks; i++) {
  const started = performance.now();
  const added = await materializeChunk(db, broadcastMoves, 5000);
  log(`chunk ${i + 1}: ${added} recipients in ${(performance.now() - started).toFixed(0)} ms`);
}
await broadcast.finish();
await database.close();
const size = statSync(pgLog).size - from;
const buffer = Buffer.alloc(size);
readSync(openSync(pgLog, 'r'), buffer, 0, size, from);
process.stdout.write(buffer.toString('utf8'));

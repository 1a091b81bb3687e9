// `node bench/audience-floor.ts [chunks]`: how far an audience chunk is from the floor of what it must write.
// On the organization that `npm run bench:audience` seeded (its database is kept), chunks of 5,000 in turn:
//   - the product's: a new audience broadcast's chunks, added by the worker's own step (the account's 24-hour window
//     emptied first, so every phone is new to it, as in a first campaign), no fan-out beside them;
//   - the same rows written by one bare keyset `INSERT … SELECT` into a copy of the recipients' table with its
//     indexes (`like … including all`: the four indexes a queued row enters, no trigger, so no 24-hour window);
//   - the same into a copy without indexes (the bench's own baseline, keyset chunks here instead of one statement).
// Prints each kind's chunk times (p50, min, max) and recipients a second.
//
//   BENCH_DATABASE_URL   the server (default postgres://postgres@127.0.0.1:5432/crm_bench_audience)
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { broadcastMoves } from '../src/modules/broadcasts/broadcasts.repo.ts';
import { materializeChunk } from '../src/modules/recipients/audience-materialize.ts';
import { startSeededAudience } from './audience-seeded.ts';
import { log } from './bench-database.ts';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm_bench_audience';
const chunks = Number(process.argv[2] ?? 6);
const SIZE = 5000;

const database = await openDatabase({ databaseUrl: url, poolSize: 4 });
const { db } = database;
await migrateToLatest(db);
for (const copy of ['floor_indexed', 'floor_bare']) await sql`drop table if exists ${sql.table(copy)}`.execute(db);
await sql`create table floor_indexed (like broadcast_recipients including all)`.execute(db);
await sql`create table floor_bare (like broadcast_recipients including defaults)`.execute(db);
// Every phone new to the 24-hour window, as in a first campaign; the broadcast's first chunk is not timed.
const found = await startSeededAudience(database, async ({ org_id }) => {
  await sql`delete from messaging_window_phones where org_id = ${org_id}`.execute(db);
  await sql`update messaging_windows set phones = 0 where org_id = ${org_id}`.execute(db);
  await sql`vacuum analyze messaging_window_phones`.execute(db);
});
const org = found.org_id;

/** One keyset chunk of the same contacts, in the same order, as the product reads them, into `table`. */
function bareChunk(table: 'floor_indexed' | 'floor_bare', after: { at: string; id: string }, position: number) {
  return sql<{ at: string; id: string }>`
    with k as (
      select c.id, c.phone, c.first_name, c.created_at, row_number() over (order by c.created_at, c.id) as n
      from (select * from contacts c where c.org_id = ${org} and c.deleted_at is null and c.phone is not null
        and (c.created_at, c.id) > (${after.at}::timestamptz, ${after.id})
        order by c.created_at, c.id limit ${SIZE}) c
    ), inserted as (
      insert into ${sql.table(table)} (org_id, broadcast_id, position, account_id, channel_id, contact_id, phone,
        send_values, status)
      select ${org}, ${found.broadcastId}, ${position} + n - 1, ${found.account_id}, ${found.channel_id}, id, phone,
        array[first_name], 'queued' from k
      returning 1
    )
    select created_at::text as at, id from k where n = (select count(*) from inserted)`.execute(db);
}

const times: Record<string, number[]> = { product: [], floor_indexed: [], floor_bare: [] };
const cursors = {
  floor_indexed: { at: '-infinity', id: '' },
  floor_bare: { at: '-infinity', id: '' },
};
for (let i = 0; i < chunks; i++) {
  let started = performance.now();
  const added = await materializeChunk(db, broadcastMoves, SIZE);
  (times.product as number[]).push(performance.now() - started);
  if (added !== SIZE) throw new Error(`the product's chunk added ${added}, not ${SIZE}: seed a larger audience`);
  for (const table of ['floor_indexed', 'floor_bare'] as const) {
    started = performance.now();
    const last = (await bareChunk(table, cursors[table], i * SIZE)).rows[0];
    (times[table] as number[]).push(performance.now() - started);
    if (!last) throw new Error('the contacts ran out: seed a larger audience');
    cursors[table] = last;
  }
}
await found.finish();
for (const copy of ['floor_indexed', 'floor_bare']) await sql`drop table ${sql.table(copy)}`.execute(db);
await database.close();

const rows = Object.entries(times).map(([kind, ms]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] as number;
  return `| ${kind} | ${p50.toFixed(0)} | ${(sorted[0] as number).toFixed(0)}–${(sorted.at(-1) as number).toFixed(0)} | ${Math.round((SIZE * 1000) / p50).toLocaleString('en-US')} |`;
});
log(`${chunks} chunks of ${SIZE} each, in turn`);
process.stdout.write(
  ['| Chunk of 5,000 | p50 ms | min–max ms | recipients/s at p50 |', '|---|---:|---:|---:|', ...rows, ''].join('\n'),
);

import { type Kysely, sql } from 'kysely';

// decisions §11: `broadcast.finished` is emitted exactly once. The statement that detects a broadcast's end sets
// `finished_at` where it is still null, so of two workers that both see the end only one emits the event.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('broadcasts').addColumn('finished_at', 'timestamptz').execute();
  // Broadcasts that ended before this migration emit nothing: they are finished already.
  await sql`update broadcasts b set finished_at = b.updated_at
    where b.stored_status is not null
       or not exists (select 1 from broadcast_recipients r where r.org_id = b.org_id and r.broadcast_id = b.id
                        and r.status in ('queued', 'sending', 'cancelled'))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('broadcasts').dropColumn('finished_at').execute();
}

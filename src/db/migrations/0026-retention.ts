import { type Kysely, sql } from 'kysely';

// Retention (D182): the pruning task finds what is old through an index instead of scanning tables that
// grow with every event. Finished deliveries by when they finished (pending ones, the queue, are left out of the
// index), and events by when they were recorded.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index webhook_deliveries_finished_idx on webhook_deliveries (updated_at)
    where status <> 'pending'`.execute(db);
  await sql`create index webhook_events_created_idx on webhook_events (created_at)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_events_created_idx`.execute(db);
  await sql`drop index webhook_deliveries_finished_idx`.execute(db);
}

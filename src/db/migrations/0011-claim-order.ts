import { type Kysely, sql } from 'kysely';

// The fan-out's claim reads queued recipients in due order (next_attempt_at, broadcast_id, position). With only
// (next_attempt_at) indexed, every due row was read and sorted for each batch (287 ms at 140,000 queued rows); this
// index gives the claim its order, so a batch reads about as many entries as it claims whatever the backlog. It
// replaces the due index, whose column it leads with. A global queue index: the claim serves every organization.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index broadcast_recipients_claim_idx
    on broadcast_recipients (next_attempt_at, broadcast_id, position) where status = 'queued'`.execute(db);
  await sql`drop index if exists broadcast_recipients_due_idx`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists broadcast_recipients_due_idx
    on broadcast_recipients (next_attempt_at) where status = 'queued'`.execute(db);
  await sql`drop index if exists broadcast_recipients_claim_idx`.execute(db);
}

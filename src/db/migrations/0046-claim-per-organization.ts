import { type Kysely, sql } from 'kysely';

// D318: the fan-out claims one organization at a time, so its queue index leads with the organization: a claim reads
// the organization's due rows in due order (next_attempt_at, broadcast_id, position) however many other
// organizations have queued rows, and "which organizations have due rows" is one probe each. It replaces the global
// index of migration 0011, whose columns it keeps after `org_id`.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index broadcast_recipients_org_claim_idx
    on broadcast_recipients (org_id, next_attempt_at, broadcast_id, position) where status = 'queued'`.execute(db);
  await sql`drop index if exists broadcast_recipients_claim_idx`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists broadcast_recipients_claim_idx
    on broadcast_recipients (next_attempt_at, broadcast_id, position) where status = 'queued'`.execute(db);
  await sql`drop index if exists broadcast_recipients_org_claim_idx`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Campaign features (decisions §13, §14): a contact's opt-out, and a broadcast that retries another's failures.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('contacts')
    .addColumn('opted_out', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('opted_out_at', 'timestamptz')
    .execute();
  // decisions §14: `GET /v1/contacts?opted_out=true` reads the (few) opted-out contacts of an organization.
  await sql`create index contacts_opted_out_idx on contacts (org_id) where opted_out and deleted_at is null`.execute(
    db,
  );

  await db.schema.alterTable('broadcasts').addColumn('retry_of', 'text').execute();
  await db.schema
    .alterTable('broadcast_recipients')
    .addColumn('retry_of_broadcast_id', 'text')
    .addColumn('retry_of_position', 'integer')
    .execute();
  // decisions §13: a recipient is retried by at most one live retry at a time. A retry row holds its original
  // recipient until it fails (or is cancelled): while it is queued, in flight or reached, no other retry can take it.
  await sql`create unique index broadcast_recipients_retry_uq
    on broadcast_recipients (org_id, retry_of_broadcast_id, retry_of_position)
    where retry_of_broadcast_id is not null and status not in ('failed', 'cancelled')`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists broadcast_recipients_retry_uq`.execute(db);
  await db.schema
    .alterTable('broadcast_recipients')
    .dropColumn('retry_of_broadcast_id')
    .dropColumn('retry_of_position')
    .execute();
  await db.schema.alterTable('broadcasts').dropColumn('retry_of').execute();
  await sql`drop index if exists contacts_opted_out_idx`.execute(db);
  await db.schema.alterTable('contacts').dropColumn('opted_out').dropColumn('opted_out_at').execute();
}

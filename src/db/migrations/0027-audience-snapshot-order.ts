import { type Kysely, sql } from 'kysely';

// decisions §16, D189: an audience chunk reads the next contacts of the snapshot in (created_at, id) order after the
// checkpoint. With the index's key ending at created_at, the planner read every contact after the checkpoint and
// sorted them for each chunk of 5,000 (95,000 rows per chunk at 100,000 contacts, a million at a million); with `id`
// in the key, the checkpoint is the scan's start and the chunk reads its 5,000 entries in order.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index contacts_created_id_idx on contacts (org_id, created_at, id) where deleted_at is null`.execute(
    db,
  );
  await sql`drop index contacts_created_idx`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index contacts_created_idx on contacts (org_id, created_at) where deleted_at is null`.execute(db);
  await sql`drop index contacts_created_id_idx`.execute(db);
}

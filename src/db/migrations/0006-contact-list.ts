import { type Kysely, sql } from 'kysely';

// The contact list at a million contacts (issue 9): `q`'s trigram index scoped by organization, so a search
// reads the matches of one organization only (btree_gin lets the GIN index lead with org_id, like every other
// index on tenant data).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists btree_gin`.execute(db);
  await sql`create index contacts_search_org_trgm_idx on contacts using gin (org_id, search_text gin_trgm_ops)
    where deleted_at is null`.execute(db);
  await sql`drop index if exists contacts_search_trgm_idx`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists contacts_search_trgm_idx on contacts using gin (search_text gin_trgm_ops)
    where deleted_at is null`.execute(db);
  await sql`drop index if exists contacts_search_org_trgm_idx`.execute(db);
}

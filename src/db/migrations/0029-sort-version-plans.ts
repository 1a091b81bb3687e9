import { type Kysely, sql } from 'kysely';

// D201: the trigger that keeps a contact's replaced sort version (contacts_keep_sort_version, migration 0003) plans
// its statements at every call. PL/pgSQL caches a statement's plan per connection; after five calls it settles on a
// generic plan, made while `contact_sort_versions` was still small, when a sequential scan of its few pages costs
// less than the primary key. That plan stayed for the connection's life while the table grew with every moved
// contact: the fan-out's first messages of an audience of 100,000 read every version kept (≈ 250 pages) for each
// contact, 30 ms per group of 16.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter function contacts_keep_sort_version() set plan_cache_mode = force_custom_plan`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter function contacts_keep_sort_version() reset plan_cache_mode`.execute(db);
}

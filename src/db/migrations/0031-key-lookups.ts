import { type Kysely, sql } from 'kysely';

// D208: a lookup by primary key takes the primary key. Two secondary indexes led with `org_id` like their table's
// primary key (org_id, id) and, while the table had no statistics (a new database; PGlite until its first ANALYZE),
// the planner costed them the same for `org_id = … and id = …` and took them, reading every row of the organization
// for each lookup: the listing index of broadcasts (it holds `id`, so it even looked cheaper, index-only) for each
// recipient a fan-out claim joins to its broadcast (30 ms for a claim of 64 in an organization with 400 broadcasts),
// and at each group's end check; the account index of channels likewise. Both become partial on a condition that
// is always true, so that only a statement that states it can use them: the broadcasts list says
// `created_at > '-infinity'` (not `is not null`: PostgreSQL 17, PGlite's, drops that from a query on a NOT NULL
// column, and the index could no longer be proven); a lookup of channels by account implies
// `account_id is not null` by itself.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index broadcasts_list_idx`.execute(db);
  await sql`create index broadcasts_list_idx on broadcasts (org_id, created_at desc, id desc)
    where created_at > '-infinity'`.execute(db);
  await sql`drop index channels_account_idx`.execute(db);
  await sql`create index channels_account_idx on channels (org_id, account_id) where account_id is not null`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index channels_account_idx`.execute(db);
  await sql`create index channels_account_idx on channels (org_id, account_id)`.execute(db);
  await sql`drop index broadcasts_list_idx`.execute(db);
  await sql`create index broadcasts_list_idx on broadcasts (org_id, created_at desc, id desc)`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// D359: the worker's sweep of broadcasts that ended unseen reads, per organization, its unfinished broadcasts, and
// first which organizations have any: a partial index of the unfinished ones, led by the organization (a year of
// finished history stays out of it).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index broadcasts_unfinished_idx on broadcasts (org_id) where finished_at is null`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists broadcasts_unfinished_idx`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// decisions §19 (D253): the conversations list's `assignee=unassigned|ai` and `priority` filters, each with an index
// leading with org_id in the default order (newest activity first). `assignee=<user>`, `status`, `team_id` and
// `sort=waiting_since` have theirs from 0037.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index conversations_assignee_type_idx
    on conversations (org_id, assignee_type, last_activity_at desc, id desc)`.execute(db);
  await sql`create index conversations_priority_idx
    on conversations (org_id, priority, last_activity_at desc, id desc)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_priority_idx').execute();
  await db.schema.dropIndex('conversations_assignee_type_idx').execute();
}

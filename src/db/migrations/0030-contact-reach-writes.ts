import { type Kysely, sql } from 'kysely';

// D206: what the fan-out pays per accepted hand-off beside the recipient.
// - Contacts leave room in their pages (fillfactor 70), so that the write of a hand-off's reach (messaging_status,
//   last_contacted_at: no indexed column, D206) is a HOT update: one heap record instead of an entry in each of the
//   contact's 15 indexes, its trigram index among them. It applies to pages written from now on; an operator may
//   rewrite the table (`VACUUM FULL contacts`) to give older pages the room too.
// - Conversations and messages no longer check their organization row: their keys to the contact, the channel and
//   the conversation lead with `org_id` and are checked, and organizations are never deleted. Each check took a
//   share lock on the one organization row from every concurrent transaction (two per message).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table contacts set (fillfactor = 70)`.execute(db);
  await sql`alter table conversations drop constraint if exists conversations_org_id_fkey`.execute(db);
  await sql`alter table messages drop constraint if exists messages_org_id_fkey`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table messages add constraint messages_org_id_fkey foreign key (org_id) references organizations (id)`.execute(
    db,
  );
  await sql`alter table conversations add constraint conversations_org_id_fkey
    foreign key (org_id) references organizations (id)`.execute(db);
  await sql`alter table contacts reset (fillfactor)`.execute(db);
}

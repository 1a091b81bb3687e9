import { type Kysely, sql } from 'kysely';

// D218: what each message a hand-off records pays beyond its rows and indexes. The foreign keys from a conversation
// to its contact and its number, and from a message to its conversation, go: contacts, numbers and conversations are
// never deleted, and every conversation and message is written by a statement that has just read (or written) the
// rows it names. Each key's check was a query of its own per row, and the number's a lock that every concurrent
// transaction of the number shares (a multixact per group): ≈ 23 µs of PostgreSQL's time per message in the fan-out.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages drop constraint messages_conversation_fk`.execute(db);
  await sql`alter table conversations drop constraint conversations_channel_fk`.execute(db);
  await sql`alter table conversations drop constraint conversations_contact_fk`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table conversations add constraint conversations_contact_fk
    foreign key (org_id, contact_id) references contacts (org_id, id)`.execute(db);
  await sql`alter table conversations add constraint conversations_channel_fk
    foreign key (org_id, channel_id) references channels (org_id, id)`.execute(db);
  await sql`alter table messages add constraint messages_conversation_fk
    foreign key (org_id, conversation_id) references conversations (org_id, id)`.execute(db);
}

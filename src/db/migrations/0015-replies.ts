import { type Kysely, sql } from 'kysely';

// Replies in conversations (decisions §15) and stable failure codes (D134).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  // The customer-service window and the unread count, kept on the conversation row: an inbound message and a read
  // call each update that one row, so concurrent ones serialize on its lock and the count stays exact.
  await sql`alter table conversations
    add column last_inbound_at timestamptz,
    add column unread_count integer not null default 0`.execute(db);
  await sql`update conversations c set last_inbound_at = m.last_inbound_at, unread_count = m.inbound
    from (select org_id, conversation_id, max(created_at) as last_inbound_at, count(*)::int as inbound
          from messages where direction = 'inbound' group by org_id, conversation_id) m
    where c.org_id = m.org_id and c.id = m.conversation_id`.execute(db);
  await sql`create index conversations_unread_idx on conversations (org_id, last_message_at, id)
    where unread_count > 0`.execute(db);

  // Media both ways; the message answered; the platform's own words for a failure beside its stable code.
  await sql`alter table messages
    add column media jsonb,
    add column platform_media_id text,
    add column reply_to text,
    add column error_message text`.execute(db);
  await sql`alter table broadcast_recipients add column error_message text`.execute(db);

  // The replies' hand-off queue: one row per reply until the platform answered it. `seq` is the accepted order;
  // the answering transaction holds the conversation's row lock, so within a conversation it is the commit order.
  await sql`create table reply_handoffs (
    org_id text not null,
    message_id text not null,
    conversation_id text not null,
    seq bigint generated always as identity,
    request jsonb not null,
    state text not null default 'queued' check (state in ('queued', 'marked')),
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    lease_until timestamptz,
    lease_token text,
    handoff_started_at timestamptz,
    created_at timestamptz not null default now(),
    primary key (org_id, message_id),
    foreign key (org_id, message_id) references messages (org_id, id)
  )`.execute(db);
  await sql`create index reply_handoffs_conversation_idx on reply_handoffs (org_id, conversation_id, seq)`.execute(db);
  await sql`create index reply_handoffs_due_idx on reply_handoffs (next_attempt_at, seq) where state = 'queued'`.execute(
    db,
  );
  await sql`create index reply_handoffs_marked_idx on reply_handoffs (handoff_started_at) where state = 'marked'`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists reply_handoffs`.execute(db);
  await sql`alter table broadcast_recipients drop column if exists error_message`.execute(db);
  await sql`alter table messages drop column if exists media, drop column if exists platform_media_id,
    drop column if exists reply_to, drop column if exists error_message`.execute(db);
  await sql`drop index if exists conversations_unread_idx`.execute(db);
  await sql`alter table conversations drop column if exists last_inbound_at, drop column if exists unread_count`.execute(
    db,
  );
}

import { type Kysely, sql } from 'kysely';

// The automation engine (decisions §20): per conversation, when its last away message went and how many assistant
// messages it has had (guardrails); and the assistant's work queue — one row per contact message the assistant
// owns, written in the transaction that records the message, claimed by a worker with FOR UPDATE SKIP LOCKED and a
// lease, one conversation at a time.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table conversation_automation (
    org_id text not null,
    conversation_id text not null,
    away_sent_at timestamptz,
    ai_replies integer not null default 0,
    primary key (org_id, conversation_id)
  )`.execute(db);

  await sql`create table assistant_jobs (
    org_id text not null,
    id text not null,
    conversation_id text not null,
    message_id text not null,
    attempts integer not null default 0,
    lease_until timestamptz,
    lease_token text,
    created_at timestamptz not null default now(),
    primary key (org_id, id)
  )`.execute(db);
  // One job per contact message, whatever redelivers it.
  await sql`create unique index assistant_jobs_message_uq on assistant_jobs (org_id, message_id)`.execute(db);
  // A conversation's jobs in order (only its oldest is claimable), and the claim's scan by age.
  await sql`create index assistant_jobs_conversation_idx on assistant_jobs (org_id, conversation_id, created_at, id)`.execute(
    db,
  );
  await sql`create index assistant_jobs_due_idx on assistant_jobs (created_at, id)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists assistant_jobs`.execute(db);
  await sql`drop table if exists conversation_automation`.execute(db);
}

import { type Kysely, sql } from 'kysely';

// Automation and the AI assistant (decisions §20): an organization's business hours and away message, its rules and
// their runs (kept 30 days), and its assistant's settings (the provider's API key sealed like endpoint secrets).
// Every table leads its primary key with org_id, and every foreign key carries it (the product runs on Citus).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table business_hours (
    org_id text not null references organizations (id),
    enabled boolean not null default false,
    week jsonb not null default '[]',
    away_message jsonb,
    updated_at timestamptz not null default now(),
    primary key (org_id)
  )`.execute(db);

  await sql`create table automation_rules (
    org_id text not null references organizations (id),
    id text not null,
    name text not null,
    active boolean not null default true,
    event text not null,
    conditions jsonb not null,
    actions jsonb not null,
    stop boolean not null default false,
    position integer not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    primary key (org_id, id)
  )`.execute(db);
  await sql`create index automation_rules_order_idx on automation_rules (org_id, event, position, id)`.execute(db);

  // A rule's runs: what each of its actions did for one contact message. Deleted with the rule.
  await sql`create table automation_rule_runs (
    org_id text not null,
    id text not null,
    rule_id text not null,
    conversation_id text not null,
    message_id text not null,
    actions jsonb not null,
    created_at timestamptz not null default now(),
    primary key (org_id, id),
    foreign key (org_id, rule_id) references automation_rules (org_id, id) on delete cascade
  )`.execute(db);
  await sql`create index automation_rule_runs_list_idx on automation_rule_runs (org_id, rule_id, created_at desc, id desc)`.execute(
    db,
  );
  // Retention: the pruning task finds old runs through this index.
  await sql`create index automation_rule_runs_created_idx on automation_rule_runs (created_at)`.execute(db);

  await sql`create table ai_assistants (
    org_id text not null references organizations (id),
    enabled boolean not null default false,
    mode text not null default 'draft',
    instructions text not null default '',
    faqs jsonb not null default '[]',
    channel_ids jsonb not null default '[]',
    handoff_team_id text,
    handoff_message text not null,
    max_replies_per_conversation integer not null default 10,
    provider_base_url text,
    provider_model text,
    -- Sealed (lib/secrets-box.ts) under the key named by api_key_key_id; never shown.
    provider_api_key text,
    api_key_key_id text,
    updated_at timestamptz not null default now(),
    primary key (org_id)
  )`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists ai_assistants`.execute(db);
  await sql`drop table if exists automation_rule_runs`.execute(db);
  await sql`drop table if exists automation_rules`.execute(db);
  await sql`drop table if exists business_hours`.execute(db);
}

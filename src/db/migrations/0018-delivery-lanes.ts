import { type Kysely, sql } from 'kysely';
import { installSubscriptionRule } from './webhook-record-events.ts';

// Deliveries (D99, D98, D148):
// - lanes: conversational events (`message.*`, and the test `ping`) are lane 0, every other event lane 1; an
//   endpoint's claim takes each lane in its own due order with its own in-flight allowance, so a message never
//   queues behind an import's `contact.*` backlog. The per-endpoint indexes lead with the lane.
// - attempt_log: each attempt's time, duration, status code and error, newest last (the deliveries log shows it).
// - secrets_key_id: the key (SECRETS_KEY) that encrypts `secret` and `previous_secret`; null while a row still holds
//   them in clear (rows written before this migration, encrypted at the next start).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries add column lane smallint not null default 1,
    add column attempt_log jsonb not null default '[]'::jsonb`.execute(db);
  await sql`update webhook_deliveries set lane = 0
    where status = 'pending' and (event_type like 'message.%' or event_type = 'ping')`.execute(db);
  await sql`drop index webhook_deliveries_endpoint_due_idx`.execute(db);
  await sql`create index webhook_deliveries_endpoint_due_idx on webhook_deliveries
    (org_id, endpoint_id, lane, next_attempt_at) where status = 'pending'`.execute(db);
  await sql`drop index webhook_deliveries_leased_idx`.execute(db);
  await sql`create index webhook_deliveries_leased_idx on webhook_deliveries (org_id, endpoint_id, lane)
    where status = 'pending' and lease_token is not null`.execute(db);
  await sql`alter table webhook_endpoints add column secrets_key_id text`.execute(db);
  // The rule now writes each delivery's lane (modules/events/subscription-rule.ts owns its text; D334).
  await installSubscriptionRule(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_endpoints drop column secrets_key_id`.execute(db);
  await sql`drop index webhook_deliveries_leased_idx`.execute(db);
  await sql`create index webhook_deliveries_leased_idx on webhook_deliveries (org_id, endpoint_id)
    where status = 'pending' and lease_token is not null`.execute(db);
  await sql`drop index webhook_deliveries_endpoint_due_idx`.execute(db);
  await sql`create index webhook_deliveries_endpoint_due_idx on webhook_deliveries
    (org_id, endpoint_id, next_attempt_at) where status = 'pending'`.execute(db);
  await sql`alter table webhook_deliveries drop column lane, drop column attempt_log`.execute(db);
}

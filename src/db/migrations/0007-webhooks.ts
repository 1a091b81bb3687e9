import { type Kysely, sql } from 'kysely';
import { installSubscriptionRule } from './webhook-record-events.ts';

// Events to API clients (decisions §11): endpoints, the outbox of events, and one delivery row per (endpoint, event).
// The delivery rows are the work queue: workers claim them with FOR UPDATE SKIP LOCKED and a lease that is the row's
// `next_attempt_at` pushed forward, so a dead worker's claims come due again by themselves.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    // A rotation keeps signing with the previous secret too until this time (24 hours).
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    // The first failed attempt since the last success: five days of failures disable the endpoint.
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['org_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // The exact JSON body every delivery of this event sends (and signs), written once.
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_events_pk', ['org_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // pending -> succeeded | failed
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // A manual retry allows exactly one more attempt; null follows the retry schedule.
    .addColumn('attempt_limit', 'integer')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Set while a worker holds the row; its result is recorded only under the same token.
    .addColumn('lease_token', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('webhook_deliveries_pk', ['org_id', 'id'])
    .addForeignKeyConstraint(
      'webhook_deliveries_endpoint_fk',
      ['org_id', 'endpoint_id'],
      'webhook_endpoints',
      ['org_id', 'id'],
      (c) => c.onDelete('cascade'),
    )
    .addForeignKeyConstraint('webhook_deliveries_event_fk', ['org_id', 'event_id'], 'webhook_events', ['org_id', 'id'])
    .execute();
  // One delivery per endpoint and event; the log lists an endpoint's deliveries newest event first.
  await sql`create unique index webhook_deliveries_endpoint_event_uq on webhook_deliveries
    (org_id, endpoint_id, event_id)`.execute(db);
  await sql`create index webhook_deliveries_event_idx on webhook_deliveries (org_id, event_id)`.execute(db);
  // The queue: what is due across all organizations, and per endpoint (fair claims, in-flight counts).
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at)
    where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_endpoint_due_idx on webhook_deliveries
    (org_id, endpoint_id, next_attempt_at) where status = 'pending'`.execute(db);
  // Attempts in flight (and leases left by a dead worker), counted per endpoint at each claim.
  await sql`create index webhook_deliveries_leased_idx on webhook_deliveries (org_id, endpoint_id)
    where status = 'pending' and lease_token is not null`.execute(db);

  // The outbox's subscription rule, a SQL function owned by modules/events/subscription-rule.ts (D334): its frozen
  // copy installed here and by any migration that changes it.
  await installSubscriptionRule(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function webhook_record_events(text, jsonb, timestamptz, text)`.execute(db);
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}

import { type Kysely, sql } from 'kysely';

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

  // The outbox write (src/modules/events/events.ts), as a function so that PostgreSQL keeps its plans: a call for an
  // organization without an enabled endpoint costs one cached index probe, and one with endpoints one statement.
  // p_only_endpoint (the test ping) targets one endpoint whatever it subscribes to.
  await sql`
    create function webhook_record_events(p_org text, p_events jsonb, p_now timestamptz, p_only_endpoint text)
    returns integer language plpgsql as $fn$
    declare
      queued integer;
    begin
      if not exists (select 1 from webhook_endpoints where org_id = p_org and enabled) then
        return 0;
      end if;
      with input as (
        select x.id, x.type, x.payload
        from jsonb_to_recordset(p_events) as x(id text, type text, payload text)
      ),
      targets as (
        select i.id as event_id, i.type, e.id as endpoint_id
        from input i
        join webhook_endpoints e on e.org_id = p_org and e.enabled
          and (case when p_only_endpoint is null then e.events ? i.type or e.events ? '*'
                    else e.id = p_only_endpoint end)
      ),
      stored as (
        insert into webhook_events (org_id, id, type, payload, created_at)
        select p_org, i.id, i.type, i.payload, p_now
        from input i
        where i.id in (select event_id from targets)
      )
      insert into webhook_deliveries (org_id, id, endpoint_id, event_id, event_type, next_attempt_at, created_at,
        updated_at)
      select p_org, 'whd_' || replace(gen_random_uuid()::text, '-', ''), t.endpoint_id, t.event_id, t.type,
        now(), now(), now()
      from targets t;
      get diagnostics queued = row_count;
      return queued;
    end
    $fn$`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function webhook_record_events(text, jsonb, timestamptz, text)`.execute(db);
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}

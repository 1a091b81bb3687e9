import { type Kysely, sql } from 'kysely';

// Broadcasts and their recipients. The recipient rows are the work queue: workers claim them with
// FOR UPDATE SKIP LOCKED and a lease (see src/worker/fanout.ts).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('broadcasts')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('template_name', 'text', (c) => c.notNull())
    .addColumn('template_language', 'text', (c) => c.notNull())
    .addColumn('template_category', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    // Only the stored states (`cancelled`, `stopped_low_balance`); in_progress/completed are derived.
    .addColumn('stored_status', 'text')
    .addColumn('requested', 'integer', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('idempotency_key', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('broadcasts_pk', ['org_id', 'id'])
    .execute();
  await sql`create index broadcasts_list_idx on broadcasts (org_id, created_at desc, id desc)`.execute(db);

  await db.schema
    .createTable('broadcast_recipients')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    // The send components, resolved when the request was accepted: the worker needs nothing else.
    .addColumn('send_components', 'jsonb', (c) => c.notNull())
    // queued -> sending -> sent -> delivered -> read, or failed; cancelled for an abandoned tail.
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('error', 'text')
    .addColumn('error_code', 'integer')
    .addColumn('platform_message_id', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('lease_until', 'timestamptz')
    .addColumn('lease_token', 'text')
    // Set just before the platform is called: a lease that expires after this point has an unknown outcome.
    .addColumn('handoff_started_at', 'timestamptz')
    .addColumn('charged', 'numeric(20, 6)', (c) => c.notNull().defaultTo(0))
    .addColumn('queued_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('reached_at', 'timestamptz')
    .addColumn('sent_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('read_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('broadcast_recipients_pk', ['org_id', 'broadcast_id', 'position'])
    .addForeignKeyConstraint('broadcast_recipients_broadcast_fk', ['org_id', 'broadcast_id'], 'broadcasts', [
      'org_id',
      'id',
    ])
    .execute();
  // The queue: what is due, and what a dead worker left behind.
  await sql`create index broadcast_recipients_due_idx on broadcast_recipients (next_attempt_at)
    where status = 'queued'`.execute(db);
  await sql`create index broadcast_recipients_leased_idx on broadcast_recipients (lease_until)
    where status = 'sending'`.execute(db);
  // Status webhooks find a recipient by the platform's message id.
  await sql`create unique index broadcast_recipients_platform_message_uq on broadcast_recipients
    (org_id, platform_message_id) where platform_message_id is not null`.execute(db);
  // The rolling 24-hour limit counts recent distinct phones per messaging account.
  await sql`create index broadcast_recipients_account_recent_idx on broadcast_recipients
    (org_id, account_id, queued_at)`.execute(db);
  await sql`create index broadcast_recipients_listing_idx on broadcast_recipients
    (org_id, broadcast_id, status, position)`.execute(db);

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text')
    // Which request holds the key: only that request may complete it (a takeover after a stale lock changes it).
    .addColumn('claim_token', 'text')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['org_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();

  // Hand-offs per number per wall-clock second, shared by every worker process (the per-number throughput cap).
  await db.schema
    .createTable('channel_send_windows')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('channel_send_windows_pk', ['org_id', 'channel_id', 'window_start'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['channel_send_windows', 'idempotency_keys', 'broadcast_recipients', 'broadcasts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

import { type Kysely, sql } from 'kysely';

// Templates, the webhook dedupe record, conversations and messages (D43, D44, D48). Every key leads with org_id.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('business_account_id', 'text', (c) => c.notNull())
    .addColumn('platform_template_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('components', 'jsonb', (c) => c.notNull())
    .addColumn('parameter_format', 'text', (c) => c.notNull())
    .addColumn('catalog_send_defaults', 'jsonb')
    .addColumn('rejected_reason', 'text')
    .addColumn('quality_rating', 'text')
    // The platform's time of the last status webhook applied: an older one arriving late is ignored.
    .addColumn('status_event_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .addPrimaryKeyConstraint('templates_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('templates_account_fk', ['org_id', 'account_id'], 'messaging_accounts', ['org_id', 'id'])
    .execute();
  // decisions §7: a name is unique per business account and language among undeleted templates; deleting frees it.
  await sql`create unique index templates_name_uq on templates (org_id, account_id, name, language)
    where deleted_at is null`.execute(db);
  // Webhooks name a template by the platform's id.
  await db.schema
    .createIndex('templates_platform_id_idx')
    .on('templates')
    .columns(['org_id', 'platform_template_id'])
    .execute();

  // One row per applied webhook event: a replayed or concurrent duplicate finds its key taken and changes nothing.
  await db.schema
    .createTable('processed_webhook_events')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('processed_webhook_events_pk', ['org_id', 'event_key'])
    .execute();
  await db.schema
    .createIndex('processed_webhook_events_received_idx')
    .on('processed_webhook_events')
    .column('received_at')
    .execute();

  await db.schema
    .createTable('conversations')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('last_message_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('conversations_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('conversations_contact_fk', ['org_id', 'contact_id'], 'contacts', ['org_id', 'id'])
    .addForeignKeyConstraint('conversations_channel_fk', ['org_id', 'channel_id'], 'channels', ['org_id', 'id'])
    .execute();
  // One conversation per contact and connected number; concurrent first messages meet on this index.
  await db.schema
    .createIndex('conversations_contact_channel_uq')
    .on('conversations')
    .columns(['org_id', 'contact_id', 'channel_id'])
    .unique()
    .execute();
  await db.schema
    .createIndex('conversations_recent_idx')
    .on('conversations')
    .columns(['org_id', 'last_message_at', 'id'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('contact_id', 'text', (c) => c.notNull())
    .addColumn('channel_id', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('template_id', 'text')
    // The contact's side of the exchange (sender of an inbound message, recipient of an outbound one), as it was.
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('platform_message_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('read_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('messages_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('messages_conversation_fk', ['org_id', 'conversation_id'], 'conversations', [
      'org_id',
      'id',
    ])
    .addCheckConstraint('messages_sender_ck', sql`sender in ('contact', 'agent', 'ai', 'system')`)
    .addCheckConstraint(
      'messages_status_ck',
      sql`status in ('received', 'sending', 'sent', 'delivered', 'read', 'failed')`,
    )
    .execute();
  // Status webhooks find a message by the platform's id; a redelivered inbound message is stored once.
  await sql`create unique index messages_platform_id_uq on messages (org_id, platform_message_id)
    where platform_message_id is not null`.execute(db);
  await db.schema
    .createIndex('messages_conversation_idx')
    .on('messages')
    .columns(['org_id', 'conversation_id', 'created_at', 'id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['messages', 'conversations', 'processed_webhook_events', 'templates']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

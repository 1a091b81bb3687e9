import { type Kysely, sql } from 'kysely';

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('trial', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('trial_ends_at', 'timestamptz')
    .addColumn('subscription_status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addPrimaryKeyConstraint('api_keys_pk', ['org_id', 'id'])
    .execute();
  // Authentication finds a key by its hash alone (the organization is not known yet).
  await db.schema.createIndex('api_keys_key_hash_uq').on('api_keys').column('key_hash').unique().execute();

  await db.schema
    .createTable('messaging_accounts')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('business_account_id', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('balance', 'numeric(20, 6)', (c) => c.notNull().defaultTo(0))
    .addColumn('prices', 'jsonb', (c) => c.notNull())
    .addColumn('messaging_limit_24h', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('messaging_accounts_pk', ['org_id', 'id'])
    .execute();
  // Webhooks find their organization by the platform's account id.
  await db.schema
    .createIndex('messaging_accounts_business_account_uq')
    .on('messaging_accounts')
    .column('business_account_id')
    .unique()
    .execute();
  await db.schema.createIndex('messaging_accounts_id_idx').on('messaging_accounts').column('id').execute();

  await db.schema
    .createTable('channels')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('live'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('removed_at', 'timestamptz')
    .addPrimaryKeyConstraint('channels_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('channels_account_fk', ['org_id', 'account_id'], 'messaging_accounts', ['org_id', 'id'])
    .execute();
  await db.schema.createIndex('channels_account_idx').on('channels').columns(['org_id', 'account_id']).execute();
  // Webhooks find the number by the platform's phone number id; a live number is connected once.
  await sql`create unique index channels_phone_number_id_live_uq on channels (phone_number_id) where status = 'live'`.execute(
    db,
  );

  await db.schema
    .createTable('app_state')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['channels', 'messaging_accounts', 'api_keys', 'organizations', 'app_state']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

import { type Kysely, sql } from 'kysely';

// The console's people (decisions §17): users of one organization, their server-side sessions (only a hash of the
// token), one-time sign-in links, and the failed sign-ins that throttle guessing.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_sign_in_at', 'timestamptz')
    .addPrimaryKeyConstraint('users_pk', ['org_id', 'id'])
    .execute();
  // Sign-in starts from an email alone (no organization yet): one person, one address, across organizations.
  await sql`create unique index users_email_uq on users (lower(email))`.execute(db);
  await db.schema.createIndex('users_id_idx').on('users').column('id').execute();

  await db.schema
    .createTable('user_sessions')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_sessions_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('user_sessions_user_fk', ['org_id', 'user_id'], 'users', ['org_id', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute();
  // A request finds its session by the hash of the cookie's token (the organization is not known yet).
  await db.schema.createIndex('user_sessions_token_uq').on('user_sessions').column('token_hash').unique().execute();
  await db.schema.createIndex('user_sessions_user_idx').on('user_sessions').columns(['org_id', 'user_id']).execute();

  await db.schema
    .createTable('user_sign_in_links')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addPrimaryKeyConstraint('user_sign_in_links_pk', ['org_id', 'id'])
    .addForeignKeyConstraint('user_sign_in_links_user_fk', ['org_id', 'user_id'], 'users', ['org_id', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute();
  await db.schema
    .createIndex('user_sign_in_links_token_uq')
    .on('user_sign_in_links')
    .column('token_hash')
    .unique()
    .execute();

  // Attempts counted per email address (lower-cased), whether or not a user has it: no organization is known.
  await db.schema
    .createTable('sign_in_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('attempted_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sign_in_attempts_email_idx')
    .on('sign_in_attempts')
    .columns(['email', 'attempted_at'])
    .execute();
  await db.schema.createIndex('sign_in_attempts_at_idx').on('sign_in_attempts').column('attempted_at').execute();

  // The console's live stream (decisions §17) rides on the events outbox: each server process that holds open
  // streams for an organization keeps a row here (refreshed while they are open), and the outbox write notifies it
  // on commit. An organization without an open console pays one index probe per outbox write, nothing more.
  await db.schema
    .createTable('console_streams')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('process_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('console_streams_pk', ['org_id', 'process_id'])
    .execute();
  await db.schema.createIndex('console_streams_process_idx').on('console_streams').column('process_id').execute();
  // One notification per outbox write (not per event), with the events' types and the ids they concern; when that
  // would not fit a notification (8,000 bytes), their types alone. Delivered at commit, in commit order.
  await sql`
    create function console_notify_events(p_org text, p_events jsonb) returns integer language plpgsql as $fn$
    declare
      message text;
    begin
      if not exists (select 1 from console_streams where org_id = p_org and expires_at > now()) then
        return 0;
      end if;
      select jsonb_build_object('org_id', p_org, 'events', coalesce(jsonb_agg(distinct jsonb_strip_nulls(
          jsonb_build_object(
            'type', x.type,
            'id', case when x.type like 'broadcast.recipient.%' then null else d.data->>'id' end,
            'broadcast_id', d.data->>'broadcast_id',
            'conversation_id', d.data->>'conversation_id',
            'contact_id', d.data->>'contact_id'))), '[]'::jsonb))::text
        into message
        from jsonb_to_recordset(p_events) as x(type text, payload text)
        cross join lateral (select (x.payload::jsonb)->'data' as data) d
        where x.type <> 'ping';
      if length(message) > 7900 then
        select jsonb_build_object('org_id', p_org, 'events',
            coalesce(jsonb_agg(distinct jsonb_build_object('type', x.type)), '[]'::jsonb))::text
          into message
          from jsonb_to_recordset(p_events) as x(type text)
          where x.type <> 'ping';
      end if;
      perform pg_notify('crm_console_events', message);
      return 0;
    end
    $fn$`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function console_notify_events(text, jsonb)`.execute(db);
  await db.schema.dropTable('console_streams').execute();
  await db.schema.dropTable('sign_in_attempts').execute();
  await db.schema.dropTable('user_sign_in_links').execute();
  await db.schema.dropTable('user_sessions').execute();
  await db.schema.dropTable('users').execute();
}

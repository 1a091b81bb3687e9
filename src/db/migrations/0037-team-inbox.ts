import { type Kysely, sql } from 'kysely';

// decisions §19, conversations worked by a team (D246): every message's author and privacy (notes have no status);
// a conversation's state, owner, team, priority, labels and clocks; people's availability; teams with their members
// (who was given a conversation last, for turns); canned responses. Every new table leads its keys with org_id.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages
    add column author_id text,
    add column private boolean not null default false,
    alter column status drop not null`.execute(db);

  await sql`alter table users add column available boolean not null default true`.execute(db);

  await db.schema
    .createTable('teams')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('auto_assign', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('max_open_per_member', 'integer', (c) => c.notNull().defaultTo(20))
    // How many conversations auto-assignment has given out; its row is the lock that serializes the team's giving.
    .addColumn('turns', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('teams_pk', ['org_id', 'id'])
    .execute();
  // decisions §19: a team's name is unique ignoring case; a second one meets this index (409 duplicate).
  await sql`create unique index teams_name_uq on teams (org_id, lower(name))`.execute(db);

  await db.schema
    .createTable('team_members')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('team_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    // The team's count of given conversations when this member was last given one (0: never): the least recently
    // given first, exact even when two are given within the same clock tick.
    .addColumn('last_turn', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('team_members_pk', ['org_id', 'team_id', 'user_id'])
    .addForeignKeyConstraint('team_members_team_fk', ['org_id', 'team_id'], 'teams', ['org_id', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .addForeignKeyConstraint('team_members_user_fk', ['org_id', 'user_id'], 'users', ['org_id', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute();
  await db.schema.createIndex('team_members_user_idx').on('team_members').columns(['org_id', 'user_id']).execute();

  await sql`alter table conversations
    add column status text not null default 'open',
    add column snoozed_until timestamptz,
    add column assignee_type text,
    add column assignee_user_id text,
    add column team_id text,
    add column priority text not null default 'none',
    add column labels text[] not null default '{}',
    add column label_keys text[] not null default '{}',
    add column waiting_since timestamptz,
    add column first_reply_at timestamptz,
    add column last_activity_at timestamptz not null default now(),
    add constraint conversations_status_ck check (status in ('open', 'pending', 'snoozed', 'resolved')),
    add constraint conversations_priority_ck check (priority in ('none', 'low', 'medium', 'high', 'urgent')),
    add constraint conversations_assignee_ck check (
      (assignee_type is null and assignee_user_id is null) or (assignee_type = 'ai' and assignee_user_id is null)
      or (assignee_type = 'user' and assignee_user_id is not null)),
    add constraint conversations_team_fk foreign key (org_id, team_id) references teams (org_id, id)
      on delete set null (team_id)`.execute(db);
  // Existing conversations: their clocks from their messages (decisions §19's definitions).
  await sql`update conversations c set last_activity_at = c.last_message_at,
      first_reply_at = (select min(m.created_at) from messages m where m.org_id = c.org_id
        and m.conversation_id = c.id and m.sender in ('agent', 'ai')),
      waiting_since = (select min(m.created_at) from messages m where m.org_id = c.org_id
        and m.conversation_id = c.id and m.sender = 'contact' and m.created_at > coalesce((select max(a.created_at)
          from messages a where a.org_id = c.org_id and a.conversation_id = c.id
          and a.sender in ('agent', 'ai', 'system')), '-infinity'))`.execute(db);

  // The lists' orders and filters (decisions §19), each leading with org_id.
  await sql`create index conversations_activity_idx on conversations (org_id, last_activity_at desc, id desc)`.execute(
    db,
  );
  await sql`create index conversations_status_activity_idx
    on conversations (org_id, status, last_activity_at desc, id desc)`.execute(db);
  await sql`create index conversations_waiting_idx
    on conversations (org_id, waiting_since, created_at, id)`.execute(db);
  await sql`create index conversations_assignee_idx
    on conversations (org_id, assignee_user_id, status, last_activity_at desc, id desc)`.execute(db);
  await sql`create index conversations_team_idx
    on conversations (org_id, team_id, last_activity_at desc, id desc)`.execute(db);
  // Auto-assignment's queue: a team's open, unassigned conversations, oldest waiting first.
  await sql`create index conversations_team_queue_idx on conversations (org_id, team_id, waiting_since, created_at, id)
    where status = 'open' and assignee_type is null and team_id is not null`.execute(db);
  // The snooze worker finds ended snoozes across organizations.
  await sql`create index conversations_snoozed_idx on conversations (snoozed_until)
    where status = 'snoozed' and snoozed_until is not null`.execute(db);

  await db.schema
    .createTable('canned_responses')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('short_code', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('canned_responses_pk', ['org_id', 'id'])
    .execute();
  await sql`create unique index canned_responses_short_code_uq on canned_responses (org_id, short_code)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('canned_responses').execute();
  for (const index of [
    'conversations_activity_idx',
    'conversations_status_activity_idx',
    'conversations_waiting_idx',
    'conversations_assignee_idx',
    'conversations_team_idx',
    'conversations_team_queue_idx',
    'conversations_snoozed_idx',
  ]) {
    await db.schema.dropIndex(index).execute();
  }
  await sql`alter table conversations drop constraint conversations_team_fk,
    drop column status, drop column snoozed_until, drop column assignee_type, drop column assignee_user_id,
    drop column team_id, drop column priority, drop column labels, drop column label_keys, drop column waiting_since,
    drop column first_reply_at, drop column last_activity_at`.execute(db);
  await db.schema.dropTable('team_members').execute();
  await db.schema.dropTable('teams').execute();
  await sql`alter table users drop column available`.execute(db);
  await sql`update messages set status = 'sent' where status is null`.execute(db);
  await sql`alter table messages drop column author_id, drop column private,
    alter column status set not null`.execute(db);
}

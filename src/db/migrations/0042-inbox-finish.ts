import { type Kysely, sql } from 'kysely';

// Finishing the team inbox (decisions §19):
// - D292: when the server received each contact message (its own clock, not the platform's timestamp), so that a
//   resolve or snooze can tell the contact messages that arrived after its request did;
// - D293: the console's live stream names a note's mentions and author, so that the person mentioned is notified;
// - D294: files uploaded for replies, their bytes kept in the database until they expire.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages add column received_at timestamptz`.execute(db);

  await sql`
    create or replace function console_notify_events(p_org text, p_events jsonb) returns integer language plpgsql as $fn$
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
            'contact_id', d.data->>'contact_id',
            'author_id', case when x.type = 'conversation.note_created' then d.data->>'author_id' end,
            'mention_ids', case when x.type = 'conversation.note_created' then d.data->'mention_ids' end))),
          '[]'::jsonb))::text
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

  await sql`create table uploaded_files (
    org_id text not null,
    id text not null,
    kind text not null check (kind in ('image', 'video', 'audio', 'document')),
    mime_type text not null,
    filename text not null,
    size integer not null,
    bytes bytea not null,
    created_by text,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    primary key (org_id, id)
  )`.execute(db);
  // Retention's scan (decisions §19, D294): expired files, across organizations.
  await sql`create index uploaded_files_expiry_idx on uploaded_files (expires_at)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists uploaded_files`.execute(db);
  await sql`alter table messages drop column if exists received_at`.execute(db);
}

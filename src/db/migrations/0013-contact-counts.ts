import { type Kysely, sql } from 'kysely';

// The contact list's count without a filter (D39, decisions §2): an organization's live contacts,
// kept by the database for every writer, so that an unfiltered list reads its count from a few rows instead of
// counting 10,001 index entries per request (about 60 % of its statement).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  // Several slots per organization, each writer adding to the one of its connection, so that concurrent writers
  // of one organization rarely wait for each other's row; the count is their sum.
  await sql`create table contact_counts (
    org_id text not null,
    slot smallint not null,
    live bigint not null,
    primary key (org_id, slot)
  )`.execute(db);
  // Inserts and deletes (imports, batches) count per statement, with the statement's rows as a transition table:
  // one upsert per statement and organization however many contacts it writes. A soft delete (or an update that
  // moves a contact) counts per row, and only when deleted_at or org_id changes: other updates pay nothing.
  const add = (rows: string, sign: string) => sql`insert into contact_counts (org_id, slot, live)
      select org_id, pg_backend_pid() % 8, ${sql.raw(sign)}count(*) from ${sql.raw(rows)}
      where deleted_at is null group by org_id
      on conflict (org_id, slot) do update set live = contact_counts.live + excluded.live`;
  await sql`create function contact_counts_insert() returns trigger language plpgsql as $$
    begin ${add('counted_new', '')}; return null; end $$`.execute(db);
  await sql`create function contact_counts_delete() returns trigger language plpgsql as $$
    begin ${add('counted_old', '-')}; return null; end $$`.execute(db);
  await sql`create function contact_counts_update() returns trigger language plpgsql as $$
    begin
      if old.deleted_at is null then
        insert into contact_counts (org_id, slot, live) values (old.org_id, pg_backend_pid() % 8, -1)
        on conflict (org_id, slot) do update set live = contact_counts.live - 1;
      end if;
      if new.deleted_at is null then
        insert into contact_counts (org_id, slot, live) values (new.org_id, pg_backend_pid() % 8, 1)
        on conflict (org_id, slot) do update set live = contact_counts.live + 1;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger contact_counts_insert after insert on contacts referencing new table as counted_new
    for each statement execute function contact_counts_insert()`.execute(db);
  await sql`create trigger contact_counts_delete after delete on contacts referencing old table as counted_old
    for each statement execute function contact_counts_delete()`.execute(db);
  await sql`create trigger contact_counts_update after update of deleted_at, org_id on contacts for each row
    when (old.deleted_at is distinct from new.deleted_at or old.org_id is distinct from new.org_id)
    execute function contact_counts_update()`.execute(db);
  // The contacts that exist now, counted under a lock that holds writers back until the triggers count theirs.
  await sql`lock table contacts in share mode`.execute(db);
  await sql`insert into contact_counts (org_id, slot, live)
    select org_id, 0, count(*) from contacts where deleted_at is null group by org_id`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists contact_counts_insert on contacts`.execute(db);
  await sql`drop trigger if exists contact_counts_update on contacts`.execute(db);
  await sql`drop trigger if exists contact_counts_delete on contacts`.execute(db);
  await sql`drop function if exists contact_counts_update()`.execute(db);
  await sql`drop function if exists contact_counts_insert()`.execute(db);
  await sql`drop function if exists contact_counts_delete()`.execute(db);
  await sql`drop table if exists contact_counts`.execute(db);
}

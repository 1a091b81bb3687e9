import { type Kysely, sql } from 'kysely';

// decisions §7: the 24-hour limit counted in constant time. Per messaging account, one row per distinct phone with
// the latest `queued_at` of its live recipients (not failed or cancelled), and a counter of those rows. Triggers on
// broadcast_recipients keep them: an insert adds its live phones at once; a recipient that stops (or starts) being
// live, moves in time, or is deleted leaves a recount request that the next send of the account applies under the
// account lock (so the worker never locks a window row). The send also drops rows older than 24 hours (lazily).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('messaging_window_phones')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('last_queued_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('messaging_window_phones_pk', ['org_id', 'account_id', 'phone'])
    .execute();
  // The sweep's index. It leads with an expression of the account, not its columns, so that no lookup of one phone by
  // its full key can take it instead of the primary key (with empty statistics, as PGlite has until the worker's
  // periodic ANALYZE, the two cost the same and the planner may pick this one and scan the whole window).
  await sql`create index messaging_window_phones_expiry_idx
    on messaging_window_phones ((org_id || '/' || account_id), last_queued_at)`.execute(db);
  // Invariant: `phones` is the number of the account's rows in messaging_window_phones (expired ones included until
  // a send drops them).
  await db.schema
    .createTable('messaging_windows')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('phones', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('messaging_windows_pk', ['org_id', 'account_id'])
    .execute();
  // Append-only: written by whoever changes a recipient (the worker), taken by the account's next send.
  await db.schema
    .createTable('messaging_window_recounts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('id', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('messaging_window_recounts_pk', ['org_id', 'account_id', 'id'])
    .execute();

  // A recount finds a phone's latest live recipient by this index; it replaces the window scan's index.
  await sql`drop index if exists broadcast_recipients_account_recent_idx`.execute(db);
  await sql`create index broadcast_recipients_account_phone_idx
    on broadcast_recipients (org_id, account_id, phone, queued_at)`.execute(db);

  await sql`create function messaging_window_add() returns trigger language plpgsql as $$
    begin
      with live as (
        select org_id, account_id, phone, max(queued_at) as last_queued_at from added
        where status not in ('failed', 'cancelled')
        group by org_id, account_id, phone
        order by org_id, account_id, phone
      ), upserted as (
        insert into messaging_window_phones as w (org_id, account_id, phone, last_queued_at)
        select org_id, account_id, phone, last_queued_at from live
        on conflict (org_id, account_id, phone)
          do update set last_queued_at = greatest(w.last_queued_at, excluded.last_queued_at)
        returning w.org_id, w.account_id, (w.xmax = 0) as inserted
      )
      insert into messaging_windows as c (org_id, account_id, phones)
      select org_id, account_id, count(*) filter (where inserted) from upserted
      group by org_id, account_id
      having count(*) filter (where inserted) > 0
      on conflict (org_id, account_id) do update set phones = c.phones + excluded.phones;
      return null;
    end $$`.execute(db);
  await sql`create trigger broadcast_recipients_window_insert after insert on broadcast_recipients
    referencing new table as added for each statement execute function messaging_window_add()`.execute(db);

  await sql`create function messaging_window_recount_later() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        insert into messaging_window_recounts (org_id, account_id, phone) values (old.org_id, old.account_id, old.phone);
      end if;
      if tg_op = 'UPDATE' and (new.account_id, new.phone) is distinct from (old.account_id, old.phone) then
        insert into messaging_window_recounts (org_id, account_id, phone) values (new.org_id, new.account_id, new.phone);
      end if;
      return null;
    end $$`.execute(db);
  // Only the changes that can move the count fire (a WHEN clause costs the worker's other updates nothing).
  await sql`create trigger broadcast_recipients_window_update
    after update of status, queued_at, phone, account_id on broadcast_recipients for each row
    when ((old.status in ('failed', 'cancelled')) is distinct from (new.status in ('failed', 'cancelled'))
      or old.queued_at is distinct from new.queued_at
      or (old.account_id, old.phone) is distinct from (new.account_id, new.phone))
    execute function messaging_window_recount_later()`.execute(db);
  await sql`create trigger broadcast_recipients_window_delete after delete on broadcast_recipients for each row
    when (old.status not in ('failed', 'cancelled')) execute function messaging_window_recount_later()`.execute(db);

  // Backfill from the recipients already in the window.
  await sql`insert into messaging_window_phones (org_id, account_id, phone, last_queued_at)
    select org_id, account_id, phone, max(queued_at) from broadcast_recipients
    where queued_at > now() - interval '24 hours' and status not in ('failed', 'cancelled')
    group by org_id, account_id, phone`.execute(db);
  await sql`insert into messaging_windows (org_id, account_id, phones)
    select org_id, account_id, count(*) from messaging_window_phones group by org_id, account_id`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists broadcast_recipients_window_delete on broadcast_recipients`.execute(db);
  await sql`drop trigger if exists broadcast_recipients_window_update on broadcast_recipients`.execute(db);
  await sql`drop trigger if exists broadcast_recipients_window_insert on broadcast_recipients`.execute(db);
  await sql`drop function if exists messaging_window_recount_later()`.execute(db);
  await sql`drop function if exists messaging_window_add()`.execute(db);
  await sql`drop index if exists broadcast_recipients_account_phone_idx`.execute(db);
  await sql`create index if not exists broadcast_recipients_account_recent_idx on broadcast_recipients
    (org_id, account_id, queued_at)`.execute(db);
  for (const table of ['messaging_window_recounts', 'messaging_windows', 'messaging_window_phones']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

import { type Kysely, sql } from 'kysely';

// decisions §16: broadcasts to an audience, now or at a time. A broadcast gains its campaign columns and the state
// of its start and materialization (`phase`, the snapshot time and the keyset checkpoint of the contacts already
// added); recipients gain the `held` state (waiting for room in the account's rolling 24-hour limit), which, like
// `failed` and `cancelled`, is not counted in the messaging window until it is released.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcasts
    add column name text,
    add column audience jsonb,
    add column audience_input jsonb,
    add column send_at timestamptz,
    add column started_at timestamptz,
    add column status_reason text,
    add column held_until timestamptz,
    add column phase text,
    add column snapshot_at timestamptz,
    add column checkpoint_created_at timestamptz,
    add column checkpoint_id text,
    add column base_components jsonb,
    add column contact_tokens jsonb`.execute(db);
  // The scheduler's queue (broadcasts not started yet) and the materializer's (started, still preparing).
  await sql`create index broadcasts_unstarted_idx on broadcasts (coalesce(send_at, created_at))
    where started_at is null and phase is not null`.execute(db);
  await sql`create index broadcasts_preparing_idx on broadcasts (started_at)
    where phase = 'preparing' and started_at is not null`.execute(db);
  await sql`create index broadcasts_holding_idx on broadcasts (held_until) where held_until is not null`.execute(db);
  await sql`create index broadcast_recipients_held_idx on broadcast_recipients (org_id, broadcast_id, position)
    where status = 'held'`.execute(db);
  // The window counts live recipients: `held` ones are not live yet (same functions as migration 0009, with it).
  await sql`create or replace function messaging_window_add() returns trigger language plpgsql as $$
    begin
      with live as (
        select org_id, account_id, phone, max(queued_at) as last_queued_at from added
        where status not in ('failed', 'cancelled', 'held')
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
  await sql`drop trigger broadcast_recipients_window_update on broadcast_recipients`.execute(db);
  await sql`create trigger broadcast_recipients_window_update
    after update of status, queued_at, phone, account_id on broadcast_recipients for each row
    when ((old.status in ('failed', 'cancelled', 'held')) is distinct from (new.status in ('failed', 'cancelled', 'held'))
      or old.queued_at is distinct from new.queued_at
      or (old.account_id, old.phone) is distinct from (new.account_id, new.phone))
    execute function messaging_window_recount_later()`.execute(db);
  await sql`drop trigger broadcast_recipients_window_delete on broadcast_recipients`.execute(db);
  await sql`create trigger broadcast_recipients_window_delete after delete on broadcast_recipients for each row
    when (old.status not in ('failed', 'cancelled', 'held')) execute function messaging_window_recount_later()`.execute(
    db,
  );
  // Throughput and pair-rate errors of the platform (130429, 131056) slow a number down until this time.
  await sql`alter table channels add column slowed_until timestamptz`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table channels drop column if exists slowed_until`.execute(db);
  await sql`drop index if exists broadcast_recipients_held_idx`.execute(db);
  for (const column of [
    'name',
    'audience',
    'audience_input',
    'send_at',
    'started_at',
    'status_reason',
    'held_until',
    'phase',
    'snapshot_at',
    'checkpoint_created_at',
    'checkpoint_id',
    'base_components',
    'contact_tokens',
  ]) {
    await sql`alter table broadcasts drop column if exists ${sql.ref(column)}`.execute(db);
  }
}

import { type Kysely, sql } from 'kysely';

// D196: what each recipient insert pays beyond its row and indexes (issue 22: an audience chunk of 5,000 spent
// ≈ 55 ms in the foreign key's per-row checks and ≈ 15 ms sorting its phones in the window's trigger).
// - The foreign key to `broadcasts` goes: broadcasts are never deleted, and every insert of recipients runs in the
//   transaction that creates their broadcast (a send) or that holds its row locked (a chunk); the key checked that
//   one row again for each of the statement's rows.
// - The window trigger no longer sorts the phones it upserts: the order took the window rows' locks in key order so
//   that two admissions of one account could not deadlock, and since D183 every writer of an account's window rows
//   (sends, chunks, releases, recounts, template replies) holds the account's window lock first.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients drop constraint broadcast_recipients_broadcast_fk`.execute(db);
  await windowAdd(db, sql``);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await windowAdd(db, sql`order by org_id, account_id, phone`);
  await sql`alter table broadcast_recipients add constraint broadcast_recipients_broadcast_fk
    foreign key (org_id, broadcast_id) references broadcasts (org_id, id)`.execute(db);
}

/** Migration 0014's trigger function, with `order` as the order of the phones it upserts. */
// biome-ignore lint/suspicious/noExplicitAny: see up.
const windowAdd = (db: Kysely<any>, order: ReturnType<typeof sql>) =>
  sql`create or replace function messaging_window_add() returns trigger language plpgsql as $$
    begin
      with live as (
        select org_id, account_id, phone, max(queued_at) as last_queued_at from added
        where status not in ('failed', 'cancelled', 'held')
        group by org_id, account_id, phone
        ${order}
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

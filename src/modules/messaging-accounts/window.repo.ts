// The rolling 24-hour window of decisions §7 (distinct phones messaged from an account), every read and write of
// `messaging_windows`, `messaging_window_phones` and `messaging_window_recounts` outside the triggers that keep them
// (migrations 0009, 0014, 0019 on broadcast recipients and messages). Two locks, always taken in this order when both
// are: the account row (accounts.repo.ts; its balance: template replies and the fan-out's claims charge it) and the
// window's counter row (the 24-hour limit: sends, retries, replies outside the window and the audience's chunks take
// room in it). A send only checks the balance, so it takes the window's lock alone and never waits for the fan-out's
// claims (D183).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { readAccount } from './accounts.repo.ts';

/**
 * The account's 24-hour window, locked (its counter row, created if missing): it serialises what takes room in the
 * window, so two admissions that each fit the limit but together do not cannot both pass. Taken after the account
 * lock by those that hold both.
 */
export async function lockWindow(db: Kysely<DB>, orgId: string, accountId: string): Promise<void> {
  const locked = await sql`select 1 from messaging_windows where org_id = ${orgId} and account_id = ${accountId}
    for update`.execute(db);
  if (locked.rows.length > 0) return;
  // The first admission of the account: the row is created, and the insert's own lock holds it (a concurrent
  // creator waits for ours, then updates nothing).
  await sql`insert into messaging_windows as c (org_id, account_id, phones) values (${orgId}, ${accountId}, 0)
    on conflict (org_id, account_id) do update set phones = c.phones`.execute(db);
}

const WINDOW = sql<Date>`now() - interval '24 hours'`;

/**
 * Applies the recounts that recipients' changes left for the account (one statement, one snapshot: every request it
 * takes was committed with its change, which the recount therefore sees). Each phone's row takes the time of its
 * latest live recipient in the window, or `-infinity` (the sweep below then drops it). Every lookup is by a full key
 * (the plan does not depend on the tables' statistics, which PGlite never refreshes). Answers the rows it added.
 */
async function applyRecounts(db: Kysely<DB>, orgId: string, accountId: string): Promise<number> {
  const { rows } = await sql<{ added: number }>`
    with taken as (
      delete from messaging_window_recounts where org_id = ${orgId} and account_id = ${accountId} returning phone
    ), truth as (
      select p.phone, coalesce(greatest((select max(r.queued_at) from broadcast_recipients r
          where r.org_id = ${orgId} and r.account_id = ${accountId} and r.phone = p.phone
            and r.queued_at > ${WINDOW} and r.status not in ('failed', 'cancelled', 'held')),
          -- decisions §15: template replies outside the window count too (migration 0019).
          (select max(m.created_at) from messages m
          where m.org_id = ${orgId} and m.window_account_id = ${accountId} and m.phone = p.phone
            and m.created_at > ${WINDOW} and m.status <> 'failed')), '-infinity') as last_queued_at
      from (select distinct phone from taken) p
    ), kept as (
      insert into messaging_window_phones as w (org_id, account_id, phone, last_queued_at)
      select ${orgId}, ${accountId}, phone, last_queued_at from truth order by phone
      on conflict (org_id, account_id, phone) do update set last_queued_at = excluded.last_queued_at
      returning (w.xmax = 0) as inserted
    )
    select (count(*) filter (where inserted))::int as added from kept`.execute(db);
  return Number(rows[0]?.added ?? 0);
}

/**
 * decisions §7: distinct phones messaged from this account in the trailing 24 hours (`used`), and how many of the
 * given phones are among them (`repeated`). Takes the window's lock (lockWindow), applies pending recounts and drops
 * the rows that left the window, so its cost follows the changes since the last send, not the day's volume.
 */
export async function recentPhones(db: Kysely<DB>, orgId: string, accountId: string, phones: string[]) {
  await lockWindow(db, orgId, accountId);
  const added = await applyRecounts(db, orgId, accountId);
  // Two statements, each on the organization's shard (D317): Citus takes no subquery in an INSERT's values.
  const swept = await sql<{ n: number }>`
    with swept as (
      delete from messaging_window_phones
      where org_id = ${orgId} and org_id || '/' || account_id = ${`${orgId}/${accountId}`}
        and last_queued_at <= ${WINDOW}
      returning 1
    )
    select count(*)::int as n from swept`.execute(db);
  const { rows } = await sql<{ used: number; repeated: number }>`
    with counter as (
      insert into messaging_windows as c (org_id, account_id, phones)
      values (${orgId}, ${accountId}, ${added - Number(swept.rows[0]?.n ?? 0)})
      on conflict (org_id, account_id) do update set phones = c.phones + excluded.phones
      returning c.phones
    )
    select (select phones from counter)::int as used,
      (select count(*) from unnest(${phones}::text[]) as batch(phone)
       where (select w.last_queued_at from messaging_window_phones w
              where w.org_id = ${orgId} and w.account_id = ${accountId} and w.phone = batch.phone) > ${WINDOW})::int
        as repeated`.execute(db);
  const window = rows[0] ?? { used: 0, repeated: 0 };
  return { used: Number(window.used), repeated: Number(window.repeated) };
}

/**
 * decisions §15: a template reply outside the conversation's window takes its place in the account's 24-hour window
 * at once (its message row, not a recipient, is what migration 0019's trigger follows afterwards).
 */
export async function takePlace(db: Kysely<DB>, orgId: string, accountId: string, phone: string): Promise<void> {
  await sql`
    with upserted as (
      insert into messaging_window_phones as w (org_id, account_id, phone, last_queued_at)
      values (${orgId}, ${accountId}, ${phone}, now())
      on conflict (org_id, account_id, phone) do update set last_queued_at = greatest(w.last_queued_at, excluded.last_queued_at)
      returning (w.xmax = 0) as inserted
    )
    insert into messaging_windows as c (org_id, account_id, phones)
    select ${orgId}, ${accountId}, 1 from upserted where inserted
    on conflict (org_id, account_id) do update set phones = c.phones + excluded.phones`.execute(db);
}

/** A phone's place in the window may have changed (a late report charged a reply again): recounted at the next read. */
export async function askRecount(db: Kysely<DB>, orgId: string, accountId: string, phone: string): Promise<void> {
  await db.insertInto('messaging_window_recounts').values({ org_id: orgId, account_id: accountId, phone }).execute();
}

/**
 * The account's room in the 24-hour limit (its limit less the phones in the window), under the window's lock (taken
 * here). Not the account row's lock, which every fan-out claim of the account holds while it charges (D183).
 */
export async function roomOf(db: Kysely<DB>, orgId: string, accountId: string): Promise<number> {
  const account = await readAccount(db, orgId, accountId);
  const window = await recentPhones(db, orgId, accountId, []);
  return Math.max(0, account.messaging_limit_24h - window.used);
}

/**
 * A phone not messaged from the account within the window: it takes room in the 24-hour limit. A scalar subquery
 * (one probe of the window's key per row), not `not exists`: the planner may hash an EXISTS over the account's
 * whole window, which read every phone of it for each chunk (D170).
 */
export const takesRoom = (orgId: string, accountId: string, phone: RawBuilder<unknown>) =>
  sql<boolean>`coalesce((select w.last_queued_at <= ${WINDOW} from messaging_window_phones w
    where w.org_id = ${orgId} and w.account_id = ${accountId} and w.phone = ${phone}), true)`;

/** When the window next has room: its oldest phone's 24 hours end (a limit of 0: look again in a minute). */
export async function nextRoom(db: Kysely<DB>, orgId: string, accountId: string): Promise<Date> {
  const row = await sql<{ at: Date }>`select coalesce(min(last_queued_at) + interval '24 hours',
      now() + interval '1 minute') as at
    from messaging_window_phones where org_id = ${orgId} and account_id = ${accountId}
      and last_queued_at > ${WINDOW}`.execute(db);
  return (row.rows[0] as { at: Date }).at;
}

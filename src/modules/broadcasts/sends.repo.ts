// SQL of the send's own checks: the messaging account and the rolling 24-hour window of decisions §7, read from the
// per-account window that migration 0009's triggers keep. Two locks, always taken in this order when both are:
// the account row (its balance: template replies and the fan-out's claims charge it) and the window's counter row
// (the 24-hour limit: sends, retries, replies outside the window and the audience's chunks take room in it). A send
// only checks the balance, so it takes the window's lock alone and never waits for the fan-out's claims (D183).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

const accountRow = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('messaging_accounts')
    .select(['balance', 'prices', 'messaging_limit_24h'])
    .where('org_id', '=', orgId)
    .where('id', '=', accountId);

/** The account row, locked: what charges the balance holds it until its commit. */
export const lockAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  accountRow(db, orgId, accountId).forUpdate().executeTakeFirstOrThrow();

/** The account row as committed, unlocked: a check of the balance that reserves nothing, and the 24-hour limit. */
export const readAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  accountRow(db, orgId, accountId).executeTakeFirstOrThrow();

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

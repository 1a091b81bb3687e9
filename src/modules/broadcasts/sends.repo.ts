// SQL of the send's own checks: the messaging account (locked for the send's transaction) and the rolling
// 24-hour window of decisions §7, read from the per-account window that migration 0009's triggers keep.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

/**
 * The account row, locked: it serialises sends of one account, so two sends that each fit the 24-hour limit or the
 * balance but together do not cannot both pass.
 */
export const lockAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('messaging_accounts')
    .select(['balance', 'prices', 'messaging_limit_24h'])
    .where('org_id', '=', orgId)
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirstOrThrow();

const WINDOW = sql<Date>`now() - interval '24 hours'`;

/**
 * Applies the recounts that recipients' changes left for the account (one statement, one snapshot: every request it
 * takes was committed with its change, which the recount therefore sees). A phone with a live recipient in the
 * window keeps its row with that recipient's time; any other loses it. Answers the change in the account's rows.
 */
async function applyRecounts(db: Kysely<DB>, orgId: string, accountId: string): Promise<number> {
  const { rows } = await sql<{ delta: number }>`
    with taken as (
      delete from messaging_window_recounts where org_id = ${orgId} and account_id = ${accountId} returning phone
    ), truth as (
      select p.phone, (select max(r.queued_at) from broadcast_recipients r
                       where r.org_id = ${orgId} and r.account_id = ${accountId} and r.phone = p.phone
                         and r.queued_at > ${WINDOW} and r.status not in ('failed', 'cancelled')) as last_queued_at
      from (select distinct phone from taken) p
    ), kept as (
      insert into messaging_window_phones as w (org_id, account_id, phone, last_queued_at)
      select ${orgId}, ${accountId}, phone, last_queued_at from truth where last_queued_at is not null order by phone
      on conflict (org_id, account_id, phone) do update set last_queued_at = excluded.last_queued_at
      returning (w.xmax = 0) as inserted
    ), gone as (
      delete from messaging_window_phones w using truth t
      where w.org_id = ${orgId} and w.account_id = ${accountId} and w.phone = t.phone and t.last_queued_at is null
      returning 1
    )
    select ((select count(*) from kept where inserted) - (select count(*) from gone))::int as delta`.execute(db);
  return Number(rows[0]?.delta ?? 0);
}

/**
 * decisions §7: distinct phones messaged from this account in the trailing 24 hours (`used`), and how many of the
 * given phones are among them (`repeated`). Call it under `lockAccount`: it applies pending recounts and drops the
 * rows that left the window, so its cost follows the changes since the last send, not the day's volume.
 */
export async function recentPhones(db: Kysely<DB>, orgId: string, accountId: string, phones: string[]) {
  const delta = await applyRecounts(db, orgId, accountId);
  const { rows } = await sql<{ used: number; repeated: number }>`
    with swept as (
      delete from messaging_window_phones
      where org_id = ${orgId} and account_id = ${accountId} and last_queued_at <= ${WINDOW}
      returning 1
    ), counter as (
      insert into messaging_windows as c (org_id, account_id, phones)
      values (${orgId}, ${accountId}, ${delta} - (select count(*) from swept))
      on conflict (org_id, account_id) do update set phones = c.phones + excluded.phones
      returning c.phones
    )
    select (select phones from counter)::int as used,
      (select count(*) from messaging_window_phones
       where org_id = ${orgId} and account_id = ${accountId} and phone = any(${phones})
         and last_queued_at > ${WINDOW})::int as repeated`.execute(db);
  const window = rows[0] ?? { used: 0, repeated: 0 };
  return { used: Number(window.used), repeated: Number(window.repeated) };
}

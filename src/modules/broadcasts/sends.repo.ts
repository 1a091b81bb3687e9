// SQL of the send's own checks: the messaging account (locked for the send's transaction) and the rolling
// 24-hour window of decisions §7.
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

/**
 * decisions §7: distinct phones messaged from this account in the trailing 24 hours (`used`), and how many of the
 * given phones are among them (`repeated`), counted in the database.
 */
export async function recentPhones(db: Kysely<DB>, orgId: string, accountId: string, phones: string[]) {
  const window = await db
    .selectFrom('broadcast_recipients')
    .select([
      sql<number>`count(distinct phone)::int`.as('used'),
      sql<number>`count(distinct phone) filter (where phone = any(${phones}))::int`.as('repeated'),
    ])
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('queued_at', '>', sql<Date>`now() - interval '24 hours'`)
    .where('status', 'not in', ['failed', 'cancelled'])
    .executeTakeFirstOrThrow();
  return { used: Number(window.used), repeated: Number(window.repeated) };
}

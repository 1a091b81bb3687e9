// A messaging account's row as the messages it pays for see it: its balance, prices and 24-hour limit, read or
// locked, and every move of its balance (charge, refund, the operator's top-up). The one writer of the table (D335):
// the operator decides an account's other columns (name, business account, numbers: modules/operator/) and writes
// them through insertAccountRow and updateAccountRow.
import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { DB, MessagingAccountsTable } from '../../db/schema.ts';
import { BALANCE_TOLERANCE } from './prices.ts';

const accountRow = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('messaging_accounts')
    .select(['balance', 'prices', 'messaging_limit_24h'])
    .where('org_id', '=', orgId)
    .where('id', '=', accountId);

/** The account row, locked: what charges the balance holds it until its commit (D183: taken before the window's). */
export const lockAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  accountRow(db, orgId, accountId).forUpdate().executeTakeFirstOrThrow();

/** The account row as committed, unlocked: a check of the balance that reserves nothing, and the 24-hour limit. */
export const readAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  accountRow(db, orgId, accountId).executeTakeFirstOrThrow();

/**
 * Moves an account's balance by `change`: a charge when negative, a refund when positive. With `ifCovered` (D193)
 * only while the balance stays payable (canPay's tolerance); answers whether it moved.
 */
export async function adjustBalance(
  db: Kysely<DB>,
  orgId: string,
  accountId: string,
  change: number,
  options: { ifCovered?: boolean } = {},
): Promise<boolean> {
  if (change === 0) return true;
  const query = db
    .updateTable('messaging_accounts')
    .set({ balance: sql`balance + ${change}` })
    .where('org_id', '=', orgId)
    .where('id', '=', accountId);
  const moved = await (options.ifCovered
    ? query.where(sql<boolean>`balance + ${change} + ${sql.lit(BALANCE_TOLERANCE)} >= 0`)
    : query
  ).executeTakeFirst();
  return Number(moved.numUpdatedRows) === 1;
}

/** The operator's top-up (`PATCH /admin/v1/messaging-accounts/{id}`): the balance becomes `balance`. */
export const setBalance = (db: Kysely<DB>, orgId: string, accountId: string, balance: number) =>
  db
    .updateTable('messaging_accounts')
    .set({ balance })
    .where('org_id', '=', orgId)
    .where('id', '=', accountId)
    .execute();

/** A new account, as the operator creates it (in the transaction that claims its directory entry). */
export const insertAccountRow = (db: Kysely<DB>, row: Insertable<MessagingAccountsTable>) =>
  db.insertInto('messaging_accounts').values(row).returningAll().executeTakeFirstOrThrow();

/** The operator's change of an account's other columns (its name, prices, 24-hour limit); the balance: setBalance. */
export const updateAccountRow = (
  db: Kysely<DB>,
  orgId: string,
  accountId: string,
  patch: Updateable<MessagingAccountsTable>,
) =>
  db
    .updateTable('messaging_accounts')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();

// The shared tools of the queue's steps, at the bottom of their stack (the claim, the hand-offs and
// the repository import them; this file imports none of them): a recipient's key, the UPDATE of one recipient, the
// one UPDATE shape that changes rows a claim still holds (the batch's rows travel as arrays), and the refund of what
// such rows reserved (through the account's balance, messaging-accounts/accounts.repo.ts).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import type { DB } from '../../db/schema.ts';
import { groupBy } from '../../lib/group-by.ts';
import { adjustBalance } from '../messaging-accounts/accounts.repo.ts';

/** A broadcast recipient's primary key. */
export interface RecipientKey {
  org_id: string;
  broadcast_id: string;
  position: number;
}

/** What the held-row tools need of a claimed row (claim-charge.ts's ClaimedRow has it all). */
export interface HeldRow extends RecipientKey {
  account_id: string;
  lease_token: string;
  charged: number | string;
}

/** An UPDATE of one broadcast recipient, by its primary key. */
export const updateRecipient = (db: Kysely<DB>, key: RecipientKey) =>
  db
    .updateTable('broadcast_recipients')
    .where('org_id', '=', key.org_id)
    .where('broadcast_id', '=', key.broadcast_id)
    .where('position', '=', key.position);

export const keyOf = (row: RecipientKey) => `${row.org_id}\u0000${row.broadcast_id}\u0000${row.position}`;

/** A column of per-row values for `updateHeld`: its name, its SQL type and one value per row. */
export type Column = [name: string, type: 'text' | 'int' | 'float8', values: unknown[]];

export interface HeldChange {
  set: RawBuilder<unknown>;
  columns?: Column[];
  where?: RawBuilder<unknown>;
  returning?: RawBuilder<unknown>;
}

/** The one organization of a claim's rows (D318: a claim, and each statement on its rows, is one organization's). */
export function organizationOf(rows: readonly RecipientKey[]): string {
  const orgId = rows[0]?.org_id;
  if (orgId === undefined || rows.some((row) => row.org_id !== orgId)) {
    throw new Error('rows of one organization expected (D318)');
  }
  return orgId;
}

/**
 * The UPDATE of the given rows of a batch where each is still held under its claim's lease: the rows travel as
 * arrays that `unnest` turns back into rows (`v.<column>` in `set`), with any per-row columns given. `where`
 * narrows further. Returns the keys of the rows that changed and any columns `returning` names. A statement of its
 * own (updateHeld) or a data-modifying CTE of a larger one. The rows are one organization's, named as a constant
 * too (D318: on Citus the statement goes to that organization's shard); `clock.now` is the transaction's time, which
 * Citus takes inside `coalesce` or `case` only as a column, and `clock.epoch` the same in seconds, for arithmetic
 * with a row's values (Citus refuses a stable function beside a column: `to_timestamp(clock.epoch + v.delay)`; D317).
 */
export function heldUpdate(rows: HeldRow[], change: HeldChange): RawBuilder<unknown> {
  const orgId = organizationOf(rows);
  const columns: Column[] = [
    ['org_id', 'text', rows.map((row) => row.org_id)],
    ['broadcast_id', 'text', rows.map((row) => row.broadcast_id)],
    ['position', 'int', rows.map((row) => row.position)],
    ['lease_token', 'text', rows.map((row) => row.lease_token)],
    ...(change.columns ?? []),
  ];
  const arrays = sql.join(columns.map(([, type, values]) => sql`${values}::${sql.raw(type)}[]`));
  const names = sql.raw(columns.map(([name]) => name).join(', '));
  return sql`
    update broadcast_recipients as r set ${change.set}
    from unnest(${arrays}) as v(${names}), (select now() as now, extract(epoch from now()) as epoch) as clock
    where r.org_id = ${orgId} and r.org_id = v.org_id and r.broadcast_id = v.broadcast_id and r.position = v.position
      and r.lease_token = v.lease_token and ${change.where ?? sql`true`}
    returning r.org_id, r.broadcast_id, r.position${change.returning ? sql`, ${change.returning}` : sql``}`;
}

/** Runs heldUpdate as a statement; answers the changed rows and their keys. */
export async function updateHeld<Returned extends object = object>(
  db: Kysely<DB>,
  rows: HeldRow[],
  change: HeldChange,
) {
  // By name (D211): the rows join back by their whole key, which only the primary key leads with.
  const result = await executePrepared(db, sql<RecipientKey & Returned>`${heldUpdate(rows, change)}`);
  return { rows: result.rows, keys: new Set(result.rows.map(keyOf)) };
}

/** Gives back what the given claimed rows reserved, one balance update per account. */
export async function refund(db: Kysely<DB>, rows: HeldRow[]): Promise<void> {
  for (const group of groupBy(rows, (row) => `${row.org_id}\u0000${row.account_id}`).values()) {
    const { org_id, account_id } = group[0] as HeldRow;
    await adjustBalance(
      db,
      org_id,
      account_id,
      group.reduce((sum, row) => sum + Number(row.charged), 0),
    );
  }
}

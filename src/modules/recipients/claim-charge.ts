// The claim's second half: what the candidates cost and who pays. Rows of a number no longer live fail, the per-number
// cap lets some through (number-caps.ts), and each account's balance pays its rows in order, reserved as `charged`
// on the leased rows (D193: optimistically, by one conditional UPDATE per account, else the locked way that stops a
// broadcast the balance cannot pay).
import { sql, type Transaction } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import type { DB } from '../../db/schema.ts';
import { groupByInKeyOrder as groupBy } from '../../lib/group-by.ts';
import { adjustBalance, lockAccount, readAccount } from '../messaging-accounts/accounts.repo.ts';
import { canPay, priceOf } from '../messaging-accounts/prices.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import type { Candidate } from './claim-candidates.ts';
import { applyChannelCaps } from './number-caps.ts';
import { recordFinished, recordRecipientMoves } from './recipient-events.ts';
import { organizationOf, updateRecipient } from './recipient-held.ts';

/** A recipient this worker holds: leased under `lease_token`, its price reserved as `charged`. */
export type ClaimedRow = Omit<Candidate, 'previous_status' | 'previous_charge'> & {
  lease_token: string;
  charged: number;
};

/** The amount a stale claim reserved and never spent. */
const staleCharge = (row: Candidate) => (row.previous_status === 'sending' ? Number(row.previous_charge) : 0);

/**
 * Stops a broadcast that cannot pay for its next message; its remainder stays pending and is parked. Answers the
 * reservations of stale claims it parked, which the caller gives back to the account (it holds the account lock).
 */
async function stopForBalance(
  trx: Transaction<DB>,
  moves: BroadcastMoves,
  orgId: string,
  broadcastIds: string[],
  token: string,
): Promise<number> {
  if (broadcastIds.length === 0) return 0;
  await moves.stopForBalance(trx, orgId, broadcastIds); // the broadcasts' owner writes it (D349)
  await recordFinished(trx, moves, orgId, broadcastIds); // decisions §11: `broadcast.finished`, in this transaction
  // Parked so the due-index no longer offers them. Rows that another worker holds right now are skipped (it parks
  // its own when it finds the balance gone): waiting for them while holding the account lock could deadlock.
  const parkable = await trx
    .selectFrom('broadcast_recipients')
    .select(['broadcast_id', 'position', 'status', 'charged'])
    .where('org_id', '=', orgId)
    .where('broadcast_id', 'in', broadcastIds)
    .where((eb) =>
      eb.or([
        eb('status', '=', 'queued'),
        eb.and([
          eb('status', '=', 'sending'),
          eb('handoff_started_at', 'is', null),
          // Not this claim's own rows: they are paid and leased.
          eb.or([eb('lease_token', 'is', null), eb('lease_token', '!=', token)]),
        ]),
      ]),
    )
    .forUpdate()
    .skipLocked()
    .execute();
  for (const [broadcastId, rows] of groupBy(parkable, (row) => row.broadcast_id)) {
    await trx
      .updateTable('broadcast_recipients')
      .set({
        status: 'queued',
        lease_until: null,
        lease_token: null,
        charged: 0,
        next_attempt_at: sql`'infinity'::timestamptz`,
      })
      .where('org_id', '=', orgId)
      .where('broadcast_id', '=', broadcastId)
      .where(
        'position',
        'in',
        rows.map((row) => row.position),
      )
      .execute();
  }
  return parkable.reduce((sum, row) => sum + (row.status === 'sending' ? Number(row.charged) : 0), 0);
}

/**
 * Leases the paid rows; the first `mark` of them are marked as handed off too (the batch's first group). One
 * statement whose rows travel as arrays and join back by their whole key: with `org_id = <constant>` the plan
 * followed the organization's statistics, and for an organization that ANALYZE had not yet seen (a new tenant's
 * first large broadcast beside a year of others' history) it read every recipient of the organization by another
 * index for each claim (19,949 rows for 47, 44 ms; D197). The rows are this claim's, locked: no lock order to keep.
 */
async function leaseClaimed(trx: Transaction<DB>, rows: ClaimedRow[], leaseMs: number, token: string, mark: number) {
  if (rows.length === 0) return;
  const orgId = organizationOf(rows);
  // By name (D211): joined back by the whole key, which only the primary key leads with.
  const lease = sql`update broadcast_recipients as r set status = 'sending',
      lease_until = now() + make_interval(secs => ${leaseMs / 1000}), lease_token = ${token},
      attempts = r.attempts + 1, charged = v.charged, reached_at = coalesce(r.reached_at, clock.now),
      handoff_started_at = case when v.marked then clock.marked_at else r.handoff_started_at end,
      updated_at = now()
    from unnest(${rows.map((row) => row.broadcast_id)}::text[], ${rows.map((row) => row.position)}::int[],
      ${rows.map((row) => row.charged)}::numeric[], ${rows.map((_, index) => index < mark)}::bool[])
      as v(broadcast_id, position, charged, marked),
      -- D317: Citus takes the clock inside coalesce or case only as a column.
      (select now() as now, statement_timestamp() as marked_at) as clock
    where r.org_id = ${orgId} and r.broadcast_id = v.broadcast_id and r.position = v.position`;
  await executePrepared(trx, lease);
}

/** What one account's balance pays of a claim's rows, in order (contract: a broadcast stops at its first unpaid row). */
function payFor(group: Candidate[], account: { balance: unknown; prices: unknown }, token: string) {
  // A claim whose lease ran out before its hand-off reserved a price that was never spent: it is given back first,
  // so that claiming the row again charges it once.
  const returned = group.reduce((sum, row) => sum + staleCharge(row), 0);
  let balance = Number(account.balance) + returned;
  let spent = 0;
  const unpaid = new Set<string>();
  const unpaidStale: Candidate[] = [];
  const paid: ClaimedRow[] = [];
  for (const row of group) {
    if (row.channel_status !== 'live') continue;
    const price = priceOf(account.prices, row.template_category);
    // contract: a broadcast stops when the balance cannot pay its next message; later rows of it wait too.
    if (unpaid.has(row.broadcast_id) || !canPay(balance, price)) {
      unpaid.add(row.broadcast_id);
      if (staleCharge(row) > 0) unpaidStale.push(row);
      continue;
    }
    balance -= price;
    spent += price;
    paid.push({ ...row, attempts: row.attempts + 1, lease_token: token, charged: price });
  }
  return { paid, unpaid, unpaidStale, change: returned - spent };
}

/** Raised when the balance an optimistic claim read unlocked can no longer pay what it leased (rolls it back). */
export class BalanceMoved extends Error {}

/**
 * D193: the account row is locked last and briefly. Its balance and prices are read without a lock, the paid rows
 * leased, and only then is the balance charged, by one conditional UPDATE per account that takes its row lock until
 * the commit right after. Two workers of one account no longer take turns for the whole claim (the lease update of
 * 64 recipients rewrites every recipient index: with a year of history they waited on each other there). When the
 * unlocked balance cannot pay everything, or moved before the charge, the claim runs the locked way: lock, then pay.
 */
async function chargeOptimistically(
  trx: Transaction<DB>,
  groups: Candidate[][],
  options: { leaseMs: number; token: string; markFirst?: number | undefined },
): Promise<ClaimedRow[] | undefined> {
  const plans = [];
  for (const group of groups) {
    const { org_id, account_id } = group[0] as Candidate;
    const plan = payFor(group, await readAccount(trx, org_id, account_id), options.token);
    if (plan.unpaid.size > 0) return undefined;
    plans.push({ org_id, account_id, ...plan });
  }
  const claimed = plans.flatMap((plan) => plan.paid);
  await leaseClaimed(trx, claimed, options.leaseMs, options.token, options.markFirst ?? 0);
  for (const { org_id, account_id, change } of plans) {
    // canPay of every paid row, in order, is the final balance's (prices are never negative).
    if (!(await adjustBalance(trx, org_id, account_id, change, { ifCovered: true }))) throw new BalanceMoved();
  }
  return claimed;
}

/** The locked way: each account's row is locked before its rows are paid, so a broadcast that cannot pay stops. */
async function chargeLocked(
  trx: Transaction<DB>,
  groups: Candidate[][],
  options: { leaseMs: number; token: string; markFirst?: number | undefined; moves: BroadcastMoves },
): Promise<ClaimedRow[]> {
  const claimed: ClaimedRow[] = [];
  let toMark = options.markFirst ?? 0;
  for (const group of groups) {
    const { org_id, account_id } = group[0] as Candidate;
    const account = await lockAccount(trx, org_id, account_id);
    const { paid, unpaid, unpaidStale, change } = payFor(group, account, options.token);
    // Leased before any parking below, which leaves this claim's own rows alone.
    await leaseClaimed(trx, paid, options.leaseMs, options.token, toMark);
    toMark = Math.max(0, toMark - paid.length);
    claimed.push(...paid);
    // Stale claims left unpaid were given back above: they return to the queue without a reservation.
    for (const row of unpaidStale) {
      await updateRecipient(trx, row)
        .set({ status: 'queued', lease_until: null, lease_token: null, charged: 0 })
        .execute();
    }
    const parkedReturns = await stopForBalance(trx, options.moves, org_id, [...unpaid], options.token);
    await adjustBalance(trx, org_id, account_id, change + parkedReturns);
  }
  return claimed;
}

export async function chargeClaims(
  trx: Transaction<DB>,
  candidates: Candidate[],
  options: {
    perNumberPerSecond: number | null;
    leaseMs: number;
    token: string;
    markFirst?: number | undefined;
    /** D193: false runs the locked way at once (after an optimistic claim found the balance moved). */
    optimistic?: boolean | undefined;
    /** The broadcasts' owner's writes (a stop for the balance, an end; D349). */
    moves: BroadcastMoves;
  },
): Promise<ClaimedRow[]> {
  // A number removed since the request was accepted cannot send: those recipients fail, uncharged.
  const dead = candidates.filter((row) => row.channel_status !== 'live');
  for (const row of dead) {
    await updateRecipient(trx, row)
      .set({
        status: 'failed',
        error: 'invalid_channel',
        error_message: 'the number is no longer connected',
        reached_at: sql`coalesce(reached_at, (select now()))`, // D317: Citus takes no function in coalesce
        failed_at: sql`now()`,
        lease_until: null,
        charged: 0,
        updated_at: sql`now()`,
      })
      .execute();
  }
  await recordRecipientMoves(trx, dead, options.moves); // decisions §11: `broadcast.recipient.updated`
  const live = await applyChannelCaps(
    trx,
    candidates.filter((row) => row.channel_status === 'live'),
    options.perNumberPerSecond,
  );
  const accountWork = [...live, ...dead.filter((row) => staleCharge(row) > 0)];
  const groups = [...groupBy(accountWork, (row) => `${row.org_id}\u0000${row.account_id}`).values()];
  if (options.optimistic !== false) {
    const claimed = await chargeOptimistically(trx, groups, options);
    if (claimed) return claimed;
  }
  return chargeLocked(trx, groups, options);
}

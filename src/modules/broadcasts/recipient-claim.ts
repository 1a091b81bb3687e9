// The claim step of a recipient's life, in one transaction: lock due recipient rows (SKIP LOCKED, so workers never
// wait on each other), respect each number's per-second cap, reserve the price against the balance (one balance
// update per account and claim), and lease what was taken.

import { type Kysely, sql, type Transaction } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { groupBy as groupInOrder } from '../../lib/group-by.ts';
import { adjustBalance } from '../messaging-accounts/accounts.repo.ts';
import { canPay, priceOf } from '../messaging-accounts/prices.ts';
import { type ContactToken, componentsFiller } from './audience-components.ts';
import { recordFinished, recordRecipientMoves } from './recipient-events.ts';
import { updateRecipient } from './recipient-held.ts';

type Candidate = Awaited<ReturnType<typeof claimBatch>>[number];

/** A recipient this worker holds: leased under `lease_token`, its price reserved as `charged`. */
export type ClaimedRow = Omit<Candidate, 'previous_status' | 'previous_charge'> & {
  lease_token: string;
  charged: number;
};

/** The amount a stale claim reserved and never spent. */
const staleCharge = (row: Candidate) => (row.previous_status === 'sending' ? Number(row.previous_charge) : 0);

/** What a hand-off needs of the recipient's broadcast (an audience's base components and tokens: D219). */
const BROADCAST_COLUMNS = [
  'b.template_id',
  'b.template_name',
  'b.template_language',
  'b.template_category',
  'b.base_components',
  'b.contact_tokens',
] as const;

/** Due recipients with what their hand-off needs, from live broadcasts; `due` says which rows. */
function candidates(trx: Transaction<DB>) {
  return (
    trx
      .selectFrom('broadcast_recipients as r')
      // D204: each row finds its broadcast and its channel by their whole key, in a subquery the planner cannot
      // flatten (`offset 0`). As plain joins, the organization's key joined all three tables in one equivalence
      // class, and with no statistics for a new organization's broadcasts the planner probed them by `org_id` alone:
      // every broadcast of the organization for every row (120,480 rows, 138 ms for a claim of 64 beside 378 sends).
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('broadcasts as b')
            .select(BROADCAST_COLUMNS)
            .whereRef('b.org_id', '=', 'r.org_id')
            .whereRef('b.id', '=', 'r.broadcast_id')
            .where('b.stored_status', 'is', null)
            .offset(0)
            .as('b'),
        (join) => join.onTrue(),
      )
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('channels as ch')
            .select(['ch.phone_number_id', 'ch.status'])
            .whereRef('ch.org_id', '=', 'r.org_id')
            .whereRef('ch.id', '=', 'r.channel_id')
            // decisions §16: a number the platform told to slow down rests (platform-pacing.ts).
            .where((eb) => eb.or([eb('ch.slowed_until', 'is', null), eb('ch.slowed_until', '<=', sql<Date>`now()`)]))
            .offset(0)
            .as('ch'),
        (join) => join.onTrue(),
      )
      .select([
        'r.org_id',
        'r.broadcast_id',
        'r.position',
        'r.account_id',
        'r.channel_id',
        'r.contact_id',
        'r.phone',
        'r.send_components',
        'r.send_values',
        'r.attempts',
        ...BROADCAST_COLUMNS,
        'ch.phone_number_id',
        'ch.status as channel_status',
        'r.status as previous_status',
        'r.charged as previous_charge',
      ])
  );
}

/**
 * The batch: first the rows whose lease ran out before their hand-off started (nothing was sent, so they can be
 * taken again; rare, found by the leased-rows index), then queued rows in due order. Two statements rather than one
 * `OR`, so that the queued rows are read in the order of their index (`broadcast_recipients_claim_idx`, migration
 * 0011) and a claim reads about `limit` entries whatever the backlog: with the `OR`, every due row was read and
 * sorted for each batch (287 ms at 140,000 queued rows).
 */
export async function claimBatch(trx: Transaction<DB>, options: { limit: number; leaseMs: number; token: string }) {
  // D192: the plan must not depend on the tables' statistics. Right after an audience's chunks or a large send they
  // are stale (a new broadcast's queued rows estimated at one, its paused or cancelled neighbours making the join
  // look empty), and the planner read and sorted every queued row of the broadcast for each claim (84,880 rows,
  // 333 ms, where the index gives 64 in order in a few ms). Sorting and whole-table scans are priced out for these
  // two statements only.
  // (An error aborts the transaction, whose end discards the settings: nothing to restore then.)
  await plannerSettings(trx, 'off');
  const rows = await dueCandidates(trx, options);
  await plannerSettings(trx, 'on');
  return rows;
}

/** Sorting and sequential scans for the rest of the transaction (`set local`), in one round trip. */
const plannerSettings = (trx: Transaction<DB>, value: 'on' | 'off') =>
  sql`select set_config('enable_sort', ${value}, true), set_config('enable_seqscan', ${value}, true)`.execute(trx);

async function dueCandidates(trx: Transaction<DB>, options: { limit: number; leaseMs: number; token: string }) {
  const expired = await candidates(trx)
    .where('r.status', '=', 'sending')
    .where('r.handoff_started_at', 'is', null)
    .where('r.lease_until', '<', sql<Date>`now()`)
    .orderBy('r.lease_until')
    .limit(options.limit)
    .forUpdate('r')
    .skipLocked()
    .execute();
  if (expired.length >= options.limit) return expired;
  const queued = await candidates(trx)
    .where('r.status', '=', 'queued')
    .where('r.next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('r.next_attempt_at')
    .orderBy('r.broadcast_id')
    .orderBy('r.position')
    .limit(options.limit - expired.length)
    .forUpdate('r')
    .skipLocked()
    .execute();
  return withComponents([...expired, ...queued]);
}

/**
 * Each row with its send components: its own (a send's), or its broadcast's base with its values put in (an
 * audience's, D219), the base read once per broadcast of the batch.
 */
function withComponents<
  T extends {
    broadcast_id: string;
    send_components: unknown;
    send_values: (string | null)[] | null;
    base_components: unknown;
    contact_tokens: unknown;
  },
>(rows: T[]) {
  const fillers = new Map<string, ReturnType<typeof componentsFiller>>();
  const fillerOf = (row: T) => {
    let filler = fillers.get(row.broadcast_id);
    if (!filler) {
      filler = componentsFiller(row.base_components, (row.contact_tokens ?? []) as ContactToken[]);
      fillers.set(row.broadcast_id, filler);
    }
    return filler;
  };
  return rows.map((row) => {
    const { send_values, base_components: _base, contact_tokens: _tokens, ...rest } = row;
    return { ...rest, send_components: rest.send_components ?? fillerOf(row)(send_values ?? []) };
  });
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  // Locks are taken in key order so that two workers can never wait on each other in a cycle.
  return new Map([...groupInOrder(items, key).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function applyChannelCaps(trx: Transaction<DB>, rows: Candidate[], cap: number | null): Promise<Candidate[]> {
  if (cap === null || rows.length === 0) return rows;
  const { window } = await sql<{ window: number }>`select floor(extract(epoch from now()))::bigint as window`
    .execute(trx)
    .then((result) => result.rows[0] as { window: number });
  const taken: Candidate[] = [];
  for (const group of groupBy(rows, (row) => `${row.org_id}\u0000${row.channel_id}`).values()) {
    const { org_id, channel_id } = group[0] as Candidate;
    await trx
      .insertInto('channel_send_windows')
      .values({ org_id, channel_id, window_start: Number(window), count: 0 })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    const current = await trx
      .selectFrom('channel_send_windows')
      .select('count')
      .where('org_id', '=', org_id)
      .where('channel_id', '=', channel_id)
      .where('window_start', '=', Number(window))
      .forUpdate()
      .executeTakeFirstOrThrow();
    const allowed = Math.max(0, Math.min(group.length, cap - current.count));
    if (allowed === 0) continue;
    await trx
      .updateTable('channel_send_windows')
      .set({ count: sql`count + ${allowed}` })
      .where('org_id', '=', org_id)
      .where('channel_id', '=', channel_id)
      .where('window_start', '=', Number(window))
      .execute();
    taken.push(...group.slice(0, allowed));
  }
  return taken;
}

/**
 * Stops a broadcast that cannot pay for its next message; its remainder stays pending and is parked. Answers the
 * reservations of stale claims it parked, which the caller gives back to the account (it holds the account lock).
 */
async function stopForBalance(
  trx: Transaction<DB>,
  orgId: string,
  broadcastIds: string[],
  token: string,
): Promise<number> {
  if (broadcastIds.length === 0) return 0;
  await trx
    .updateTable('broadcasts')
    .set({ stored_status: 'stopped_low_balance', updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('id', 'in', broadcastIds)
    .where('stored_status', 'is', null)
    .execute();
  await recordFinished(trx, orgId, broadcastIds); // decisions §11: `broadcast.finished`, in this transaction
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
  // By name (D211): joined back by the whole key, which only the primary key leads with.
  const lease = sql`update broadcast_recipients as r set status = 'sending',
      lease_until = now() + make_interval(secs => ${leaseMs / 1000}), lease_token = ${token},
      attempts = r.attempts + 1, charged = v.charged, reached_at = coalesce(r.reached_at, now()),
      handoff_started_at = case when v.marked then clock_timestamp() else r.handoff_started_at end,
      updated_at = now()
    from unnest(${rows.map((row) => row.org_id)}::text[], ${rows.map((row) => row.broadcast_id)}::text[],
      ${rows.map((row) => row.position)}::int[], ${rows.map((row) => row.charged)}::numeric[],
      ${rows.map((_, index) => index < mark)}::bool[]) as v(org_id, broadcast_id, position, charged, marked)
    where r.org_id = v.org_id and r.broadcast_id = v.broadcast_id and r.position = v.position`;
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

/** An account's balance and prices, its row locked (`FOR UPDATE`) or read as committed. */
function accountOf(trx: Transaction<DB>, orgId: string, accountId: string, lock: boolean) {
  const query = trx
    .selectFrom('messaging_accounts')
    .select(['balance', 'prices'])
    .where('org_id', '=', orgId)
    .where('id', '=', accountId);
  return (lock ? query.forUpdate() : query).executeTakeFirstOrThrow();
}

/** Raised when the balance an optimistic claim read unlocked can no longer pay what it leased (rolls it back). */
class BalanceMoved extends Error {}

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
    const plan = payFor(group, await accountOf(trx, org_id, account_id, false), options.token);
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
  options: { leaseMs: number; token: string; markFirst?: number | undefined },
): Promise<ClaimedRow[]> {
  const claimed: ClaimedRow[] = [];
  let toMark = options.markFirst ?? 0;
  for (const group of groups) {
    const { org_id, account_id } = group[0] as Candidate;
    const account = await accountOf(trx, org_id, account_id, true);
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
    const parkedReturns = await stopForBalance(trx, org_id, [...unpaid], options.token);
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
        reached_at: sql`coalesce(reached_at, now())`,
        failed_at: sql`now()`,
        lease_until: null,
        charged: 0,
        updated_at: sql`now()`,
      })
      .execute();
  }
  await recordRecipientMoves(trx, dead); // decisions §11: `broadcast.recipient.updated`
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

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  token: string;
  perNumberPerSecond: number | null;
  /**
   * Marks the first this many claimed rows as handed off in the claim's own transaction (the batch's first group,
   * about to be sent): one statement less per batch. A claim never marks rows of a cancelled broadcast (it takes
   * none), so the answer's first rows may all be sent.
   */
  markFirst?: number | undefined;
}

/** Claims due recipients for one worker: locked, capped, paid for and leased, in one transaction. */
export async function claimRecipients(db: Kysely<DB>, options: ClaimOptions): Promise<ClaimedRow[]> {
  const claim = (optimistic: boolean) =>
    transactionWithRetry(db, async (trx) =>
      chargeClaims(trx, await claimBatch(trx, options), { ...options, optimistic }),
    );
  try {
    return await claim(true);
  } catch (error) {
    // D193: the balance moved between its unlocked read and the charge; the claim was rolled back whole.
    if (!(error instanceof BalanceMoved)) throw error;
    return claim(false);
  }
}

/** Per-second windows of the per-number cap are only read within their second: older ones go. */
export async function purgeSendWindows(db: Kysely<DB>, nowSeconds: number): Promise<void> {
  await db
    .deleteFrom('channel_send_windows')
    .where('window_start', '<', nowSeconds - 60)
    .execute();
}

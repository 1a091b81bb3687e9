// The claim step of a recipient's life, one organization at a time (D318): find the organizations with due
// recipients, then, for each, one transaction that locks its due recipient rows (claim-candidates.ts), respects each
// number's per-second cap, pays for them (one balance update per account and claim) and leases them
// (claim-charge.ts). Every statement of that transaction names the organization: on Citus it runs on its shard.

import { type Kysely, sql } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { claimBatch } from './claim-candidates.ts';
import { BalanceMoved, type ClaimedRow, chargeClaims } from './claim-charge.ts';

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  token: string;
  perNumberPerSecond: number | null;
  /**
   * Marks the first this many claimed rows as handed off in the claim's own transaction (the batch's first group,
   * about to be sent): one statement less per batch. A claim never marks rows of a cancelled broadcast (it takes
   * none), so the answer's first rows may all be sent. Only the first organization's claim marks.
   */
  markFirst?: number | undefined;
  /** The organizations to claim from, in this order (dueOrganizations' answer, which a worker may keep a moment). */
  orgs?: readonly string[] | undefined;
  /** The broadcasts' owner's writes (a stop for the balance, an end; D349), given by the wiring. */
  moves: BroadcastMoves;
}

/**
 * D318: the organizations with due recipients (queued and due, or leased and never handed off), the longest due
 * first, at most `limit`. One probe per organization by the claim's index (`broadcast_recipients_org_claim_idx`, led by
 * the organization), so it costs the number of organizations, not the backlog; a read without locks (on Citus, every
 * shard at once).
 */
export async function dueOrganizations(db: Kysely<DB>, limit: number): Promise<string[]> {
  const result = await sql<{ id: string }>`
    select o.id from organizations o
    left join lateral (
      select r.next_attempt_at as due_at from broadcast_recipients r
      where r.org_id = o.id and r.status = 'queued' and r.next_attempt_at <= now()
      order by r.next_attempt_at limit 1
    ) queued on true
    left join lateral (
      select r.lease_until as due_at from broadcast_recipients r
      where r.org_id = o.id and r.status = 'sending' and r.handoff_started_at is null and r.lease_until < now()
      limit 1
    ) expired on true
    where queued.due_at is not null or expired.due_at is not null
    order by coalesce(expired.due_at, queued.due_at), o.id
    limit ${limit}`.execute(db);
  return result.rows.map((row) => row.id);
}

/** Claims due recipients for one worker: per organization, locked, capped, paid for and leased in one transaction. */
export async function claimRecipients(db: Kysely<DB>, options: ClaimOptions): Promise<ClaimedRow[]> {
  const orgs = options.orgs ?? (await dueOrganizations(db, options.limit));
  let markFirst = options.markFirst;
  const claimed = await claimFairly(orgs, options.limit, async (orgId, max) => {
    const rows = await claimWithin(db, orgId, { ...options, limit: max, markFirst });
    if (rows.length > 0) markFirst = 0;
    return rows;
  });
  // D360: rows marked by a claim are about to be sent, so the claim must be durable first: a transaction of our own
  // that commits synchronously flushes the WAL up to its commit record, after the claim's (WAL is flushed in order).
  // On Citus the claim's commit on its shard is synchronous anyway (`SET LOCAL` is not propagated).
  if (options.markFirst && claimed.length > 0) await sql`select pg_current_xact_id()`.execute(db);
  return claimed;
}

/** One organization's claim, in one transaction. */
async function claimWithin(db: Kysely<DB>, orgId: string, options: ClaimOptions): Promise<ClaimedRow[]> {
  const claim = (optimistic: boolean) =>
    transactionWithRetry(db, async (trx) => {
      // D360: the claim commits without waiting for its WAL's flush, so the account row its charge locks last is
      // free once the commit is written, not after the flush of the lease's WAL (what two workers waited for).
      // A crash before the flush loses the lease and the charge together; claimRecipients flushes before answering
      // marked rows, which a platform call follows. Whatever another session commits after reading the claim's rows
      // comes later in the WAL, so its own synchronous commit flushes the claim too (a webhook delivery's lease,
      // before its POST); only the console's stream may show a claim's events (a stop for the balance) that such a
      // crash then loses.
      await sql`set local synchronous_commit = off`.execute(trx);
      return chargeClaims(trx, await claimBatch(trx, orgId, options), { ...options, optimistic });
    });
  try {
    return await claim(true);
  } catch (error) {
    // D193: the balance moved between its unlocked read and the charge; the claim was rolled back whole.
    if (!(error instanceof BalanceMoved)) throw error;
    return claim(false);
  }
}

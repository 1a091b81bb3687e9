// The claim step of a recipient's life, in one transaction: lock due recipient rows (claim-candidates.ts), respect
// each number's per-second cap, reserve the price against the balance (one balance update per account and claim) and
// lease what was taken (claim-charge.ts).

import type { Kysely } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
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

// D74: a multi-row writer whose transaction PostgreSQL aborted as a deadlock's victim (40P01) or for a
// serialization failure (40001) wrote nothing, so running the whole transaction again is safe. Every such writer
// (a group's record, status reports, sends and retries, batch upserts, claims) goes through this one helper.
import type { Kysely, Transaction } from 'kysely';
import { isDeadlock, isSerializationFailure } from './errors.ts';
import type { DB } from './schema.ts';

/** Tries after the first: enough to outlast a cycle between a few writers, bounded so a fault still surfaces. */
export const CONFLICT_RETRIES = 4;

export const isTransientConflict = (error: unknown): boolean => isDeadlock(error) || isSerializationFailure(error);

export interface ConflictRetryOptions {
  retries?: number;
  /** Told of each conflict that is tried again (say, to log it). */
  onRetry?: (attempt: number, error: unknown) => void;
}

/**
 * Runs `work` in a transaction, again (up to `retries` more times) when PostgreSQL aborts it as a deadlock's
 * victim or for a serialization failure. `work` must do nothing outside its transaction that a rerun would repeat
 * wrongly (no platform call, no event emitted elsewhere).
 */
export async function transactionWithRetry<T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
  options: ConflictRetryOptions = {},
): Promise<T> {
  const retries = options.retries ?? CONFLICT_RETRIES;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (!isTransientConflict(error) || attempt > retries) throw error;
      options.onRetry?.(attempt, error);
      // A short random pause, growing with each attempt, so that the writers of a cycle do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

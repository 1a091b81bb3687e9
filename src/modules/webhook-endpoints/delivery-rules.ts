// The rules of a delivery's life (decisions §11), apart from the SQL that stores it and the loop that runs it:
// what an attempt's answer makes of the delivery, and when failures disable the endpoint.

export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed';

export interface AttemptAnswer {
  /** The HTTP status, when the endpoint answered. */
  statusCode: number | null;
  /** Why it failed; null on a 2xx answer. */
  error: string | null;
}

/**
 * decisions §11: a 2xx succeeds; anything else is retried on the schedule until the delivery's attempts run out
 * (`attemptLimit`, set by a manual retry, or the schedule's length + 1); a 410 fails it at once.
 */
export function outcomeOf(
  answer: AttemptAnswer,
  attempts: number,
  attemptLimit: number | null,
  retryScheduleMs: readonly number[],
): { outcome: DeliveryOutcome; retryInMs: number } {
  const limit = attemptLimit ?? retryScheduleMs.length + 1;
  const outcome: DeliveryOutcome =
    answer.error === null ? 'succeeded' : answer.statusCode === 410 || attempts >= limit ? 'failed' : 'retry';
  return { outcome, retryInMs: retryScheduleMs[attempts - 1] ?? 0 };
}

export type DisabledReason = 'gone' | 'failing';

/**
 * decisions §11: a 410 disables the endpoint (`gone`); so do `failingDisableAfterMs` (5 days) of nothing but
 * failures since the first failure after the last success (`failing`).
 */
export function disableReasonOf(
  statusCode: number | null,
  failingSince: Date,
  now: Date,
  failingDisableAfterMs: number,
): DisabledReason | null {
  if (statusCode === 410) return 'gone';
  return now.getTime() - failingSince.getTime() >= failingDisableAfterMs ? 'failing' : null;
}

// decisions §16, the platform's own pacing (the Cloud API's error codes): what a hand-off's refusal means beyond the
// one recipient. The per-user marketing cap (131049) is no failure: the recipient waits a long backoff. Throughput
// and pair-rate errors (130429, 131056) slow the number down and do not count as attempts. A template the platform
// paused (132015, or a status webhook that takes it out of APPROVED) pauses the broadcasts that still have recipients
// to hand off, with `status_reason: "template_not_sendable"` (the broadcasts' owner writes it: `BroadcastMoves`
// `pauseForTemplates`, D349).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { restNumbers } from '../channels/channels.repo.ts';

/** The Cloud API's codes (developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes). */
export const MARKETING_CAP = 131049;
export const THROUGHPUT_REACHED = 130429;
export const PAIR_RATE_LIMIT = 131056;
export const TEMPLATE_PAUSED = 132015;

/** The platform's per-user marketing cap is a rolling day: try that person again after half of it. */
export const MARKETING_CAP_BACKOFF_MS = 12 * 60 * 60 * 1000;
/** How long a number rests after a throughput or pair-rate error before the claim takes its recipients again. */
export const NUMBER_SLOWDOWN_MS = 5_000;

/** What a refusal with this code does to the recipient and beyond; undefined: an ordinary refusal. */
export function pacingOf(
  code: number | null | undefined,
): { retryAfterMs: number; slowNumber: boolean; pauseTemplate: boolean } | undefined {
  if (code === MARKETING_CAP)
    return { retryAfterMs: MARKETING_CAP_BACKOFF_MS, slowNumber: false, pauseTemplate: false };
  if (code === THROUGHPUT_REACHED || code === PAIR_RATE_LIMIT) {
    return { retryAfterMs: NUMBER_SLOWDOWN_MS, slowNumber: true, pauseTemplate: false };
  }
  if (code === TEMPLATE_PAUSED) return { retryAfterMs: 0, slowNumber: false, pauseTemplate: true };
  return undefined;
}

/** Numbers rest until `now + NUMBER_SLOWDOWN_MS` (the claim skips them meanwhile). */
export const slowNumbers = (db: Kysely<DB>, channels: { org_id: string; channel_id: string }[]) =>
  restNumbers(db, channels, NUMBER_SLOWDOWN_MS);

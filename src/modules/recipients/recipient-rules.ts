// The rules of a broadcast recipient's life, in one place: the forward-only order of its states (decisions §7:
// status reports never move a recipient backwards; the order itself is messaging/message-status.ts), how a
// hand-off's answer is classified, and our hand-off reference that the platform echoes back. A message's price is
// its account's (messaging-accounts/prices.ts).
import type { SendResult } from '../../messaging/platform.ts';
import { pacingOf } from './platform-pacing.ts';

/** Stored states. `queued` and `cancelled` rows have not been reached and are not listed (contract). */
export const RECIPIENT_LISTED_STATUSES = ['sending', 'sent', 'delivered', 'read', 'failed'] as const;
export type ListedRecipientStatus = (typeof RECIPIENT_LISTED_STATUSES)[number];

/** decisions §7: status reports never move a recipient backwards; the order is the platform's message lifecycle. */
export { isForward } from '../../messaging/message-status.ts';

/** Our reference for one hand-off, `org|broadcast|position`, carried as the platform's callback data. */
export function callbackReference(orgId: string, broadcastId: string, position: number): string {
  return `${orgId}|${broadcastId}|${position}`;
}

export function parseCallbackReference(reference: string | undefined, orgId: string) {
  const [org, broadcastId, position] = (reference ?? '').split('|');
  if (org !== orgId || !broadcastId || !position || !/^\d+$/.test(position)) return undefined;
  return { broadcastId, position: Number(position) };
}

export interface RetryPolicy {
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** Exponential backoff with jitter (half fixed, half random), capped. */
export function backoffMs(attempt: number, policy: RetryPolicy): number {
  const exponential = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

/** What a hand-off's answer means for its recipient. */
export type HandoffVerdict =
  | { kind: 'accepted'; platformMessageId: string }
  /** The platform refused it: nothing was accepted, so nothing is charged. */
  | { kind: 'refused'; error: string; message: string; code: number | null; notOnNetwork: boolean }
  | {
      kind: 'retry';
      error: string;
      message: string;
      code: number | null;
      retryAfterMs: number;
      /** decisions §16: the platform's own pacing, not a failed attempt (platform-pacing.ts). */
      pacing?: { slowNumber: boolean; pauseTemplate: boolean };
    }
  /** No answer: the platform may or may not have taken it; a status report or the reconciler settles it. */
  | { kind: 'uncertain'; reason: string };

export function verdictOf(result: SendResult, attempts: number, policy: RetryPolicy): HandoffVerdict {
  if (result.ok) return { kind: 'accepted', platformMessageId: result.platformMessageId };
  if (result.uncertain) return { kind: 'uncertain', reason: result.message };
  const code = result.code ?? null;
  const pacing = pacingOf(code);
  if (pacing) {
    const { retryAfterMs, ...effects } = pacing;
    return { kind: 'retry', error: result.reason, message: result.message, code, retryAfterMs, pacing: effects };
  }
  if (result.retryable && attempts < policy.maxAttempts) {
    return {
      kind: 'retry',
      error: result.reason,
      message: result.message,
      code,
      retryAfterMs: backoffMs(attempts, policy),
    };
  }
  return {
    kind: 'refused',
    // D134: the stable code (what `error_codes` of a retry matches), the platform's words beside it.
    error: result.reason,
    message: result.message,
    code,
    notOnNetwork: result.reason === 'not_on_network',
  };
}

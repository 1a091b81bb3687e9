// The rules of a reply's hand-off (decisions §15): our reference that the platform echoes back in its status
// reports, and the stable error a failed reply shows (the platform's own words go to `error_message`).
import type { SendFailureReason } from '../../messaging/platform.ts';

/** The Cloud API's refusal of a free-form message outside the customer-service window. */
export const WINDOW_CLOSED_CODE = 131047;

/** Our reference for a reply's hand-off, carried as the platform's callback data: `reply|org|message`. */
export const replyReference = (orgId: string, messageId: string) => `reply|${orgId}|${messageId}`;

export function parseReplyReference(reference: string | undefined, orgId: string): string | undefined {
  const [kind, org, messageId] = (reference ?? '').split('|');
  return kind === 'reply' && org === orgId && messageId ? messageId : undefined;
}

/** decisions §15: `not_on_network`, `window_closed` (131047), or `platform_error` for anything else. */
export function replyError(reason: SendFailureReason | undefined, code?: number): string {
  if (code === WINDOW_CLOSED_CODE || reason === 'window_closed') return 'window_closed';
  return reason === 'not_on_network' ? 'not_on_network' : 'platform_error';
}

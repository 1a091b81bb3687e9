// The rules of a reply's hand-off (conversations/reply-rules.ts, decisions §15): its reference and its error.
import { describe, expect, it } from 'vitest';
import {
  parseReplyReference,
  replyError,
  replyReference,
  WINDOW_CLOSED_CODE,
} from '../../../../src/modules/conversations/reply-rules.ts';
import { callbackReference, parseCallbackReference } from '../../../../src/modules/recipients/recipient-rules.ts';

describe('reply rules', () => {
  it('reads back its own reference, for its own organization only, and never a recipient’s', () => {
    const reference = replyReference('org_1', 'msg_1');
    expect(reference).toBe('reply|org_1|msg_1');
    expect(parseReplyReference(reference, 'org_1')).toBe('msg_1');
    expect(parseReplyReference(reference, 'org_2')).toBeUndefined();
    expect(parseReplyReference('reply|org_1|', 'org_1')).toBeUndefined();
    expect(parseReplyReference(undefined, 'org_1')).toBeUndefined();
    // The two references cannot be taken for each other (one status webhook reads both).
    expect(parseReplyReference(callbackReference('org_1', 'bc_1', 0), 'org_1')).toBeUndefined();
    expect(parseCallbackReference(reference, 'org_1')).toBeUndefined();
  });

  it('shows `window_closed`, `not_on_network` or `platform_error`', () => {
    expect(WINDOW_CLOSED_CODE).toBe(131047);
    expect(replyError('platform_error', 131047)).toBe('window_closed');
    expect(replyError('window_closed')).toBe('window_closed');
    expect(replyError('not_on_network', 131026)).toBe('not_on_network');
    expect(replyError('rate_limited', 130429)).toBe('platform_error');
    expect(replyError(undefined)).toBe('platform_error');
  });
});

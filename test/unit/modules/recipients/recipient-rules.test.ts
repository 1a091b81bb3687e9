// The rules of a recipient's life (recipients/recipient-rules.ts): references, backoff and a hand-off's verdict.
import { describe, expect, it } from 'vitest';
import type { SendResult } from '../../../../src/messaging/platform.ts';
import {
  backoffMs,
  callbackReference,
  isForward,
  parseCallbackReference,
  type RetryPolicy,
  verdictOf,
} from '../../../../src/modules/recipients/recipient-rules.ts';

const policy: RetryPolicy = { maxAttempts: 3, backoffBaseMs: 1000, backoffMaxMs: 8000 };
const refusal = (fields: Partial<Extract<SendResult, { ok: false }>>): SendResult => ({
  ok: false,
  reason: 'platform_error',
  retryable: false,
  message: 'no',
  ...fields,
});

describe('recipient rules', () => {
  it('reads back its own callback reference, for its own organization only', () => {
    const reference = callbackReference('org_1', 'bc_1', 7);
    expect(reference).toBe('org_1|bc_1|7');
    expect(parseCallbackReference(reference, 'org_1')).toEqual({ broadcastId: 'bc_1', position: 7 });
    expect(parseCallbackReference(reference, 'org_2')).toBeUndefined();
    expect(parseCallbackReference('org_1|bc_1|x', 'org_1')).toBeUndefined();
    expect(parseCallbackReference('reply|org_1|msg_1', 'org_1')).toBeUndefined();
    expect(parseCallbackReference(undefined, 'org_1')).toBeUndefined();
  });

  it('backs off exponentially, half of it random, capped', () => {
    for (let attempt = 1; attempt <= 6; attempt += 1) {
      const full = Math.min(8000, 1000 * 2 ** (attempt - 1));
      const wait = backoffMs(attempt, policy);
      expect(wait).toBeGreaterThanOrEqual(full / 2);
      expect(wait).toBeLessThanOrEqual(full);
    }
  });

  it('moves forward only', () => {
    expect(isForward('sent', 'delivered')).toBe(true);
    expect(isForward('read', 'delivered')).toBe(false);
  });

  it('classifies a hand-off’s answer', () => {
    expect(verdictOf({ ok: true, platformMessageId: 'wamid.1' }, 1, policy)).toEqual({
      kind: 'accepted',
      platformMessageId: 'wamid.1',
    });
    expect(verdictOf(refusal({ uncertain: true, message: 'timeout' }), 1, policy)).toEqual({
      kind: 'uncertain',
      reason: 'timeout',
    });
    const retry = verdictOf(refusal({ reason: 'rate_limited', retryable: true, code: 4 }), 1, policy);
    expect(retry).toMatchObject({ kind: 'retry', error: 'rate_limited', code: 4 });
    expect(retry).not.toHaveProperty('pacing');
    // The attempts run out: refused, with the stable code and the platform's words (D134).
    expect(verdictOf(refusal({ reason: 'rate_limited', retryable: true }), 3, policy)).toEqual({
      kind: 'refused',
      error: 'rate_limited',
      message: 'no',
      code: null,
      notOnNetwork: false,
    });
    expect(verdictOf(refusal({ reason: 'not_on_network' }), 1, policy)).toMatchObject({
      kind: 'refused',
      notOnNetwork: true,
    });
  });

  it('turns the platform’s pacing into a requeue that is not an attempt, whatever the attempts (decisions §16)', () => {
    expect(verdictOf(refusal({ code: 131049 }), 3, policy)).toMatchObject({
      kind: 'retry',
      code: 131049,
      pacing: { slowNumber: false, pauseTemplate: false },
    });
    expect(verdictOf(refusal({ code: 130429 }), 3, policy)).toMatchObject({
      kind: 'retry',
      pacing: { slowNumber: true, pauseTemplate: false },
    });
    expect(verdictOf(refusal({ code: 132015 }), 3, policy)).toMatchObject({
      kind: 'retry',
      retryAfterMs: 0,
      pacing: { slowNumber: false, pauseTemplate: true },
    });
  });
});

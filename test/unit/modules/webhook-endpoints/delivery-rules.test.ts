// The rules of a delivery's life (webhook-endpoints/delivery-rules.ts, decisions §11).
import { describe, expect, it } from 'vitest';
import { disableReasonOf, outcomeOf } from '../../../../src/modules/webhook-endpoints/delivery-rules.ts';

const schedule = [1_000, 5_000, 30_000];
const ok = { statusCode: 204, error: null };
const failed = (statusCode: number | null) => ({ statusCode, error: statusCode === null ? 'timeout' : 'status' });

describe('delivery rules', () => {
  it('succeeds on a 2xx answer', () => {
    expect(outcomeOf(ok, 1, null, schedule)).toEqual({ outcome: 'succeeded', retryInMs: 1_000 });
  });

  it('retries on the schedule until the attempts run out (the schedule’s length + 1)', () => {
    expect(outcomeOf(failed(500), 1, null, schedule)).toEqual({ outcome: 'retry', retryInMs: 1_000 });
    expect(outcomeOf(failed(null), 3, null, schedule)).toEqual({ outcome: 'retry', retryInMs: 30_000 });
    expect(outcomeOf(failed(500), 4, null, schedule).outcome).toBe('failed');
  });

  it('takes a manual retry’s own limit', () => {
    expect(outcomeOf(failed(500), 1, 1, schedule).outcome).toBe('failed');
    expect(outcomeOf(failed(500), 5, 6, schedule)).toEqual({ outcome: 'retry', retryInMs: 0 });
  });

  it('fails a 410 at once', () => {
    expect(outcomeOf(failed(410), 1, null, schedule).outcome).toBe('failed');
  });

  it('disables the endpoint on a 410, or after the failing period', () => {
    const since = new Date('2026-01-01T00:00:00Z');
    const day = 24 * 60 * 60 * 1000;
    expect(disableReasonOf(410, since, since, 5 * day)).toBe('gone');
    expect(disableReasonOf(500, since, new Date(since.getTime() + 5 * day - 1), 5 * day)).toBeNull();
    expect(disableReasonOf(500, since, new Date(since.getTime() + 5 * day), 5 * day)).toBe('failing');
    expect(disableReasonOf(null, since, new Date(since.getTime() + 6 * day), 5 * day)).toBe('failing');
  });
});

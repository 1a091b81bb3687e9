// The platform's own pacing (recipients/platform-pacing.ts, decisions §16): what a refusal's code does beyond it.
import { describe, expect, it } from 'vitest';
import {
  MARKETING_CAP,
  MARKETING_CAP_BACKOFF_MS,
  NUMBER_SLOWDOWN_MS,
  PAIR_RATE_LIMIT,
  pacingOf,
  TEMPLATE_PAUSED,
  THROUGHPUT_REACHED,
} from '../../../../src/modules/recipients/platform-pacing.ts';

describe('platform pacing', () => {
  it('waits out the per-user marketing cap for half a day, the number untouched', () => {
    expect(MARKETING_CAP).toBe(131049);
    expect(pacingOf(MARKETING_CAP)).toEqual({
      retryAfterMs: MARKETING_CAP_BACKOFF_MS,
      slowNumber: false,
      pauseTemplate: false,
    });
    expect(MARKETING_CAP_BACKOFF_MS).toBe(12 * 60 * 60 * 1000);
  });

  it('rests the number on throughput and pair-rate errors', () => {
    for (const code of [THROUGHPUT_REACHED, PAIR_RATE_LIMIT]) {
      expect(pacingOf(code)).toEqual({ retryAfterMs: NUMBER_SLOWDOWN_MS, slowNumber: true, pauseTemplate: false });
    }
    expect([THROUGHPUT_REACHED, PAIR_RATE_LIMIT]).toEqual([130429, 131056]);
  });

  it('pauses the template’s broadcasts when the platform paused the template', () => {
    expect(TEMPLATE_PAUSED).toBe(132015);
    expect(pacingOf(TEMPLATE_PAUSED)).toEqual({ retryAfterMs: 0, slowNumber: false, pauseTemplate: true });
  });

  it('leaves any other refusal to the ordinary rules', () => {
    for (const code of [null, undefined, 0, 131047, 131026, 100]) expect(pacingOf(code)).toBeUndefined();
  });
});

// The import's share of the rate budget (decisions §4, §12), on a clock the test moves: starts spaced 1/limit s,
// never more than `limit` in one wall-clock second, no more in flight than the limit, the limit learned from
// X-RateLimit-Limit, a spent window (Remaining 0) held until its Reset, a 429 held for its Retry-After.
import { describe, expect, it } from 'vitest';
import { ASSUMED_LIMIT, type BudgetClock, RateBudget } from '../../../src/cli/rate-budget.ts';

function fakeClock(start = 1_000_000_000_000): BudgetClock & { time: number } {
  const clock = {
    time: start,
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.time += ms;
    },
  };
  return clock;
}

const headers = (values: Record<string, string>) => new Headers(values);

describe('rate budget', () => {
  it('assumes the smallest budget until an answer says the organization’s, then spaces starts 1/limit apart', async () => {
    const clock = fakeClock();
    const budget = new RateBudget(clock);
    expect(budget.limit).toBe(ASSUMED_LIMIT);
    budget.observe(200, headers({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '19' }));
    expect(budget.limit).toBe(20);
    const starts: number[] = [];
    for (let index = 0; index < 100; index++) {
      await budget.acquire();
      starts.push(clock.time);
      budget.release();
    }
    const perSecond = new Map<number, number>();
    for (const at of starts) perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(20);
    for (let index = 1; index < starts.length; index++) {
      expect((starts[index] as number) - (starts[index - 1] as number)).toBeGreaterThanOrEqual(50);
    }
    // 100 starts at 20 a second take five seconds, not more.
    expect((starts.at(-1) as number) - (starts[0] as number)).toBeLessThanOrEqual(5000);
  });

  it('keeps no more requests in flight than the limit; a release lets the next one start', async () => {
    const clock = fakeClock();
    const budget = new RateBudget(clock);
    budget.observe(200, headers({ 'x-ratelimit-limit': '3' }));
    for (let index = 0; index < 3; index++) await budget.acquire();
    expect(budget.inFlight).toBe(3);
    let fourth = false;
    const waiting = budget.acquire().then(() => {
      fourth = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fourth).toBe(false);
    budget.release();
    await waiting;
    expect(fourth).toBe(true);
    expect(budget.inFlight).toBe(3);
  });

  it('holds new starts until Reset when an answer says the window is spent, and for Retry-After after a 429 or 503', async () => {
    const clock = fakeClock(1_000_000_000_200);
    const budget = new RateBudget(clock);
    const second = Math.floor(clock.time / 1000);
    budget.observe(
      200,
      headers({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(second + 1) }),
    );
    await budget.acquire();
    expect(clock.time).toBe((second + 1) * 1000);
    budget.release();

    const before = clock.time;
    budget.observe(429, headers({ 'retry-after': '2' }));
    await budget.acquire();
    expect(clock.time).toBe(before + 2000);
    budget.release();

    // A 503 (the database unreachable, D24) says when to come back the same way.
    const then = clock.time;
    budget.observe(503, headers({ 'retry-after': '1' }));
    await budget.acquire();
    expect(clock.time).toBe(then + 1000);
  });
});

import type { Clock } from '../../src/lib/clock.ts';

/** A clock that stands still until a test moves it. */
export function manualClock(start = Date.parse('2030-01-01T00:00:00.250Z')) {
  let now = start;
  const clock: Clock & { advance(ms: number): void; set(ms: number): void } = {
    now: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
    set: (ms) => {
      now = ms;
    },
  };
  return clock;
}

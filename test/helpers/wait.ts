// Waiting in tests. `waitUntil` and `waitForValue` poll a check (every 20 ms by default) until it holds or a deadline
// passes (10 s by default), then fail with what they last saw: a test that needs a state waits for that state, not
// for a guessed time (D66). The pauses that are about time itself and not a state have names that say why:
// `paceLoop` (a loop of the test's own beside the work under test), `slowAnswer` (a fake's answer that takes time),
// `quietSpell` (a spell in which something must not happen: a few of its intervals), and `delay`, the plain pause
// behind them (a client pacing its calls within a rate budget or waiting out its window, a crash at a chosen moment).
// "It did not wait" is read as a state (test/helpers/database.ts `withoutWaitingForALock`), never asserted against a
// few hundred milliseconds of real time. test/api and test/unit have no `setTimeout` pause of their own (D336);
// test/process, test/cli and test/console still have some, for the reasons above.
import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to keep trying; default 10 s. */
  timeoutMs?: number;
  /** Pause between two checks; default 20 ms. */
  intervalMs?: number;
  /** Named in the error when the deadline passes. */
  message?: string;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Calls `check` until it returns a truthy value (a thrown error counts as "not yet") and returns that value; throws
 * once `timeoutMs` has passed, with the last value or error seen.
 */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, message = 'the condition' }: WaitOptions = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last as Truthy<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`waited ${timeoutMs} ms for ${message}; last saw: ${seen}`);
    }
    await delay(intervalMs);
  }
}

/** A fixed pause for time itself (a slow fake, pacing, a spell in which nothing may happen), never for a state. */
export { delay };

/**
 * The pause between two turns of a loop the test runs beside the work under test (a reader polling while the worker
 * runs, a writer changing rows while sends run): it leaves the work room to progress. It waits for no state, and
 * nothing depends on its length.
 */
export const paceLoop = (ms = 10) => delay(ms);

/**
 * A spell in which something must not happen (a timer that was stopped, a probe that must not run): a few of the
 * intervals at which it would have happened. The test then asserts that it did not; nothing waits for a state.
 */
export const quietSpell = (ms: number) => delay(ms);

/** A fake's answer that takes `ms` (a receiver busy for a moment, so that requests overlap). */
export const slowAnswer = (ms: number, answer: () => void) => {
  delay(ms).then(answer);
};

/** Reads until `done(value)` holds and returns that value; on the deadline, fails with the last value read. */
export async function waitForValue<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const held = await waitUntil(async () => {
    const value = await read();
    if (!done(value)) throw new Error(JSON.stringify(value));
    return { value };
  }, options);
  return held.value;
}

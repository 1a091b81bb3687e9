// Tests wait for the state they need, never for a fixed time (decisions D66): `waitUntil` polls a check until it
// holds or a deadline passes, and fails with what it last saw.
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

/** A pause that is part of what a fake does (a slow receiver, a client spacing its calls), not a wait for state. */
export { delay };

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

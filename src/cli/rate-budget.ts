// A client's share of its organization's rate budget (decisions §4: fixed one-second windows aligned to the
// wall-clock second; every answer carries X-RateLimit-Limit, -Remaining and -Reset; a 429 carries Retry-After).
// `crm contacts import` starts its batches through it (decisions §12: one batch counts once, so the budget is what
// bounds an import): starts are spaced 1/limit s apart and never more than `limit` fall in one wall-clock second,
// no more requests are in flight than the budget allows per second, and an answer that says the window is spent
// (Remaining 0, or a 429) holds new starts until the window ends (Reset) or for Retry-After (after a 503 too).

export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemBudgetClock: BudgetClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** decisions §4: the smallest budget (a trial's), assumed until an answer says the organization's own. */
export const ASSUMED_LIMIT = 5;

export class RateBudget {
  readonly #clock: BudgetClock;
  #limit: number | undefined;
  #inFlight = 0;
  #window = -1;
  #startsInWindow = 0;
  #nextStart = 0;
  #heldUntil = 0;
  #released: (() => void)[] = [];

  constructor(clock: BudgetClock = systemBudgetClock) {
    this.#clock = clock;
  }

  /** Requests per second: the organization's, once an answer told it. */
  get limit(): number {
    return this.#limit ?? ASSUMED_LIMIT;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Waits until one more request fits the budget, and counts it as started. Pair with `release()`. */
  async acquire(): Promise<void> {
    for (;;) {
      if (this.#inFlight >= this.limit) {
        await new Promise<void>((resolve) => this.#released.push(resolve));
        continue;
      }
      const now = this.#clock.now();
      const window = Math.floor(now / 1000);
      if (window !== this.#window) {
        this.#window = window;
        this.#startsInWindow = 0;
      }
      const windowFull = this.#startsInWindow >= this.limit ? (window + 1) * 1000 - now : 0;
      const wait = Math.max(this.#heldUntil - now, this.#nextStart - now, windowFull);
      if (wait > 0) {
        await this.#clock.sleep(wait);
        continue;
      }
      this.#startsInWindow += 1;
      this.#inFlight += 1;
      this.#nextStart = now + 1000 / this.limit;
      return;
    }
  }

  release(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#released.shift()?.();
  }

  /** Learns from an answer's headers: the organization's limit, a spent window, a 429's Retry-After. */
  observe(status: number, headers: Headers): void {
    const limit = Number(headers.get('x-ratelimit-limit'));
    if (Number.isInteger(limit) && limit > 0) this.#limit = limit;
    const reset = Number(headers.get('x-ratelimit-reset'));
    if (headers.get('x-ratelimit-remaining') === '0' && reset > 0) this.#hold(reset * 1000);
    // A 503 `service_unavailable` (the database unreachable, D24) carries Retry-After too, and passes as well.
    if (status === 429 || status === 503) {
      const retryAfter = headers.get('retry-after');
      const seconds = retryAfter !== null && /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : 1;
      this.#hold(this.#clock.now() + seconds * 1000);
    }
  }

  /** A fetch that tells this budget what every answer says (pass it to the SDK's client). */
  readonly fetch: typeof fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    this.observe(response.status, response.headers);
    return response;
  };

  #hold(until: number): void {
    this.#heldUntil = Math.max(this.#heldUntil, until);
  }
}

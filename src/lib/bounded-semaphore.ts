// A counting semaphore whose queue is bounded twice: in length and in waiting time (D129, D132). A caller that
// finds the queue full, or that waits past the deadline, is refused with a BusyError instead of waiting on: under
// overload the answer is a fast "busy, retry later", never a request held until the client gives up. Generic
// libraries (p-limit, async-sema, async-mutex) bound one of the two at most; the two together are a few lines.

/** Refused by a full queue or a wait past its deadline. `what` names the resource (for the log). */
export class BusyError extends Error {
  readonly what: string;
  readonly reason: 'queue_full' | 'wait_timeout';
  constructor(what: string, reason: 'queue_full' | 'wait_timeout') {
    super(`${what} busy (${reason === 'queue_full' ? 'queue full' : 'waited too long'})`);
    this.name = 'BusyError';
    this.what = what;
    this.reason = reason;
  }
}

export interface SemaphoreLimits {
  /** Holders at once. */
  limit: number;
  /** Callers that may wait for a place; one more is refused at once. */
  queue: number;
  /** How long a caller waits for a place before it is refused. */
  waitMs: number;
}

interface Waiter {
  grant(): void;
  timer: NodeJS.Timeout;
}

export class BoundedSemaphore {
  readonly #limits: SemaphoreLimits;
  readonly #what: string;
  readonly #waiters: Waiter[] = [];
  #held = 0;

  constructor(what: string, limits: SemaphoreLimits) {
    if (limits.limit < 1) throw new Error('a semaphore needs a limit of at least 1');
    this.#what = what;
    this.#limits = limits;
  }

  get held(): number {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves once a place is held (call `release` exactly once after); rejects with a BusyError. */
  acquire(): Promise<void> {
    if (this.#held < this.#limits.limit && this.#waiters.length === 0) {
      this.#held++;
      return Promise.resolve();
    }
    if (this.#waiters.length >= this.#limits.queue) {
      return Promise.reject(new BusyError(this.#what, 'queue_full'));
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(new BusyError(this.#what, 'wait_timeout'));
        }, this.#limits.waitMs),
      };
      this.#waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    // The place passes straight to the next waiter: `held` stays the same.
    if (next) next.grant();
    else this.#held = Math.max(0, this.#held - 1);
  }

  /** True when nobody holds or waits (a keyed semaphore may then forget it). */
  get idle(): boolean {
    return this.#held === 0 && this.#waiters.length === 0;
  }
}

/** One BoundedSemaphore per key (say, per organization), made on first use and forgotten when idle. */
export class KeyedSemaphores {
  readonly #limits: SemaphoreLimits;
  readonly #what: string;
  readonly #byKey = new Map<string, BoundedSemaphore>();

  constructor(what: string, limits: SemaphoreLimits) {
    this.#what = what;
    this.#limits = limits;
  }

  /** Resolves with the release function of the place taken for `key`; rejects with a BusyError. */
  async acquire(key: string): Promise<() => void> {
    let semaphore = this.#byKey.get(key);
    if (!semaphore) {
      semaphore = new BoundedSemaphore(this.#what, this.#limits);
      this.#byKey.set(key, semaphore);
    }
    const held = semaphore;
    try {
      await held.acquire();
    } catch (error) {
      this.#forgetIfIdle(key, held);
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.release();
      this.#forgetIfIdle(key, held);
    };
  }

  /** Places held for `key` now. */
  held(key: string): number {
    return this.#byKey.get(key)?.held ?? 0;
  }

  #forgetIfIdle(key: string, semaphore: BoundedSemaphore): void {
    if (semaphore.idle && this.#byKey.get(key) === semaphore) this.#byKey.delete(key);
  }
}

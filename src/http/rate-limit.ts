// Fixed one-second windows aligned to the wall-clock second, counted per organization (or per client address for
// requests without a valid key). The counters live in a store: memory for one process, Redis for many.
import type { Redis } from 'ioredis';

export interface RateLimitStore {
  /** Adds one hit to `key` in the window that starts at Unix second `windowStart`; returns the window's count. */
  hit(key: string, windowStart: number): Promise<number>;
  close(): Promise<void>;
}

export function createMemoryRateLimitStore(): RateLimitStore {
  const counts = new Map<string, number>();
  let currentWindow = 0;
  return {
    async hit(key, windowStart) {
      if (windowStart !== currentWindow) {
        // Only the current window matters: older counters are dropped as soon as a new second starts.
        counts.clear();
        currentWindow = windowStart;
      }
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      return count;
    },
    async close() {
      counts.clear();
    },
  };
}

export function createRedisRateLimitStore(redis: Redis, prefix = 'rl'): RateLimitStore {
  return {
    async hit(key, windowStart) {
      const redisKey = `${prefix}:${windowStart}:${key}`;
      // INCR and EXPIRE in one round trip; the key outlives its second briefly so clock skew between
      // processes cannot reset a window early.
      const result = await redis.multi().incr(redisKey).expire(redisKey, 3).exec();
      const first = result?.[0];
      if (!first || first[0]) throw first?.[0] ?? new Error('rate limit store did not answer');
      return Number(first[1]);
    },
    async close() {
      redis.disconnect();
    },
  };
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix second at which the window ends. */
  reset: number;
}

export async function consume(
  store: RateLimitStore,
  key: string,
  limit: number,
  nowMs: number,
): Promise<RateLimitDecision> {
  const windowStart = Math.floor(nowMs / 1000);
  const count = await store.hit(key, windowStart);
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset: windowStart + 1 };
}

// Fixed one-second windows aligned to the wall-clock second, counted per organization (or per client address for
// requests without a valid key). The counters live in a store: memory for one process, Redis for many.
//
// A store also carries the access generation (decisions D20): a value that changes whenever an
// API key is revoked or an organization changed by the operator, read in the same round trip as the counter, so
// that every process can keep keys in memory and still drop a revoked key on its very next request.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface Hit {
  /** Hits in the window so far, this one included. */
  count: number;
  /** The access generation seen with this hit; null when the store cannot vouch for one (cache must be bypassed). */
  generation: string | null;
}

export interface RateLimitStore {
  /** Adds one hit to `key` in the window that starts at Unix second `windowStart`; returns the window's count. */
  hit(key: string, windowStart: number): Promise<number>;
  /** `hit` and the access generation in one round trip. Stores without it make the guard read keys every time. */
  hitWithGeneration?(key: string, windowStart: number): Promise<Hit>;
  /** Announces that keys or organizations changed: every process sharing the store drops its cached keys. */
  bumpGeneration?(): Promise<void>;
  /** True when the generation is shared by every process (Redis); false when it is this process's own. */
  readonly sharedGeneration?: boolean;
  close(): Promise<void>;
}

export function createMemoryRateLimitStore(): RateLimitStore {
  const counts = new Map<string, number>();
  let currentWindow = 0;
  let generation = 0;
  const hit = async (key: string, windowStart: number) => {
    if (windowStart !== currentWindow) {
      // Only the current window matters: older counters are dropped as soon as a new second starts.
      counts.clear();
      currentWindow = windowStart;
    }
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    return count;
  };
  return {
    hit,
    async hitWithGeneration(key, windowStart) {
      return { count: await hit(key, windowStart), generation: String(generation) };
    },
    async bumpGeneration() {
      generation++;
    },
    sharedGeneration: false,
    async close() {
      counts.clear();
    },
  };
}

// INCR the window's counter (expiring it shortly after its second, so clock skew between processes cannot reset
// a window early) and read the generation. A Redis that lost its data has no generation: a fresh random one is
// set, which differs from every value cached before, so a restart with an empty Redis also drops every cache.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], 3) end
local generation = redis.call('GET', KEYS[2])
if not generation then
  redis.call('SET', KEYS[2], ARGV[1], 'NX')
  generation = redis.call('GET', KEYS[2])
end
return {count, generation}
`;

type ScriptedRedis = Redis & { rateLimitHit(counter: string, generation: string, fresh: string): Promise<unknown> };

export interface RedisStoreOptions {
  prefix?: string;
  /** Told once when Redis stops answering and once when it answers again. */
  onOutage?: (down: boolean, error?: unknown) => void;
}

/**
 * Counters in Redis, shared by every process. While Redis cannot be reached the store falls back to a per-process
 * memory budget (decisions D23) and reports no generation, and it goes back to Redis as soon as Redis
 * answers again. Every loss of the connection changes the generation this process reports, because a revocation
 * made meanwhile may not have reached Redis.
 */
export function createRedisRateLimitStore(redis: Redis, options: RedisStoreOptions | string = {}): RateLimitStore {
  const { prefix = 'rl', onOutage } = typeof options === 'string' ? { prefix: options } : options;
  const generationKey = `${prefix}:access-generation`;
  const fallback = createMemoryRateLimitStore();
  const scripted = redis as ScriptedRedis;
  if (typeof scripted.rateLimitHit !== 'function') {
    redis.defineCommand('rateLimitHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
  }
  let epoch = 0;
  let down = false;
  // The generation a Redis without one starts from: unique to this process and call, cheaper than random bytes.
  const freshBase = randomBytes(8).toString('hex');
  let freshCount = 0;
  let closed = false;
  const lost = (error?: unknown) => {
    epoch++;
    if (!down && !closed) {
      down = true;
      onOutage?.(true, error);
    }
  };
  redis.on('close', () => lost());

  async function hitWithGeneration(key: string, windowStart: number): Promise<Hit> {
    // Reconnecting or closed: do not wait for Redis, count in this process.
    if (redis.status === 'reconnecting' || redis.status === 'end' || redis.status === 'close') {
      lost();
      return { count: await fallback.hit(key, windowStart), generation: null };
    }
    try {
      const fresh = `${freshBase}-${++freshCount}`;
      const [count, generation] = (await scripted.rateLimitHit(
        `${prefix}:${windowStart}:${key}`,
        generationKey,
        fresh,
      )) as [number, string];
      if (down) {
        down = false;
        onOutage?.(false);
      }
      return { count: Number(count), generation: `${epoch}:${generation}` };
    } catch (error) {
      lost(error);
      return { count: await fallback.hit(key, windowStart), generation: null };
    }
  }

  return {
    hitWithGeneration,
    hit: async (key, windowStart) => (await hitWithGeneration(key, windowStart)).count,
    async bumpGeneration() {
      // Throws when Redis cannot be reached: the caller must not claim that the change reached every process.
      await whenReady(redis, 2000);
      await redis.set(generationKey, randomBytes(12).toString('hex'));
    },
    sharedGeneration: true,
    async close() {
      closed = true; // our own disconnect is no outage
      redis.disconnect();
    },
  };
}

/** A client just made (a CLI command) may still be connecting; an unreachable Redis fails after `ms`. */
async function whenReady(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error('redis is not reachable'));
    }, ms);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix second at which the window ends. */
  reset: number;
}

export function decide(count: number, limit: number, nowMs: number): RateLimitDecision {
  const windowStart = Math.floor(nowMs / 1000);
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset: windowStart + 1 };
}

export async function consume(
  store: RateLimitStore,
  key: string,
  limit: number,
  nowMs: number,
): Promise<RateLimitDecision> {
  return decide(await store.hit(key, Math.floor(nowMs / 1000)), limit, nowMs);
}

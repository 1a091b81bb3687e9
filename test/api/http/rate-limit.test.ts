// Rate limits (contract Limits, decisions §4): per organization, all keys together, one-second wall-clock windows.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimitStore } from '../../../src/http/rate-limit.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

const clock = manualClock();
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ clock });
});
afterAll(() => h.close());

const windowEnd = () => Math.floor(clock.now().getTime() / 1000) + 1;

async function burst(count: number, key: string | undefined, url = '/v1/me') {
  const responses = [];
  for (let i = 0; i < count; i++) responses.push(await h.api('GET', url, key ? { key } : {}));
  return responses;
}

describe('per-organization budget', () => {
  it('lets 20 requests through in one second, refuses the 21st with 429, Retry-After 1 and rate_limited', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg({ plan: 'scale' });
    const responses = await burst(21, key);
    expect(responses.slice(0, 20).every((response) => response.status === 200)).toBe(true);
    expect(responses.map((response) => Number(response.headers['x-ratelimit-remaining']))).toEqual([
      19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0,
    ]);
    const refused = responses[20]!;
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ detail: 'rate_limited' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-limit']).toBe('20');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(windowEnd()));
  });

  it('starts afresh in the next wall-clock second', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg();
    await burst(20, key);
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(429);
    clock.advance(1000);
    const next = await h.api('GET', '/v1/me', { key });
    expect(next.status).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('19');
  });

  it('aligns windows to the second: a burst late in one second and early in the next gets two budgets', async () => {
    clock.set(Math.floor(clock.now().getTime() / 1000) * 1000 + 5000 + 900);
    const { key } = await h.createOrg();
    expect((await burst(20, key)).every((response) => response.status === 200)).toBe(true);
    clock.advance(150); // 50 ms into the next second
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
  });

  it('is 5 per second on trial', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg({ plan: 'free', trial: true });
    const responses = await burst(6, key);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(responses[0]?.headers['x-ratelimit-limit']).toBe('5');
  });

  it('is shared by all keys of an organization and separate between organizations', async () => {
    clock.advance(1000);
    const { org, key } = await h.createOrg();
    const second = (await h.admin('POST', `/organizations/${org.id}/api-keys`, {})).body.key as string;
    const other = await h.createOrg();
    await burst(10, key);
    await burst(10, second);
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(429);
    expect((await h.api('GET', '/v1/me', { key: second })).status).toBe(429);
    expect((await h.api('GET', '/v1/me', { key: other.key })).status).toBe(200);
  });

  it('counts a request once and puts the headers on errors too (404, 405, 403)', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg();
    const notFound = await h.api('GET', '/v1/unknown', { key });
    expect(notFound.status).toBe(404);
    expect(notFound.headers['x-ratelimit-remaining']).toBe('19');
    const methodNotAllowed = await h.api('POST', '/v1/me', { key });
    expect(methodNotAllowed.status).toBe(405);
    expect(methodNotAllowed.headers['x-ratelimit-remaining']).toBe('18');
    const gated = await h.createOrg({ plan: 'pro' });
    const forbidden = await h.api('GET', '/v1/me', { key: gated.key });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['x-ratelimit-limit']).toBe('20');
    expect(forbidden.headers['x-ratelimit-reset']).toBe(String(windowEnd()));
  });
});

describe('requests without a valid key', () => {
  it('are budgeted per client address at 20 per second and carry the headers', async () => {
    clock.advance(1000);
    const responses = await burst(21, undefined);
    expect(responses.slice(0, 20).every((response) => response.status === 401)).toBe(true);
    expect(responses[0]?.headers['x-ratelimit-limit']).toBe('20');
    expect(responses[0]?.headers['x-ratelimit-remaining']).toBe('19');
    expect(responses[20]?.status).toBe(429);
    expect(responses[20]?.body).toEqual({ detail: 'rate_limited' });
  });

  it('do not use up the budget of an organization', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg();
    await burst(21, 'oak_notarealkey');
    expect((await h.api('GET', '/v1/me', { key })).headers['x-ratelimit-remaining']).toBe('19');
  });
});

describe('metrics', () => {
  it('count rate-limit rejections', async () => {
    const metrics = await h.app.inject('/metrics');
    expect(metrics.body).toMatch(/rate_limit_rejections_total\{scope="organization"\} [1-9]/);
    expect(metrics.body).toMatch(/rate_limit_rejections_total\{scope="address"\} [1-9]/);
  });
});

describe.skipIf(!process.env.TEST_REDIS_URL)('Redis store', () => {
  it('shares one budget between two apps on one database', async () => {
    const redisClients = [new Redis(process.env.TEST_REDIS_URL!), new Redis(process.env.TEST_REDIS_URL!)];
    const prefix = `rl-test-${Date.now()}-${Math.random()}`;
    const shared = manualClock(Date.parse('2031-06-01T00:00:00.100Z') + Math.floor(Math.random() * 1e6) * 1000);
    const first = await startHarness({
      clock: shared,
      rateLimitStore: createRedisRateLimitStore(redisClients[0]!, prefix),
    });
    const second = await startHarness({
      clock: shared,
      database: first.database,
      rateLimitStore: createRedisRateLimitStore(redisClients[1]!, prefix),
    });
    try {
      const { key } = await first.createOrg();
      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? first : second).api('GET', '/v1/me', { key })),
      );
      expect(statuses.filter((response) => response.status === 200)).toHaveLength(20);
      expect(statuses.filter((response) => response.status === 429)).toHaveLength(20);
    } finally {
      await second.app.close();
      await first.close();
      for (const client of redisClients) client.disconnect();
    }
  });
});

describe('contacts in bulk (decisions §12)', () => {
  it('a batch upsert of 100 contacts counts once against the budget', async () => {
    clock.advance(1000);
    const { key } = await h.createOrg({ plan: 'scale' });
    const items = Array.from({ length: 100 }, (_, index) => ({ email: `bulk${index}@example.com` }));
    const batch = await h.api('POST', '/v1/contacts/batch-upsert', { key, body: { match_on: 'email', items } });
    expect(batch.status).toBe(200);
    expect(batch.headers['x-ratelimit-remaining']).toBe('19');
    const next = await h.api('GET', '/v1/me', { key });
    expect(next.headers['x-ratelimit-remaining']).toBe('18');
  });
});

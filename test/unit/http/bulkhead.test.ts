// D184: while other organizations are active, an organization's bulkhead place rests after each expensive request,
// in proportion to how long it was held, so that it keeps its place busy at most `share` of the time; alone, it
// never rests. Driven through the hooks with fake timers (the rest is a rule about time, not a speed).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { createBulkhead } from '../../../src/http/bulkhead.ts';

const reply = {} as FastifyReply;
const request = (orgId: string, operationId = 'batchUpsertContacts') =>
  ({
    auth: { orgId },
    routeOptions: { schema: { operationId } },
    log: { warn: () => {} },
  }) as unknown as FastifyRequest;

/** A cheap request of `orgId` (a read by id): it takes no place, and makes the organization active. */
const active = (bulkhead: ReturnType<typeof createBulkhead>, orgId: string) =>
  bulkhead.hooks.preHandler(request(orgId, 'getContact'));

/** One expensive request of `orgId` that holds its place `ms` and is answered. */
async function served(bulkhead: ReturnType<typeof createBulkhead>, orgId: string, ms: number) {
  const held = request(orgId);
  await bulkhead.hooks.preHandler(held);
  vi.advanceTimersByTime(ms);
  bulkhead.hooks.onResponse(held, reply, () => {});
}

const busy = { status: 503, detail: 'service_busy' };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the bulkhead’s share of time', () => {
  it('keeps a place resting as long as it was held, at a share of one half', async () => {
    const bulkhead = createBulkhead({ limit: 1, queue: 0, waitMs: 1000, share: 0.5 });
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 100);
    expect(bulkhead.held('org_a')).toBe(1);
    await expect(bulkhead.hooks.preHandler(request('org_a'))).rejects.toMatchObject(busy);
    // Another organization has places of its own; a cheap request takes none.
    await bulkhead.hooks.preHandler(request('org_b'));
    expect(bulkhead.held('org_b')).toBe(1);
    await bulkhead.hooks.preHandler(request('org_a', 'getContact'));
    vi.advanceTimersByTime(99);
    expect(bulkhead.held('org_a')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(bulkhead.held('org_a')).toBe(0);
    await bulkhead.hooks.preHandler(request('org_a'));
    expect(bulkhead.held('org_a')).toBe(1);
  });

  it('rests three times as long at a quarter, and never more than 2 s', async () => {
    const bulkhead = createBulkhead({ limit: 1, queue: 0, waitMs: 1000, share: 0.25 });
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 100);
    vi.advanceTimersByTime(299);
    expect(bulkhead.held('org_a')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(bulkhead.held('org_a')).toBe(0);
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 900);
    // 2,700 ms of rest at a quarter, cut to 2 s.
    vi.advanceTimersByTime(1999);
    expect(bulkhead.held('org_a')).toBe(1);
    vi.advanceTimersByTime(1);
    expect(bulkhead.held('org_a')).toBe(0);
  });

  it('does not rest an organization alone in the process, or one whose neighbours went quiet 1 s ago', async () => {
    const bulkhead = createBulkhead({ limit: 1, queue: 0, waitMs: 1000, share: 0.25 });
    await served(bulkhead, 'org_a', 300);
    expect(bulkhead.held('org_a')).toBe(0);
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 1001);
    expect(bulkhead.held('org_a')).toBe(0);
  });

  it('gives the place back at once with a share of the whole time', async () => {
    const bulkhead = createBulkhead({ limit: 1, queue: 0, waitMs: 1000, share: 1 });
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 500);
    expect(bulkhead.held('org_a')).toBe(0);
  });

  it('lets a waiting request in when the rest ends', async () => {
    const bulkhead = createBulkhead({ limit: 1, queue: 1, waitMs: 1000, share: 0.5 });
    await active(bulkhead, 'org_b');
    await served(bulkhead, 'org_a', 200);
    const waiting = request('org_a');
    let entered = false;
    const entering = bulkhead.hooks.preHandler(waiting).then(() => {
      entered = true;
    });
    await vi.advanceTimersByTimeAsync(150);
    expect(entered).toBe(false);
    await vi.advanceTimersByTimeAsync(50);
    await entering;
    expect(entered).toBe(true);
    expect(bulkhead.held('org_a')).toBe(1);
  });
});

describe('ORG_BUSY_PERCENT', () => {
  it('is a whole percentage from 1 to 100, a third by default', () => {
    expect(loadConfig({}).bulkhead.share).toBe(0.33);
    expect(loadConfig({ ORG_BUSY_PERCENT: '100' }).bulkhead.share).toBe(1);
    expect(loadConfig({ ORG_BUSY_PERCENT: '5' }).bulkhead.share).toBe(0.05);
    for (const bad of ['0', '101', '33.3', 'half']) {
      expect(() => loadConfig({ ORG_BUSY_PERCENT: bad })).toThrow(ConfigError);
    }
  });
});

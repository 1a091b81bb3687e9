// D22: an authenticated read costs at most one statement on the database once its key is known (the key is
// then resolved from the in-process cache, checked against the access generation in the rate-limit round trip).
// Statements are counted by a Kysely plugin on the app's own database handle.

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryRateLimitStore,
  createRedisRateLimitStore,
  type RateLimitStore,
} from '../../../src/http/rate-limit.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { statementCounter } from '../../helpers/statement-counter.ts';

const counter = statementCounter();
// Each counted read starts a minute after the last, so each also writes its key's last use (decisions §18): that
// write runs off the request and is not one of the read's statements (a real minute crossed mid-read failed CI).
let minutes = 0;
const clock = { now: () => new Date(Date.now() + minutes * 60_000) };

let test: TestDatabase;
let closeStore = async () => {};
let h: Harness;
beforeAll(async () => {
  test = await createTestDatabase();
  // Keys are cached with the memory store on PGlite (one process) and with Redis on PostgreSQL; the budget is
  // reported as never spent, so these many reads are not refused.
  const store =
    test.url === undefined
      ? createMemoryRateLimitStore()
      : createRedisRateLimitStore(new Redis(process.env.TEST_REDIS_URL as string), `rl-test-${Date.now()}`);
  closeStore = () => store.close();
  const hitWithGeneration = store.hitWithGeneration as NonNullable<RateLimitStore['hitWithGeneration']>;
  const rateLimitStore: RateLimitStore = {
    ...store,
    hitWithGeneration: async (key, windowStart) => ({ ...(await hitWithGeneration(key, windowStart)), count: 1 }),
  };
  h = await startHarness({
    database: { ...test.database, db: test.database.db.withPlugin(counter.plugin) },
    rateLimitStore,
    clock,
  });
});
afterAll(async () => {
  await h.close();
  await closeStore();
  await test.drop();
});

async function statementsOf(key: string, path: string) {
  minutes += 1;
  const before = counter.count;
  const response = await h.api('GET', path, { key });
  expect(response.status, `${path}: ${response.text}`).toBe(200);
  return counter.count - before;
}

describe.skipIf(process.env.TEST_DB === 'postgres' && !process.env.TEST_REDIS_URL)('a read with a known key', () => {
  it('makes one statement: a contact with its property values, other reads by id, and the lists', async () => {
    const { key, template, account } = await sender(h);
    const property = await h.api('POST', '/v1/properties', { key, body: { key: 'tier', label: 'Tier', kind: 'TEXT' } });
    expect(property.status, property.text).toBe(201);
    const contact = await h.api('POST', '/v1/contacts', {
      key,
      body: { first_name: 'Ana', phone: phones(1)[0], properties: { tier: { kind: 'TEXT', value_text: 'gold' } } },
    });
    expect(contact.status, contact.text).toBe(201);
    const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Lead' } });
    expect(stage.status, stage.text).toBe(201);
    // The key is now cached: reads below are counted without the key lookup.
    await h.api('GET', '/v1/me', { key });

    expect(await statementsOf(key, `/v1/contacts/${contact.body.id}`)).toBe(1);
    expect((await h.api('GET', `/v1/contacts/${contact.body.id}`, { key })).body.properties.tier.value_text).toBe(
      'gold',
    );
    expect(await statementsOf(key, `/v1/properties/${property.body.id}`)).toBe(1);
    expect(await statementsOf(key, `/v1/funnel-stages/${stage.body.id}`)).toBe(1);
    expect(await statementsOf(key, `/v1/templates/${template.id}`)).toBe(1);
    expect(await statementsOf(key, '/v1/me')).toBe(0);
    const send = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(2)) },
    });
    expect(send.status, send.text).toBe(202);
    const inbound = await h.admin('POST', '/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from: phones(1)[0],
      text: 'hello',
    });
    expect(inbound.status, inbound.text).toBeLessThan(300);
    const conversations = await h.api('GET', '/v1/conversations', { key });
    const conversation = conversations.body.items[0].id as string;
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'https://93.184.216.34/hooks', events: ['contact.created'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    // decisions §19: teams (with their members), people and canned responses are one statement too.
    const team = await h.api('POST', '/v1/teams', { key, body: { name: 'Support' } });
    expect(team.status, team.text).toBe(201);
    const canned = await h.api('POST', '/v1/canned-responses', { key, body: { short_code: 'hi', text: 'Hi' } });
    expect(canned.status, canned.text).toBe(201);
    const counts: Record<string, number> = {};
    for (const path of [
      '/v1/teams',
      `/v1/teams/${team.body.id}`,
      '/v1/users',
      '/v1/canned-responses?q=h',
      `/v1/canned-responses/${canned.body.id}`,
      '/v1/conversations?status=open&sort=waiting_since',
      `/v1/broadcasts/${send.body.id}/recipients`,
      `/v1/webhook-endpoints/${endpoint.body.id}`,
      '/v1/webhook-endpoints',
      `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`,
      `/v1/broadcasts/${send.body.id}`,
      '/v1/broadcasts',
      '/v1/conversations',
      `/v1/conversations/${conversation}`,
      `/v1/conversations/${conversation}/messages`,
      '/v1/templates',
      '/v1/properties',
      '/v1/funnel-stages',
      '/v1/sub-origins',
      '/v1/channels/messaging/phones',
    ]) {
      counts[path] = await statementsOf(key, path);
    }
    expect(counts).toEqual(Object.fromEntries(Object.keys(counts).map((path) => [path, 1])));
    // The template and the organization's property keys (read through their own port): two statements at once.
    expect(await statementsOf(key, `/v1/templates/${template.id}/send-requirements`)).toBe(2);
  });
});

describe('reads whose parent row leads the statement', () => {
  it('answer 404 for an unknown parent even with a bad cursor, an empty page for a parent without rows', async () => {
    const { key, template } = await sender(h);
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'https://93.184.216.34/hooks', events: ['contact.created'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const empty = await h.api('GET', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { key });
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body).toEqual({ items: [], next_cursor: null });
    const badCursor = `/v1/webhook-endpoints/${endpoint.body.id}/deliveries?cursor=not-a-cursor`;
    expect((await h.api('GET', badCursor, { key })).status).toBe(422);
    for (const path of [
      '/v1/webhook-endpoints/we_unknown/deliveries',
      '/v1/webhook-endpoints/we_unknown/deliveries?cursor=not-a-cursor',
      '/v1/broadcasts/bc_unknown/recipients',
      '/v1/broadcasts/bc_unknown/recipients?cursor=not-a-cursor',
    ]) {
      const response = await h.api('GET', path, { key });
      expect(response.status, `${path}: ${response.text}`).toBe(404);
    }
    // A broadcast whose recipients are all still queued lists none of them, with their count of 0.
    const send = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(2)) },
    });
    expect(send.status, send.text).toBe(202);
    const queued = await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients`, { key });
    expect(queued.status, queued.text).toBe(200);
    expect(queued.body).toEqual({ items: [], next_cursor: null, total_count: 0 });
    const bad = await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients?cursor=not-a-cursor`, { key });
    expect(bad.status, bad.text).toBe(422);
  });
});

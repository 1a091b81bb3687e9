// decisions §18: key scopes (one table, every /v1 operation), expiry, last use, GET /v1/me's api_key, and the
// operator's key creation and listing.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_SCOPES, SCOPES, type Scope } from '../../../src/http/scopes.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

const clock = manualClock(Date.parse('2030-01-01T10:00:00.250Z'));
let h: Harness;
let operations: { method: string; path: string; url: string; operationId: string; security?: unknown }[] = [];

beforeAll(async () => {
  h = await startHarness({ clock });
  const document = h.app.swagger() as unknown as {
    paths: Record<string, Record<string, { operationId: string; security?: unknown }>>;
  };
  // The API's operations (the console's own routes, under /app/api, are signed in by a session, not a key).
  const v1Paths = Object.entries(document.paths).filter(([path]) => path.startsWith('/v1/'));
  operations = v1Paths.flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      url: path.replace(/\{[^}]+\}/g, 'id_from_nowhere'),
      operationId: operation.operationId,
      security: operation.security,
    })),
  );
});
afterAll(() => h.close());

/** A new second of the manual clock, so that each test starts with a fresh rate budget. */
const nextSecond = () => clock.advance(1000);

async function keyWith(orgId: string, body: Record<string, unknown>) {
  const created = await h.admin('POST', `/organizations/${orgId}/api-keys`, body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; key: string; scopes: string[]; expires_at: string | null };
}

/** A scope that does not grant `required` (another family's). */
const otherScope = (required: Scope): Scope => (required.startsWith('account') ? 'contacts:write' : 'account:read');

const bodyFor = (method: string) => (['POST', 'PATCH', 'PUT'].includes(method) ? { body: {} } : {});

describe('the operation → scope table', () => {
  it('gives every /v1 operation of the OpenAPI document a scope, as its security requirement', () => {
    expect(operations.length).toBeGreaterThan(40);
    for (const operation of operations) {
      const scope = OPERATION_SCOPES[operation.operationId as keyof typeof OPERATION_SCOPES];
      expect(SCOPES, `${operation.method} ${operation.path}`).toContain(scope);
      expect(operation.security, `${operation.method} ${operation.path}`).toEqual([{ apiKey: [scope] }]);
    }
  });

  it('names no operation the API does not have', () => {
    const documented = new Set(operations.map((operation) => operation.operationId));
    expect(Object.keys(OPERATION_SCOPES).filter((operationId) => !documented.has(operationId))).toEqual([]);
  });

  it('answers every operation 403 insufficient_scope with `required` for a key without its scope', async () => {
    const { org } = await h.createOrg();
    const keys = new Map<Scope, string>();
    for (const scope of ['account:read', 'contacts:write'] as const) {
      keys.set(scope, (await keyWith(org.id, { scopes: [scope] })).key);
    }
    for (const operation of operations) {
      nextSecond();
      const required = OPERATION_SCOPES[operation.operationId as keyof typeof OPERATION_SCOPES];
      const key = keys.get(otherScope(required)) as string;
      const response = await h.api(operation.method, operation.url, { key, ...bodyFor(operation.method) });
      const label = `${operation.method} ${operation.path}`;
      expect(response.status, label).toBe(403);
      expect(response.body, label).toEqual({ detail: { code: 'insufficient_scope', required } });
      expect(response.headers['x-ratelimit-remaining'], label).toBe('19');
    }
  });

  it('lets a key with exactly the operation’s scope past the scope check on every operation', async () => {
    const { org } = await h.createOrg();
    const keys = new Map<string, string>();
    for (const operation of operations) {
      nextSecond();
      const required = OPERATION_SCOPES[operation.operationId as keyof typeof OPERATION_SCOPES];
      if (!keys.has(required)) keys.set(required, (await keyWith(org.id, { scopes: [required] })).key);
      const key = keys.get(required) as string;
      const response = await h.api(operation.method, operation.url, { key, ...bodyFor(operation.method) });
      expect(response.status, `${operation.method} ${operation.path}`).not.toBe(403);
      expect(response.status, `${operation.method} ${operation.path}`).not.toBe(401);
    }
  });

  it('lets a :write scope read, and a :read scope not write', async () => {
    nextSecond();
    const { org } = await h.createOrg();
    const writer = await keyWith(org.id, { scopes: ['contacts:write'] });
    const reader = await keyWith(org.id, { scopes: ['contacts:read', 'templates:read'] });
    expect((await h.api('GET', '/v1/contacts', { key: writer.key })).status).toBe(200);
    const created = await h.api('POST', '/v1/contacts', { key: writer.key, body: { first_name: 'Ana' } });
    expect(created.status).toBe(201);
    expect((await h.api('GET', `/v1/contacts/${created.body.id}`, { key: reader.key })).status).toBe(200);
    const refused = await h.api('PATCH', `/v1/contacts/${created.body.id}`, {
      key: reader.key,
      body: { first_name: 'Bea' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: { code: 'insufficient_scope', required: 'contacts:write' } });
    // Nothing was written.
    expect((await h.api('GET', `/v1/contacts/${created.body.id}`, { key: writer.key })).body.first_name).toBe('Ana');
    expect((await h.api('GET', '/v1/me', { key: reader.key })).body.detail).toEqual({
      code: 'insufficient_scope',
      required: 'account:read',
    });
  });
});

describe('the order of the checks', () => {
  it('answers a missing scope before the plan gates, and an expired key before both', async () => {
    nextSecond();
    const { org } = await h.createOrg({ plan: 'pro' });
    const scoped = await keyWith(org.id, { scopes: ['account:read'] });
    const refused = await h.api('GET', '/v1/contacts', { key: scoped.key });
    expect(refused.body).toEqual({ detail: { code: 'insufficient_scope', required: 'contacts:read' } });
    expect((await h.api('GET', '/v1/me', { key: scoped.key })).body).toEqual({ detail: 'scale_plan_required' });
    const expiring = await keyWith(org.id, {
      scopes: ['account:read'],
      expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    clock.advance(60_000);
    const expired = await h.api('GET', '/v1/contacts', { key: expiring.key });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ detail: 'api_key_expired' });
    expect(expired.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('counts a request refused for its scope against the organization’s budget', async () => {
    nextSecond();
    const { org, key } = await h.createOrg();
    const scoped = await keyWith(org.id, { scopes: ['account:read'] });
    for (let i = 0; i < 20; i++) expect((await h.api('GET', '/v1/contacts', { key: scoped.key })).status).toBe(403);
    const over = await h.api('GET', '/v1/me', { key });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ detail: 'rate_limited' });
  });
});

describe('expiry', () => {
  it('serves a key until its expires_at, then answers 401 api_key_expired on every route', async () => {
    nextSecond();
    const { org } = await h.createOrg();
    const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const expiring = await keyWith(org.id, { name: 'Partner', expires_at: expiresAt });
    expect(expiring.expires_at).toBe(expiresAt);
    const me = await h.api('GET', '/v1/me', { key: expiring.key });
    expect(me.status).toBe(200);
    expect(me.body.api_key).toEqual({ id: expiring.id, name: 'Partner', scopes: ['*'], expires_at: expiresAt });
    // A cached key (a GET that may start before its check) expires too.
    expect((await h.api('GET', '/v1/contacts', { key: expiring.key })).status).toBe(200);
    clock.advance(3_600_000);
    for (const [method, url] of [
      ['GET', '/v1/me'],
      ['GET', '/v1/contacts'],
      ['POST', '/v1/contacts'],
    ] as const) {
      const response = await h.api(method, url, { key: expiring.key, ...bodyFor(method) });
      expect(response.status, `${method} ${url}`).toBe(401);
      expect(response.body).toEqual({ detail: 'api_key_expired' });
    }
  });
});

describe('operator: keys with scopes and expiry', () => {
  it('creates a key with scopes and shows them in GET /v1/me', async () => {
    nextSecond();
    const { org } = await h.createOrg();
    const created = await keyWith(org.id, { name: 'Dashboard', scopes: ['contacts:read', 'broadcasts:read'] });
    expect(created).toMatchObject({
      name: 'Dashboard',
      scopes: ['contacts:read', 'broadcasts:read'],
      expires_at: null,
    });
    const withAccount = await keyWith(org.id, { scopes: ['account:read'] });
    const me = await h.api('GET', '/v1/me', { key: withAccount.key });
    expect(me.body.api_key).toEqual({ id: withAccount.id, name: null, scopes: ['account:read'], expires_at: null });
  });

  it.each([
    ['an unknown scope', { scopes: ['contacts:delete'] }, ['body', 'scopes', 0]],
    ['a repeated scope', { scopes: ['contacts:read', 'contacts:read'] }, ['body', 'scopes']],
    ['an empty list', { scopes: [] }, ['body', 'scopes']],
    ['"*" beside others', { scopes: ['*', 'contacts:read'] }, ['body', 'scopes']],
    ['a past expiry', { expires_at: '2020-01-01T00:00:00Z' }, ['body', 'expires_at']],
    ['an expiry of now', { expires_at: 'NOW' }, ['body', 'expires_at']],
    ['an expiry that is not a time', { expires_at: 'tomorrow' }, ['body', 'expires_at']],
  ] as [string, Record<string, unknown>, (string | number)[]][])(
    'refuses %s with 422 and makes no key',
    async (_label, body, loc) => {
      nextSecond();
      const { org } = await h.createOrg();
      if (body.expires_at === 'NOW') body.expires_at = clock.now().toISOString();
      const response = await h.admin('POST', `/organizations/${org.id}/api-keys`, body);
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      expect(response.body.detail[0].loc).toEqual(loc);
      const listed = await h.admin('GET', `/organizations/${org.id}/api-keys`);
      expect(listed.body.items).toHaveLength(1);
    },
  );

  it('lists an organization’s keys with scopes, expiry and last use, never the secret', async () => {
    nextSecond();
    const { org, key, keyId } = await h.createOrg();
    const scoped = await keyWith(org.id, { name: 'Reports', scopes: ['contacts:read'] });
    await h.admin('DELETE', `/organizations/${org.id}/api-keys/${scoped.id}`);
    const listed = await h.admin('GET', `/organizations/${org.id}/api-keys`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([keyId, scoped.id]);
    expect(listed.body.items[1]).toEqual({
      id: scoped.id,
      name: 'Reports',
      prefix: scoped.key.slice(0, 10),
      scopes: ['contacts:read'],
      expires_at: null,
      last_used_at: null,
      created_at: expect.any(String),
      revoked_at: expect.any(String),
    });
    expect(listed.text).not.toContain(key);
    expect(listed.text).not.toContain(scoped.key);
    expect((await h.admin('GET', '/organizations/org_missing/api-keys')).status).toBe(404);
  });
});

describe('last use', () => {
  async function lastUsedAt(orgId: string, keyId: string) {
    const listed = await h.admin('GET', `/organizations/${orgId}/api-keys`);
    return (listed.body.items as { id: string; last_used_at: string | null }[]).find((item) => item.id === keyId)
      ?.last_used_at;
  }

  /** The key's last use once the writes under way (never awaited by requests) have landed. */
  async function settledLastUse(orgId: string, keyId: string) {
    await h.wiring.keyUsage.flush();
    return lastUsedAt(orgId, keyId);
  }

  it('records the minute of use, once a minute per key, not once per request', async () => {
    clock.set(Date.parse('2030-02-01T08:30:10.000Z'));
    const { org, key, keyId } = await h.createOrg();
    expect(await lastUsedAt(org.id, keyId)).toBeNull();
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
    expect(await settledLastUse(org.id, keyId)).toBe('2030-02-01T08:30:00.000Z');

    // Within the same minute no request writes it again: clear the column behind the server's back and use the
    // key; the column stays empty.
    await sql`update api_keys set last_used_at = null where id = ${keyId}`.execute(h.wiring.db);
    clock.advance(40_000);
    for (let i = 0; i < 5; i++) expect((await h.api('GET', '/v1/contacts', { key })).status).toBe(200);
    expect(await settledLastUse(org.id, keyId)).toBeNull();
    // The first request of the next minute writes that minute.
    clock.set(Date.parse('2030-02-01T08:31:00.000Z'));
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
    expect(await settledLastUse(org.id, keyId)).toBe('2030-02-01T08:31:00.000Z');
  });
});

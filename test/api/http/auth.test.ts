// Authentication and plan gates (decisions §4), and key storage.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const past = () => new Date(Date.now() - 60_000).toISOString();
const future = () => new Date(Date.now() + 86_400_000).toISOString();

describe('the three key cases', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a scheme other than Bearer', 'Basic dXNlcjpwYXNz'],
    ['Bearer with an empty token', 'Bearer '],
    ['Bearer alone', 'Bearer'],
  ])('%s is 401 missing_bearer_token', async (_label, header) => {
    const response = await h.api('GET', '/v1/me', { headers: header === undefined ? {} : { authorization: header } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'missing_bearer_token' });
  });

  it('a bearer token without the oak_ prefix (a session token) is 403 api_key_required', async () => {
    const response = await h.api('GET', '/v1/me', { key: 'sess_abcdef123456' });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: 'api_key_required' });
  });

  it('an unknown oak_ key is 401 invalid_api_key', async () => {
    const response = await h.api('GET', '/v1/me', { key: 'oak_doesnotexist0000000000000000000000000000' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'invalid_api_key' });
  });

  it('a revoked key stops working on the very next request', async () => {
    const { org, key, keyId } = await h.createOrg();
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
    expect((await h.admin('DELETE', `/organizations/${org.id}/api-keys/${keyId}`)).status).toBe(204);
    const response = await h.api('GET', '/v1/me', { key });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'invalid_api_key' });
  });

  it('accepts the scheme case-insensitively', async () => {
    const { key } = await h.createOrg();
    expect((await h.api('GET', '/v1/me', { headers: { authorization: `bearer ${key}` } })).status).toBe(200);
  });
});

describe('keys', () => {
  it('are oak_ plus at least 128 random bits, stored only as a SHA-256 hash with a short display prefix', async () => {
    const { org, key, keyId } = await h.createOrg();
    expect(key).toMatch(/^oak_[A-Za-z0-9_-]{43}$/); // 32 random bytes in base64url: 256 bits
    const rows = await h.database.db.selectFrom('api_keys').selectAll().where('org_id', '=', org.id).execute();
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row?.id).toBe(keyId);
    expect(row?.key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(row?.display_prefix).toBe(key.slice(0, 10));
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('are all different', async () => {
    const { org } = await h.createOrg();
    const keys = await Promise.all(
      Array.from({ length: 10 }, () => h.admin('POST', `/organizations/${org.id}/api-keys`, {})),
    );
    expect(new Set(keys.map((response) => response.body.key)).size).toBe(10);
  });

  it('of one organization never read another organization', async () => {
    const first = await h.createOrg({ name: 'First' });
    const second = await h.createOrg({ name: 'Second' });
    expect((await h.api('GET', '/v1/me', { key: first.key })).body.id).toBe(first.org.id);
    expect((await h.api('GET', '/v1/me', { key: second.key })).body.id).toBe(second.org.id);
  });
});

describe('plan gates, in order', () => {
  it.each([
    [
      'canceled subscription (before any other gate)',
      { subscription_status: 'canceled', trial: true, trial_ends_at: past(), plan: 'free' },
      'subscription_required',
    ],
    ['suspended subscription', { subscription_status: 'suspended', plan: 'enterprise' }, 'subscription_required'],
    ['expired trial (before the plan gate)', { trial: true, trial_ends_at: past(), plan: 'free' }, 'trial_expired'],
    ['plan below Scale, not on trial', { plan: 'pro' }, 'scale_plan_required'],
    ['free plan, not on trial', { plan: 'free' }, 'scale_plan_required'],
  ])('%s is 403 %s', async (_label, settings, code) => {
    const { key } = await h.createOrg(settings);
    const response = await h.api('GET', '/v1/me', { key });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ detail: code });
  });

  it.each([
    ['Scale plan', { plan: 'scale' }],
    ['Enterprise plan', { plan: 'enterprise' }],
    ['running trial on the free plan', { plan: 'free', trial: true, trial_ends_at: future() }],
    ['trial without an end date', { plan: 'starter', trial: true }],
  ])('%s is let in', async (_label, settings) => {
    const { key } = await h.createOrg(settings);
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
  });

  it('follows changes of the organization at once', async () => {
    const { org, key } = await h.createOrg({ plan: 'scale' });
    await h.admin('PATCH', `/organizations/${org.id}`, { subscription_status: 'suspended' });
    expect((await h.api('GET', '/v1/me', { key })).body).toEqual({ detail: 'subscription_required' });
    await h.admin('PATCH', `/organizations/${org.id}`, { subscription_status: 'active' });
    expect((await h.api('GET', '/v1/me', { key })).status).toBe(200);
  });
});

describe('GET /v1/me', () => {
  it('returns the organization with the documented fields', async () => {
    const trialEnds = future();
    const { org, key, keyId } = await h.createOrg({
      name: 'Acme',
      plan: 'starter',
      trial: true,
      trial_ends_at: trialEnds,
      timezone: 'America/Mexico_City',
      language: 'es',
    });
    const response = await h.api('GET', '/v1/me', { key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: org.id,
      name: 'Acme',
      plan: 'starter',
      trial: true,
      trial_ends_at: trialEnds,
      subscription_status: 'active',
      timezone: 'America/Mexico_City',
      language: 'es',
      created_at: org.created_at,
      api_key: { id: keyId, name: 'test', scopes: ['*'], expires_at: null },
    });
  });
});

describe('unknown /v1 routes', () => {
  it('authenticate first, then answer 404 not_found or 405', async () => {
    expect((await h.api('GET', '/v1/nothing-here')).status).toBe(401);
    const { key } = await h.createOrg();
    expect((await h.api('GET', '/v1/nothing-here', { key })).body).toEqual({ detail: 'not_found' });
    const wrongMethod = await h.api('DELETE', '/v1/me', { key });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.allow).toContain('GET');
  });
});

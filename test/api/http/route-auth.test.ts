// One shared suite: the auth cases against every /v1 route the OpenAPI document lists (new routes join by themselves).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let operations: { method: string; url: string }[] = [];
let revokedKey: string;
let suspendedKey: string;
let proKey: string;
let expiredTrialKey: string;

beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  const document = h.app.swagger() as { paths: Record<string, Record<string, unknown>> };
  // The console's own routes (/app/api) take a session, not a key: test/api/console-route-auth.test.ts.
  operations = Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method: method.toUpperCase(),
        url: path.replace(/\{[^}]+\}/g, 'id_from_nowhere'),
      })),
    );
  const revoked = await h.createOrg();
  await h.admin('DELETE', `/organizations/${revoked.org.id}/api-keys/${revoked.keyId}`);
  revokedKey = revoked.key;
  suspendedKey = (await h.createOrg({ subscription_status: 'suspended' })).key;
  proKey = (await h.createOrg({ plan: 'pro' })).key;
  expiredTrialKey = (await h.createOrg({ trial: true, trial_ends_at: '2020-01-01T00:00:00Z' })).key;
});
afterAll(() => h.close());

const cases: [string, () => Record<string, string>, number, string][] = [
  ['no credential', () => ({}), 401, 'missing_bearer_token'],
  ['a session token', () => ({ authorization: 'Bearer sess_123' }), 403, 'api_key_required'],
  ['an unknown key', () => ({ authorization: 'Bearer oak_unknown' }), 401, 'invalid_api_key'],
  ['a revoked key', () => ({ authorization: `Bearer ${revokedKey}` }), 401, 'invalid_api_key'],
  ['a suspended subscription', () => ({ authorization: `Bearer ${suspendedKey}` }), 403, 'subscription_required'],
  ['an expired trial', () => ({ authorization: `Bearer ${expiredTrialKey}` }), 403, 'trial_expired'],
  ['a plan below Scale', () => ({ authorization: `Bearer ${proKey}` }), 403, 'scale_plan_required'],
];

describe('every /v1 route', () => {
  it('is listed (the suite is not empty)', () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it.each(cases)('refuses %s', async (_label, headers, status, detail) => {
    for (const operation of operations) {
      const response = await h.api(operation.method, operation.url, {
        headers: headers(),
        ...(['POST', 'PATCH', 'PUT'].includes(operation.method) ? { body: {} } : {}),
      });
      expect(response.status, `${operation.method} ${operation.url}`).toBe(status);
      expect(response.body, `${operation.method} ${operation.url}`).toEqual({ detail });
      expect(response.headers['x-ratelimit-limit'], `${operation.method} ${operation.url}`).toBeDefined();
      expect(response.headers['x-ratelimit-remaining']).toBeDefined();
      expect(response.headers['x-ratelimit-reset']).toBeDefined();
    }
  });
});

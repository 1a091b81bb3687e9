// Reads with a cached key start before their key check (D21: one database and one Redis round trip, side by
// side); the answer must still be exactly what the sequential order gives: revoked 401, gates 403, over budget 429,
// with nothing of the read in the body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

const clock = manualClock();
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ clock });
});
afterAll(() => h.close());

async function cachedContact() {
  clock.advance(1000);
  const { org, key, keyId } = await h.createOrg({ plan: 'scale' });
  const contact = await h.api('POST', '/v1/contacts', {
    key,
    body: { first_name: 'Early', email: 'early@example.com' },
  });
  expect(contact.status, contact.text).toBe(201);
  const path = `/v1/contacts/${contact.body.id}`;
  // Twice: the first read caches the key, the second runs the early path.
  for (let i = 0; i < 2; i++) expect((await h.api('GET', path, { key })).status).toBe(200);
  clock.advance(1000);
  return { org, key, keyId, path };
}

describe('a read started before its key check', () => {
  it('answers 401 invalid_api_key, without the contact, once the key is revoked', async () => {
    const { org, key, keyId, path } = await cachedContact();
    expect((await h.admin('DELETE', `/organizations/${org.id}/api-keys/${keyId}`)).status).toBe(204);
    const refused = await h.api('GET', path, { key });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: 'invalid_api_key' });
    expect(refused.text).not.toContain('Early');
    // A missing contact is no different: the key answers first.
    expect((await h.api('GET', '/v1/contacts/ct_missing', { key })).body).toEqual({ detail: 'invalid_api_key' });
  });

  it('answers 403 at once when the organization is suspended or its plan lowered', async () => {
    const { org, key, path } = await cachedContact();
    await h.admin('PATCH', `/organizations/${org.id}`, { subscription_status: 'suspended' });
    expect((await h.api('GET', path, { key })).body).toEqual({ detail: 'subscription_required' });
    await h.admin('PATCH', `/organizations/${org.id}`, { subscription_status: 'active', plan: 'pro' });
    expect((await h.api('GET', path, { key })).body).toEqual({ detail: 'scale_plan_required' });
    await h.admin('PATCH', `/organizations/${org.id}`, { plan: 'scale' });
    expect((await h.api('GET', path, { key })).status).toBe(200);
  });

  it('answers 429 with the budget headers past 20 in a second, concurrent or not', async () => {
    const { key, path } = await cachedContact();
    const responses = await Promise.all(Array.from({ length: 25 }, () => h.api('GET', path, { key })));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
    const refused = responses.filter((response) => response.status === 429);
    expect(refused).toHaveLength(5);
    for (const response of refused) {
      expect(response.body).toEqual({ detail: 'rate_limited' });
      expect(response.headers['retry-after']).toBe('1');
      expect(response.headers['x-ratelimit-remaining']).toBe('0');
    }
    const remaining = responses
      .map((response) => Number(response.headers['x-ratelimit-remaining']))
      .sort((a, b) => a - b);
    expect(remaining.slice(5)).toEqual(Array.from({ length: 20 }, (_, index) => index));
  });
});

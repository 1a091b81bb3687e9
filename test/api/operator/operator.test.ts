// The operator API (decisions §8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createMemoryRateLimitStore } from '../../../src/http/rate-limit.ts';
import { wire } from '../../../src/wiring.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('access', () => {
  it('is off (404) when no ADMIN_TOKEN is configured', async () => {
    const app = await buildApp(wire({ database: h.database, rateLimitStore: createMemoryRateLimitStore() }));
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/admin/v1/organizations',
        headers: { authorization: 'Bearer anything' },
        payload: { name: 'x' },
      });
      expect(response.statusCode).toBe(404);
    } finally {
      await app.close();
    }
  });

  it('needs the operator token', async () => {
    const none = await h.app.inject({ method: 'GET', url: '/admin/v1/organizations/org_x' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ detail: 'missing_bearer_token' });
    const wrong = await h.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations/org_x',
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ detail: 'invalid_admin_token' });
  });

  it('does not accept an organization API key', async () => {
    const { key } = await h.createOrg();
    const response = await h.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations/org_x',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.statusCode).toBe(401);
  });
});

describe('organizations', () => {
  it('are created with the documented defaults', async () => {
    const response = await h.admin('POST', '/organizations', { name: 'Defaults Inc' });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: 'Defaults Inc',
      plan: 'scale',
      trial: false,
      trial_ends_at: null,
      subscription_status: 'active',
      timezone: 'UTC',
      language: 'en',
    });
    expect(response.body.id).toMatch(/^org_/);
    expect((await h.admin('GET', `/organizations/${response.body.id}`)).body).toEqual(response.body);
  });

  it('take every setting and are patched partially', async () => {
    const created = await h.admin('POST', '/organizations', {
      name: 'Full',
      plan: 'pro',
      trial: true,
      trial_ends_at: '2031-01-01T00:00:00.000Z',
      subscription_status: 'active',
      timezone: 'Europe/Madrid',
      language: 'pt-BR',
    });
    expect(created.status).toBe(201);
    const patched = await h.admin('PATCH', `/organizations/${created.body.id}`, { plan: 'enterprise', trial: false });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      plan: 'enterprise',
      trial: false,
      timezone: 'Europe/Madrid',
      language: 'pt-BR',
    });
  });

  it.each([
    [{}, ['body', 'name'], 'missing'],
    [{ name: 12 }, ['body', 'name'], 'string_type'],
    [{ name: 'x', plan: 'gold' }, ['body', 'plan'], 'enum'],
    [{ name: 'x', subscription_status: 'paused' }, ['body', 'subscription_status'], 'enum'],
    [{ name: 'x', trial: 'yes' }, ['body', 'trial'], 'bool_type'],
    [{ name: 'x', trial_ends_at: 'tomorrow' }, ['body', 'trial_ends_at'], 'datetime_from_date_parsing'],
    [{ name: 'x', timezone: 'Mars/Olympus' }, ['body', 'timezone'], 'value_error'],
    [{ name: 'x', unknown: 1 }, ['body', 'unknown'], 'extra_forbidden'],
  ])('refuse %j with a 422 at %j', async (body, loc, type) => {
    const response = await h.admin('POST', '/organizations', body);
    expect(response.status).toBe(422);
    expect(response.body.detail).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('are 404 when unknown, and an empty patch is a 422', async () => {
    expect((await h.admin('GET', '/organizations/org_missing')).status).toBe(404);
    expect((await h.admin('PATCH', '/organizations/org_missing', { plan: 'pro' })).status).toBe(404);
    const { org } = await h.createOrg();
    expect((await h.admin('PATCH', `/organizations/${org.id}`, {})).status).toBe(422);
  });
});

describe('API keys', () => {
  it('show the key only when created', async () => {
    const { org } = await h.createOrg();
    const created = await h.admin('POST', `/organizations/${org.id}/api-keys`, { name: 'CI' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'CI',
      key: expect.stringMatching(/^oak_/),
      id: expect.stringMatching(/^key_/),
    });
    expect(created.body.prefix).toBe(created.body.key.slice(0, 10));
    expect(JSON.stringify((await h.admin('GET', `/organizations/${org.id}`)).body)).not.toContain(created.body.key);
  });

  it('are made without a body too', async () => {
    const { org } = await h.createOrg();
    const created = await h.admin('POST', `/organizations/${org.id}/api-keys`);
    expect(created.status).toBe(201);
    expect(created.body.name).toBeNull();
  });

  it('are 404 for an unknown organization, and revoking an unknown key is 404', async () => {
    expect((await h.admin('POST', '/organizations/org_missing/api-keys', {})).status).toBe(404);
    const { org } = await h.createOrg();
    expect((await h.admin('DELETE', `/organizations/${org.id}/api-keys/key_missing`)).status).toBe(404);
  });

  it('cannot be revoked through another organization', async () => {
    const owner = await h.createOrg();
    const other = await h.createOrg();
    expect((await h.admin('DELETE', `/organizations/${other.org.id}/api-keys/${owner.keyId}`)).status).toBe(404);
    expect((await h.api('GET', '/v1/me', { key: owner.key })).status).toBe(200);
  });
});

describe('messaging accounts and numbers', () => {
  it('are created with defaults, sandbox ids and their numbers', async () => {
    const { org } = await h.createOrg();
    const response = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      numbers: [{ phone: '+15550001111', display_name: 'Sales' }],
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      org_id: org.id,
      balance: 100,
      prices: { MARKETING: 1, UTILITY: 1, AUTHENTICATION: 1 },
      messaging_limit_24h: 1000,
      business_account_id: expect.stringMatching(/^\d{15}$/),
    });
    expect(response.body.numbers).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^ch_/),
        phone: '+15550001111',
        display_name: 'Sales',
        status: 'live',
        phone_number_id: expect.stringMatching(/^\d{15}$/),
        business_account_id: response.body.business_account_id,
      }),
    ]);
  });

  it('take the platform ids, balance, prices and limit, and patch them', async () => {
    const { org } = await h.createOrg();
    const waba = `${Date.now()}${Math.floor(Math.random() * 1000)}`;
    const created = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      business_account_id: waba,
      balance: 12.5,
      prices: { MARKETING: 0.25 },
      messaging_limit_24h: 250,
      numbers: [{ phone: '+5215512345678', phone_number_id: `${waba}1` }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ business_account_id: waba, balance: 12.5, messaging_limit_24h: 250 });
    expect(created.body.prices).toEqual({ MARKETING: 0.25, UTILITY: 1, AUTHENTICATION: 1 });
    const patched = await h.admin('PATCH', `/messaging-accounts/${created.body.id}`, {
      balance: 3,
      prices: { UTILITY: 0.5 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ balance: 3, messaging_limit_24h: 250 });
    expect(patched.body.prices).toEqual({ MARKETING: 0.25, UTILITY: 0.5, AUTHENTICATION: 1 });
    expect((await h.admin('GET', `/messaging-accounts/${created.body.id}`)).body.balance).toBe(3);

    const duplicate = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      business_account_id: waba,
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail.code).toBe('business_account_id_taken');
  });

  it('are listed for their organization as each one is shown (D223)', async () => {
    const { org } = await h.createOrg();
    const empty = await h.admin('GET', `/organizations/${org.id}/messaging-accounts`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ items: [] });
    const first = (await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, { balance: 7 })).body;
    const second = (
      await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
        messaging_limit_24h: 40,
        numbers: [{ phone: '+15550003333' }],
      })
    ).body;
    // Another organization's accounts are not listed.
    const other = await h.createOrg();
    await h.admin('POST', `/organizations/${other.org.id}/messaging-accounts`, {});
    const listed = await h.admin('GET', `/organizations/${org.id}/messaging-accounts`);
    expect(listed.status).toBe(200);
    const shown = await Promise.all(
      [first, second].map(async (account) => (await h.admin('GET', `/messaging-accounts/${account.id}`)).body),
    );
    expect(listed.body).toEqual({ items: shown });
    expect((await h.admin('GET', '/organizations/org_unknown/messaging-accounts')).status).toBe(404);
  });

  it('add and remove numbers; a removed number is no longer live', async () => {
    const { org } = await h.createOrg();
    const account = (await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, { numbers: [] })).body;
    const number = await h.admin('POST', `/messaging-accounts/${account.id}/numbers`, { phone: '+442071234567' });
    expect(number.status).toBe(201);
    expect(number.body).toMatchObject({
      phone: '+442071234567',
      status: 'live',
      business_account_id: account.business_account_id,
    });
    expect((await h.admin('DELETE', `/messaging-accounts/${account.id}/numbers/${number.body.id}`)).status).toBe(204);
    expect((await h.admin('DELETE', `/messaging-accounts/${account.id}/numbers/${number.body.id}`)).status).toBe(404);
    const after = await h.admin('GET', `/messaging-accounts/${account.id}`);
    expect(after.body.numbers).toEqual([expect.objectContaining({ id: number.body.id, status: 'removed' })]);
  });

  it('refuse a phone number id that is already live', async () => {
    const { org } = await h.createOrg();
    const id = `${Date.now()}77`;
    const account = (await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {})).body;
    expect(
      (
        await h.admin('POST', `/messaging-accounts/${account.id}/numbers`, {
          phone: '+15550002222',
          phone_number_id: id,
        })
      ).status,
    ).toBe(201);
    const again = await h.admin('POST', `/messaging-accounts/${account.id}/numbers`, {
      phone: '+15550003333',
      phone_number_id: id,
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toEqual({ code: 'phone_number_id_taken', phone_number_id: id });
  });

  it('validate their input', async () => {
    const { org } = await h.createOrg();
    const bad = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      balance: -1,
      numbers: [{ phone: '5551234' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContainEqual(
      expect.objectContaining({ loc: ['body', 'balance'], type: 'greater_than_equal' }),
    );
    expect(bad.body.detail).toContainEqual(
      expect.objectContaining({ loc: ['body', 'numbers', 0, 'phone'], type: 'string_pattern_mismatch' }),
    );
    expect((await h.admin('POST', '/organizations/org_missing/messaging-accounts', {})).status).toBe(404);
    expect((await h.admin('GET', '/messaging-accounts/ma_missing')).status).toBe(404);
    expect((await h.admin('PATCH', '/messaging-accounts/ma_missing', { balance: 1 })).status).toBe(404);
  });

  it('write nothing when one of the numbers is refused', async () => {
    const { org } = await h.createOrg();
    const taken = `${Date.now()}99`;
    const first = (await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {})).body;
    await h.admin('POST', `/messaging-accounts/${first.id}/numbers`, { phone: '+15550004444', phone_number_id: taken });
    const refused = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      business_account_id: `${taken}0`,
      numbers: [{ phone: '+15550005555' }, { phone: '+15550006666', phone_number_id: taken }],
    });
    expect(refused.status).toBe(409);
    const accounts = await h.database.db
      .selectFrom('messaging_accounts')
      .select('id')
      .where('org_id', '=', org.id)
      .execute();
    expect(accounts).toHaveLength(1);
  });
});

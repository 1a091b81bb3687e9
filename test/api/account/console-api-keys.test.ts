// The organization's API keys in the console (decisions §17, §18): an admin lists the keys in force, creates one
// (its secret shown once, working on /v1 at once), and revokes one (refused on /v1 at once); agents are refused
// 403 forbidden_for_role; another organization's key is a 404; the key rules are the operator's (422 at its field).
// And the organization's messaging accounts, read only (D169).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('API keys in the console', () => {
  it('lets an admin list, create and revoke keys; a created key works at once and a revoked one stops', async () => {
    const { org, keyId } = await h.createOrg();
    const admin = await createUser(h, org.id, { role: 'admin' });

    const before = await admin.client.call('GET', '/app/api/api-keys');
    expect(before.status).toBe(200);
    expect(before.body.items.map((key: { id: string }) => key.id)).toEqual([keyId]);

    const created = await admin.client.call('POST', '/app/api/api-keys', {
      body: { name: 'Zapier', scopes: ['contacts:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Zapier', scopes: ['contacts:read'], expires_at: null });
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);
    expect((await h.api('GET', '/v1/contacts', { key: created.body.key })).status).toBe(200);
    // Its scopes hold: no contacts:write.
    const write = await h.api('POST', '/v1/contacts', { key: created.body.key, body: { first_name: 'A' } });
    expect(write.status).toBe(403);

    const listed = await admin.client.call('GET', '/app/api/api-keys');
    expect(listed.body.items).toHaveLength(2);
    const shown = listed.body.items.find((key: { id: string }) => key.id === created.body.id);
    expect(shown).toMatchObject({ name: 'Zapier', prefix: created.body.prefix, revoked_at: null });
    expect(shown.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

    expect((await admin.client.call('DELETE', `/app/api/api-keys/${created.body.id}`)).status).toBe(204);
    const refused = await h.api('GET', '/v1/contacts', { key: created.body.key });
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('invalid_api_key');
    const after = await admin.client.call('GET', '/app/api/api-keys');
    expect(after.body.items.map((key: { id: string }) => key.id)).toEqual([keyId]);
  });

  it('refuses bad input at its field, a key of another organization (404) and agents (403)', async () => {
    const { org } = await h.createOrg();
    const other = await h.createOrg();
    const admin = await createUser(h, org.id, { role: 'admin' });
    const agent = await createUser(h, org.id, { role: 'agent' });

    const bad = await admin.client.call('POST', '/app/api/api-keys', {
      body: { name: 'x', scopes: ['*', 'contacts:read'] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'scopes']);
    const past = await admin.client.call('POST', '/app/api/api-keys', {
      body: { name: 'x', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(422);
    expect(past.body.detail[0].loc).toEqual(['body', 'expires_at']);

    const stranger = await admin.client.call('DELETE', `/app/api/api-keys/${other.keyId}`);
    expect(stranger.status).toBe(404);
    expect((await h.api('GET', '/v1/contacts', { key: other.key })).status).toBe(200);

    for (const [method, url, body] of [
      ['GET', '/app/api/api-keys', undefined],
      ['POST', '/app/api/api-keys', { name: 'mine' }],
      ['DELETE', `/app/api/api-keys/${other.keyId}`, undefined],
    ] as const) {
      const response = await agent.client.call(method, url, body ? { body } : {});
      expect(response.status, `${method} ${url}`).toBe(403);
      expect(response.body.detail.code).toBe('forbidden_for_role');
    }
  });

  it('shows an admin the organization’s messaging accounts (balance, prices, limit, numbers), no other’s; agents 403', async () => {
    const { org } = await h.createOrg();
    const other = await h.createOrg();
    const admin = await createUser(h, org.id, { role: 'admin' });
    const agent = await createUser(h, org.id, { role: 'agent' });
    expect((await admin.client.call('GET', '/app/api/messaging-accounts')).body).toEqual({ items: [] });

    const made = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      display_name: 'Main',
      numbers: [{ phone: '+15550003000', display_name: 'Support' }],
    });
    expect(made.status).toBe(201);
    expect(
      (await h.admin('PATCH', `/messaging-accounts/${made.body.id}`, { balance: 12.5, messaging_limit_24h: 250 }))
        .status,
    ).toBe(200);
    expect((await h.admin('POST', `/organizations/${other.org.id}/messaging-accounts`, {})).status).toBe(201);

    const listed = await admin.client.call('GET', '/app/api/messaging-accounts');
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]).toEqual({
      id: made.body.id,
      display_name: 'Main',
      balance: 12.5,
      prices: made.body.prices,
      messaging_limit_24h: 250,
      numbers: [{ phone: '+15550003000', display_name: 'Support' }],
    });
    // A second account: each lists its own numbers, in the order the accounts were made.
    const second = await h.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      display_name: 'Second',
      numbers: [{ phone: '+15550003001' }, { phone: '+15550003002' }],
    });
    expect(second.status).toBe(201);
    const both = (await admin.client.call('GET', '/app/api/messaging-accounts')).body.items;
    expect(both.map((account: { id: string }) => account.id)).toEqual([made.body.id, second.body.id]);
    expect(both[0].numbers.map((number: { phone: string }) => number.phone)).toEqual(['+15550003000']);
    expect(both[1].numbers.map((number: { phone: string }) => number.phone)).toEqual(['+15550003001', '+15550003002']);
    const refused = await agent.client.call('GET', '/app/api/messaging-accounts');
    expect(refused.status).toBe(403);
    expect(refused.body.detail.code).toBe('forbidden_for_role');
  });
});

// The console's people, managed by admins (decisions §17): list, invite with a sign-in link, role, removal; the
// organization's last admin stays; agents are refused 403 forbidden_for_role.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient, createUser, TEST_PASSWORD } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const email = () => `u-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe('people in the console', () => {
  it('lets an admin invite, list, change the role of and remove people', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id, { role: 'admin' });
    const address = email();
    const invited = await admin.client.call('POST', '/app/api/users', { body: { email: address, role: 'agent' } });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ email: address, role: 'agent', name: null });
    expect(invited.body.sign_in_url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/app\/set-password#token=sil_/);

    const list = await admin.client.call('GET', '/app/api/users');
    expect(list.status).toBe(200);
    expect(list.body.items.map((user: { email: string }) => user.email)).toEqual([admin.email, address]);

    const promoted = await admin.client.call('PATCH', `/app/api/users/${invited.body.id}`, {
      body: { role: 'admin', name: 'Bea' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ role: 'admin', name: 'Bea' });

    const link = await admin.client.call('POST', `/app/api/users/${invited.body.id}/sign-in-link`);
    expect(link.status).toBe(201);
    // The first link stopped working when the second was made.
    const first = new URL(invited.body.sign_in_url).hash.replace('#token=', '');
    const stale = await consoleClient(h).call('POST', '/app/api/sign-in-links/accept', {
      body: { token: first, password: TEST_PASSWORD },
    });
    expect(stale.status).toBe(410);

    expect((await admin.client.call('DELETE', `/app/api/users/${invited.body.id}`)).status).toBe(204);
    expect((await admin.client.call('DELETE', `/app/api/users/${invited.body.id}`)).status).toBe(404);
  });

  it('answers 404 for a person of another organization', async () => {
    const { org } = await h.createOrg();
    const other = await h.createOrg();
    const admin = await createUser(h, org.id);
    const stranger = await createUser(h, other.org.id);
    for (const [method, url, body] of [
      ['PATCH', `/app/api/users/${stranger.user.id}`, { role: 'agent' }],
      ['DELETE', `/app/api/users/${stranger.user.id}`, undefined],
      ['POST', `/app/api/users/${stranger.user.id}/sign-in-link`, undefined],
    ] as const) {
      const response = await admin.client.call(method, url, body ? { body } : {});
      expect(response.status, `${method} ${url}`).toBe(404);
    }
    expect((await stranger.client.call('GET', '/app/api/session')).status).toBe(200);
  });

  it('ends a removed person’s session at once, and applies a role change to the next request', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const other = await createUser(h, org.id, { role: 'admin' });
    expect((await other.client.call('GET', '/app/api/users')).status).toBe(200);
    await admin.client.call('PATCH', `/app/api/users/${other.user.id}`, { body: { role: 'agent' } });
    const refused = await other.client.call('GET', '/app/api/users');
    expect(refused.status).toBe(403);
    expect(refused.body.detail.code).toBe('forbidden_for_role');
    await admin.client.call('DELETE', `/app/api/users/${other.user.id}`);
    expect((await other.client.call('GET', '/app/api/session')).status).toBe(401);
  });

  it('keeps the last admin, also against concurrent demotions', async () => {
    const { org } = await h.createOrg();
    const alone = await createUser(h, org.id);
    const demote = await alone.client.call('PATCH', `/app/api/users/${alone.user.id}`, { body: { role: 'agent' } });
    expect(demote.status).toBe(409);
    expect(demote.body.detail.code).toBe('last_admin');
    expect((await alone.client.call('DELETE', `/app/api/users/${alone.user.id}`)).status).toBe(409);

    const second = await createUser(h, org.id);
    const answers = await Promise.all([
      alone.client.call('PATCH', `/app/api/users/${second.user.id}`, { body: { role: 'agent' } }),
      second.client.call('PATCH', `/app/api/users/${alone.user.id}`, { body: { role: 'agent' } }),
    ]);
    // Whichever lands first wins. The other is refused: 409 last_admin when both ran side by side, or 403
    // forbidden_for_role when its author had already been demoted by the winner (roles apply to the next request).
    const refusals = answers.filter((answer) => answer.status !== 200);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(refusals).toHaveLength(1);
    expect([
      ['409', 'last_admin'],
      ['403', 'forbidden_for_role'],
    ]).toContainEqual([String(refusals[0]?.status), refusals[0]?.body.detail.code]);
    const admins = (await h.admin('GET', `/organizations/${org.id}`)).status;
    expect(admins).toBe(200);
    const remaining = await h.database.db
      .selectFrom('users')
      .select('id')
      .where('org_id', '=', org.id)
      .where('role', '=', 'admin')
      .execute();
    expect(remaining).toHaveLength(1);
  });

  it('refuses agents every people operation (403 forbidden_for_role) and a duplicate email (409)', async () => {
    const { org } = await h.createOrg();
    const admin = await createUser(h, org.id);
    const agent = await createUser(h, org.id, { role: 'agent' });
    for (const [method, url, body] of [
      ['GET', '/app/api/users', undefined],
      ['POST', '/app/api/users', { email: email(), role: 'admin' }],
      ['PATCH', `/app/api/users/${agent.user.id}`, { role: 'admin' }],
      ['DELETE', `/app/api/users/${admin.user.id}`, undefined],
      ['POST', `/app/api/users/${admin.user.id}/sign-in-link`, undefined],
    ] as const) {
      const response = await agent.client.call(method, url, body ? { body } : {});
      expect(response.status, `${method} ${url}`).toBe(403);
      expect(response.body.detail.code).toBe('forbidden_for_role');
    }
    const duplicate = await admin.client.call('POST', '/app/api/users', {
      body: { email: agent.email, role: 'agent' },
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail.code).toBe('duplicate_user');
  });
});

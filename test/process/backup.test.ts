// D147: `crm backup` while the server runs (the server is asked for a consistent copy), `crm restore`
// into a fresh DATA_DIR, and a server on the restored directory reads every kind of record back. Real processes,
// embedded database only (PostgreSQL has pg_dump); the refusals are checked too.

import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServer } from '../helpers/process.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { waitForValue } from '../helpers/wait.ts';

const onPGlite = process.env.TEST_DB !== 'postgres';
const ADMIN = 'backup-admin-token';
let receiver: Server | undefined;
afterAll(() => {
  receiver?.close();
});

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> =>
  waitForValue(read, done, { message: what, timeoutMs: 30_000, intervalMs: 50 });

/** Every kind of record the organization has, as the API shows it (last use left out: reading is a use). */
async function snapshot(base: string, key: string, orgId: string, accountId: string) {
  // The snapshot reads fast and the organization's budget is per second: a 429 is waited out as a client would.
  const get = async (path: string, token = key) => {
    let response = await call(base, 'GET', path, token);
    while (response.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      response = await call(base, 'GET', path, token);
    }
    expect(response.status, path).toBe(200);
    return response.body;
  };
  const contacts = await get('/v1/contacts?include_total=true');
  const broadcasts = await get('/v1/broadcasts');
  const conversations = await get('/v1/conversations');
  const endpoints = await get('/v1/webhook-endpoints');
  const keys = await get(`/admin/v1/organizations/${orgId}/api-keys`, ADMIN);
  return {
    organization: await get(`/admin/v1/organizations/${orgId}`, ADMIN),
    account: await get(`/admin/v1/messaging-accounts/${accountId}`, ADMIN),
    keys: keys.items.map(({ last_used_at: _used, ...rest }: Record<string, unknown>) => rest),
    me: await get('/v1/me'),
    phones: await get('/v1/channels/messaging/phones'),
    contacts,
    contactPages: await Promise.all(contacts.items.map((item: { id: string }) => get(`/v1/contacts/${item.id}`))),
    properties: await get('/v1/properties'),
    stages: await get('/v1/funnel-stages'),
    subOrigins: await get('/v1/sub-origins'),
    templates: await get('/v1/templates'),
    broadcasts,
    recipients: await Promise.all(
      broadcasts.items.map((item: { id: string }) => get(`/v1/broadcasts/${item.id}/recipients`)),
    ),
    conversations,
    messages: await Promise.all(
      conversations.items.map((item: { id: string }) => get(`/v1/conversations/${item.id}/messages`)),
    ),
    endpoints,
    deliveries: await Promise.all(
      endpoints.items.map((item: { id: string }) => get(`/v1/webhook-endpoints/${item.id}/deliveries`)),
    ),
  };
}

describe.skipIf(!onPGlite)('crm backup and crm restore (embedded database)', { timeout: 240_000 }, () => {
  it('backs up a running server, restores into a fresh DATA_DIR, and every record reads back', async () => {
    receiver = createServer((_request, response) => response.writeHead(204).end());
    await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const original = tempDir('crm-backup-test-');
    const env = { ADMIN_TOKEN: ADMIN, WEBHOOK_ALLOW_HOSTS: '127.0.0.1', SANDBOX_AUTO_REPORTS_MS: '10' };
    let server: ServerProcess = await startServer({ ...env, DATA_DIR: original });
    const file = join(tempDir('crm-backup-test-'), 'crm.tar.gz');
    let before: Awaited<ReturnType<typeof snapshot>>;
    let ids: { key: string; orgId: string; accountId: string };
    try {
      const base = server.baseUrl;
      const admin = (method: string, path: string, body?: unknown) =>
        call(base, method, `/admin/v1${path}`, ADMIN, body);
      const org = (await admin('POST', '/organizations', { name: 'Backed Up', timezone: 'America/Lima' })).body;
      const key = (await admin('POST', `/organizations/${org.id}/api-keys`, { name: 'full' })).body.key as string;
      const scoped = await admin('POST', `/organizations/${org.id}/api-keys`, {
        name: 'reports',
        scopes: ['contacts:read'],
        expires_at: '2099-01-01T00:00:00.000Z',
      });
      expect(scoped.status).toBe(201);
      const account = (
        await admin('POST', `/organizations/${org.id}/messaging-accounts`, {
          numbers: [{ phone: '+15550109999' }],
        })
      ).body;
      const api = (method: string, path: string, body?: unknown) => call(base, method, `/v1${path}`, key, body);
      expect((await api('POST', '/webhook-endpoints', { url: hook, events: ['contact.created'] })).status).toBe(201);
      expect((await api('POST', '/properties', { key: 'tier', label: 'Tier', kind: 'TEXT' })).status).toBe(201);
      expect((await api('POST', '/funnel-stages', { name: 'Qualified' })).status).toBe(201);
      expect((await api('POST', '/sub-origins', { key: 'fair', label: 'Fair', origin: 'API' })).status).toBe(201);
      const contact = await api('POST', '/contacts', {
        first_name: 'Ana',
        email: 'ana@example.com',
        phone: '+15550107777',
        properties: { tier: { kind: 'TEXT', value_text: 'gold' } },
      });
      expect(contact.status).toBe(201);
      const template = await api('POST', '/templates', {
        name: 'backup_notice',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Your code is {{1}}', example: { body_text: [['123']] } }],
      });
      expect(template.status).toBe(201);
      expect((await admin('POST', `/sandbox/templates/${template.body.id}/review`, { event: 'APPROVED' })).status).toBe(
        200,
      );
      const sent = await api('POST', `/templates/${template.body.id}/send`, {
        recipients: ['+15550107777', '+15550108888'].map((phone) => ({ phone, variables: { 'body.1': '42' } })),
      });
      expect(sent.status).toBe(202);
      const inbound = await admin('POST', '/sandbox/inbound', {
        channel_id: account.numbers[0].id,
        from: '+15550107777',
        text: 'hello',
      });
      expect(inbound.status).toBe(200);
      // Settled before the copy: the broadcast delivered, every event delivered to the receiver.
      await until(
        () => api('GET', `/broadcasts/${sent.body.id}`),
        (response) => response.body.status === 'completed' && response.body.pending === 0,
        'the broadcast',
      );
      const endpointId = (await api('GET', '/webhook-endpoints')).body.items[0].id;
      await until(
        () => api('GET', `/webhook-endpoints/${endpointId}/deliveries`),
        (response) =>
          response.body.items.length >= 2 &&
          response.body.items.every((item: { status: string }) => item.status === 'succeeded'),
        'the deliveries',
      );
      ids = { key, orgId: org.id, accountId: account.id };
      before = await snapshot(base, key, org.id, account.id);
      expect(before.contacts.items.length).toBe(2);
      expect(before.conversations.items.length).toBeGreaterThan(0);
      expect(before.messages.flatMap((page: { items: unknown[] }) => page.items).length).toBeGreaterThan(2);

      // Refused without the operator token: only the server can take a consistent copy.
      const refused = runCli(['backup', file], { DATA_DIR: original, CRM_BASE_URL: base });
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('set ADMIN_TOKEN');
      expect(existsSync(file)).toBe(false);

      const backup = runCli(['backup', file], { DATA_DIR: original, CRM_BASE_URL: base, ADMIN_TOKEN: ADMIN });
      expect(backup.status, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout).bytes).toBeGreaterThan(0);
      // A change after the copy is not in it.
      expect((await api('POST', '/contacts', { first_name: 'After' })).status).toBe(201);

      // A restore never overwrites a database, least of all a running server's.
      const over = runCli(['restore', file], { DATA_DIR: original });
      expect(over.status).toBe(1);
      expect(over.stderr).toContain('is not empty');
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const fresh = join(tempDir('crm-backup-test-'), 'restored');
    const restore = runCli(['restore', file], { DATA_DIR: fresh });
    expect(restore.status, restore.stderr).toBe(0);
    server = await startServer({ ...env, DATA_DIR: fresh });
    try {
      const after = await snapshot(server.baseUrl, ids.key, ids.orgId, ids.accountId);
      expect(after).toEqual(before);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    // With no server on it, `crm backup` reads the directory itself.
    const offline = join(tempDir('crm-backup-test-'), 'offline.tar.gz');
    const copied = runCli(['backup', offline], { DATA_DIR: fresh });
    expect(copied.status, copied.stderr).toBe(0);
    const third = join(tempDir('crm-backup-test-'), 'third');
    expect(runCli(['restore', offline], { DATA_DIR: third }).status).toBe(0);
    const orgs = runCli(['org', 'list'], { DATA_DIR: third });
    expect(orgs.status, orgs.stderr).toBe(0);
    expect(JSON.parse(orgs.stdout).map((row: { id: string }) => row.id)).toEqual([ids.orgId]);
  });

  it('refuses on PostgreSQL, pointing at pg_dump and pg_restore', () => {
    const file = join(tempDir('crm-backup-test-'), 'never.tar.gz');
    const backup = runCli(['backup', file], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(backup.status).toBe(1);
    expect(backup.stderr).toContain('pg_dump');
    const restore = runCli(['restore', file], { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(restore.status).toBe(1);
    expect(restore.stderr).toContain('pg_restore');
    expect(existsSync(file)).toBe(false);
  });
});

// decisions §19 helpers: an organization with a number, conversations opened by contacts' messages, its people,
// and the `conversation.*` events it recorded (an endpoint subscribed to every type makes them recorded).
import { expect } from 'vitest';
import type { Harness } from './harness.ts';
import { inbound } from './messages.ts';

export async function inboxOrg(h: Harness) {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, { numbers: [{ phone: '+15550100001' }] });
  const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'https://93.184.216.34/hooks', events: ['*'] },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  return { orgId: org.id as string, key, channelId: account.numbers[0].id as string };
}

export { inbound };

/** A contact's first message: answers the new conversation. */
export async function openConversation(h: Harness, key: string, channelId: string, from: string) {
  const delivered = await inbound(h, channelId, from);
  expect(delivered.status, delivered.text).toBe(200);
  const list = await h.api('GET', '/v1/conversations', { key });
  return list.body.items.find((item: { contact: { phone: string } }) => item.contact.phone === from);
}

/** A person of the organization (no password: enough to own conversations). */
export async function addUser(h: Harness, orgId: string, role: 'admin' | 'agent' = 'agent') {
  const email = `person-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const created = await h.admin('POST', `/organizations/${orgId}/users`, { email, role, name: email.split('@')[0] });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

/** The organization's events of `type`, in the order they were recorded. */
export async function eventsOf(h: Harness, orgId: string, type: string) {
  const rows = await h.database.db
    .selectFrom('webhook_events')
    .select(['id', 'payload'])
    .where('org_id', '=', orgId)
    .where('type', '=', type)
    .orderBy('id')
    .execute();
  return rows.map((row) => {
    const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
    return payload.data;
  });
}

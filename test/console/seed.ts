// What the browser suite's organization holds before a person signs in: a number, contacts, a custom property, an
// approved template, a conversation and a broadcast with a failure, all made through the operator and public APIs.
import type { ConsoleServer } from './server.ts';

export interface Seeded {
  orgId: string;
  key: string;
  accountId: string;
  channelId: string;
  templateId: string;
  broadcastId: string;
  conversationId: string;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The organization of a browser suite file; `trial` gives it a trial's budget of 5 key requests a second. */
export async function seed(server: ConsoleServer, options: { trial?: boolean } = {}): Promise<Seeded> {
  const ok = <T>(response: { status: number; body: T }, what: string): T => {
    if (response.status >= 300) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const org = ok(
    await server.admin('POST', '/organizations', {
      name: 'Acme Shoes',
      timezone: 'America/Mexico_City',
      ...(options.trial ? { trial: true, trial_ends_at: '2099-01-01T00:00:00Z' } : {}),
    }),
    'organization',
  );
  const { key } = ok(await server.admin('POST', `/organizations/${org.id}/api-keys`, { name: 'seed' }), 'key');
  const account = ok(
    await server.admin('POST', `/organizations/${org.id}/messaging-accounts`, {
      display_name: 'Acme',
      numbers: [{ phone: '+15550001000', display_name: 'Acme support' }],
    }),
    'account',
  );
  const api = (method: string, path: string, body?: unknown) => server.api(key, method, path, body);
  const channelId = ok(await api('GET', '/v1/channels/messaging/phones'), 'phones').items[0].id;
  ok(
    await api('POST', '/v1/properties', {
      key: 'plan',
      label: 'Plan',
      kind: 'DROPDOWN',
      options: [
        { key: 'gold', label: 'Gold' },
        { key: 'silver', label: 'Silver' },
      ],
    }),
    'property',
  );
  for (const [first_name, last_name, email, phone, country] of [
    ['Ana', 'García', 'ana@example.com', '+5215512345678', 'MX'],
    ['Bruno', 'Souza', 'bruno@example.com', '+5511987654321', 'BR'],
    ['Chloé', 'Martin', 'chloe@example.com', '+33612345678', 'FR'],
  ])
    ok(await api('POST', '/v1/contacts', { first_name, last_name, email, phone, country }), 'contact');

  const template = ok(
    await api('POST', '/v1/templates', {
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hello {{1}}, your order is on its way.', example: { body_text: [['Ana']] } }],
    }),
    'template',
  );
  await until('the template approved', async () => {
    const current = ok(await api('GET', `/v1/templates/${template.id}`), 'template');
    return current.status === 'APPROVED' ? current : undefined;
  });
  const broadcast = ok(
    await api('POST', `/v1/templates/${template.id}/send`, {
      recipients: [
        { phone: '+5215512345678', variables: { 'body.1': 'Ana' } },
        { phone: '+15550100404', variables: { 'body.1': 'Nobody' } },
        { phone: '+15550100500', variables: { 'body.1': 'Flaky' } },
      ],
    }),
    'send',
  );
  await until('the broadcast finished', async () => {
    const current = ok(await api('GET', `/v1/broadcasts/${broadcast.id}`), 'broadcast');
    return current.pending === 0 ? current : undefined;
  });
  ok(
    await server.admin('POST', '/sandbox/inbound', {
      channel_id: channelId,
      from: '+5215512345678',
      text: 'Hola, ¿dónde está mi pedido?',
    }),
    'inbound',
  );
  const conversation = await until('the conversation', async () => {
    const page = ok(await api('GET', '/v1/conversations'), 'conversations');
    return page.items[0];
  });
  return {
    orgId: org.id,
    key,
    accountId: account.id,
    channelId,
    templateId: template.id,
    broadcastId: broadcast.id,
    conversationId: conversation.id,
  };
}

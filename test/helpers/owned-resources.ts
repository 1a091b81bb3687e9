// An organization holding one of each resource a /v1 path names by id, for the suites that run against every route.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Harness } from './harness.ts';
import { approvedTemplate, phones } from './sends.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 1)]);

/** Where the owned media message's file is (decisions §15: the sandbox fetches it when the media is asked for). */
async function fileServer(): Promise<string> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
    response.end(PNG);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // lives as long as the test process, keeps nothing alive
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface OwnedResources {
  key: string;
  /** Ids by path parameter name (`contact_id`, `template_id`, …). */
  ids: Record<string, string>;
}

export async function createOwnedResources(h: Harness): Promise<OwnedResources> {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id);
  const channelId = account.numbers[0].id as string;
  const [phone] = phones(1) as [string];
  const contact = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Owned', phone } });
  const property = await h.api('POST', '/v1/properties', { key, body: { key: 'owned', label: 'Owned', kind: 'TEXT' } });
  const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Owned' } });
  const template = await approvedTemplate(h, key);
  const broadcast = await h.api('POST', `/v1/templates/${template.id}/send`, {
    key,
    body: { recipients: [{ contact_id: contact.body.id, variables: { 'body.1': '1' } }] },
  });
  await h.fanout.drain();
  await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hello' });
  await h.admin('POST', '/sandbox/inbound', {
    channel_id: channelId,
    from: phone,
    type: 'image',
    media_url: `${await fileServer()}/owned.png`,
  });
  const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
  const messages = (await h.api('GET', `/v1/conversations/${conversation?.id}/messages`, { key })).body.items;
  const message = messages.find((item: { media: unknown }) => item.media !== null);
  const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'https://93.184.216.34/owned', events: ['*'] },
  });
  const ping = await h.api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`, { key });
  const team = await h.api('POST', '/v1/teams', { key, body: { name: 'Owned' } });
  const canned = await h.api('POST', '/v1/canned-responses', { key, body: { short_code: 'owned', text: 'Owned' } });
  const rule = await h.api('POST', '/v1/automation-rules', {
    key,
    body: {
      name: 'Owned',
      event: 'message.received',
      conditions: [{ field: 'message.text', operator: 'contains', value: 'owned' }],
      actions: [{ type: 'add_labels', labels: ['owned'] }],
    },
  });
  const file = await h.api('POST', '/v1/files', {
    key,
    body: {
      filename: 'owned.png',
      data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    },
  });
  const ids: Record<string, string> = {
    contact_id: contact.body.id,
    property_id: property.body.id,
    stage_id: stage.body.id,
    template_id: template.id,
    broadcast_id: broadcast.body.id,
    conversation_id: conversation?.id,
    message_id: message?.id,
    endpoint_id: endpoint.body.id,
    delivery_id: ping.body.id,
    team_id: team.body.id,
    canned_response_id: canned.body.id,
    rule_id: rule.body.id,
    file_id: file.body.id,
  };
  for (const [name, id] of Object.entries(ids)) if (!id) throw new Error(`fixture ${name} was not created`);
  return { key, ids };
}

// Webhook endpoints through the public API (decisions §11): create with a secret shown once, list, read, update,
// delete, rotate, the URL rules checked when saved, the limit of 20, and another organization's endpoint a 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const PUBLIC_URL = 'https://93.184.216.34/hooks';
const create = (key: string, body: unknown) => h.api('POST', '/v1/webhook-endpoints', { key, body });

describe('create, read, list', () => {
  it('answers 201 with the secret once; reads and lists never show it', async () => {
    const { key } = await h.createOrg();
    const created = await create(key, { url: PUBLIC_URL, events: ['contact.created'], description: 'CRM sync' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^we_/),
      url: PUBLIC_URL,
      events: ['contact.created'],
      description: 'CRM sync',
      enabled: true,
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);
    const { secret, ...visible } = created.body;
    const read = await h.api('GET', `/v1/webhook-endpoints/${created.body.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(visible);
    const second = await create(key, { url: `${PUBLIC_URL}/2`, events: ['*'] });
    expect(second.body).toMatchObject({ description: null, events: ['*'] });
    expect(second.body.secret).not.toBe(secret);
    const list = await h.api('GET', '/v1/webhook-endpoints', { key });
    expect(Object.keys(list.body)).toEqual(['items']);
    expect(list.body.items.map((item: any) => item.id)).toEqual([created.body.id, second.body.id]);
    expect(list.body.items.every((item: any) => !('secret' in item))).toBe(true);
  });

  it.each([
    ['an unknown type', ['contact.created', 'contact.exploded'], ['body', 'events', 1]],
    ['no type', [], ['body', 'events']],
    ['ping (only the test call sends it)', ['ping'], ['body', 'events', 0]],
  ])('refuses %s with a 422 and writes nothing', async (_label, events, loc) => {
    const { key } = await h.createOrg();
    const refused = await create(key, { url: PUBLIC_URL, events });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.map((issue: any) => issue.loc)).toContainEqual(loc);
    expect((await h.api('GET', '/v1/webhook-endpoints', { key })).body.items).toEqual([]);
  });
});

describe('URL rules, checked when saved', () => {
  it.each([
    ['http:// to a public host', 'http://93.184.216.34/hooks'],
    ['a loopback address', 'https://127.0.0.2/hooks'],
    ['a private address', 'https://10.1.2.3/hooks'],
    ['a link-local address (cloud metadata)', 'https://169.254.169.254/latest'],
    ['an IPv6 loopback', 'https://[::1]/hooks'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/hooks'],
    ['a name that resolves to loopback', 'https://localhost/hooks'],
    ['another scheme', 'ftp://93.184.216.34/hooks'],
    ['not a URL', 'hooks.example.com'],
  ])('refuses %s: 422 on ["body","url"]', async (_label, url) => {
    const { key } = await h.createOrg();
    const refused = await create(key, { url, events: ['*'] });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'url'], type: 'value_error', input: url });
    expect((await h.api('GET', '/v1/webhook-endpoints', { key })).body.items).toEqual([]);
  });

  it('allows http:// and private addresses for hosts in WEBHOOK_ALLOW_HOSTS only', async () => {
    const { key } = await h.createOrg();
    // The harness allows 127.0.0.1 (the tests' receivers), not 127.0.0.2 and not localhost.
    expect((await create(key, { url: 'http://127.0.0.1:9/hooks', events: ['*'] })).status).toBe(201);
    expect((await create(key, { url: 'https://127.0.0.1:9/hooks', events: ['*'] })).status).toBe(201);
    expect((await create(key, { url: 'http://localhost:9/hooks', events: ['*'] })).status).toBe(422);
  });

  it('applies the rules to a PATCH and leaves the endpoint as it was', async () => {
    const { key } = await h.createOrg();
    const endpoint = (await create(key, { url: PUBLIC_URL, events: ['*'] })).body;
    const refused = await h.api('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, {
      key,
      body: { url: 'https://192.168.0.10/hooks', description: 'moved' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['body', 'url']);
    const read = (await h.api('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key })).body;
    expect(read).toMatchObject({ url: PUBLIC_URL, description: null });
  });
});

describe('update, rotate, delete', () => {
  it('PATCH changes any of url, events, description, enabled', async () => {
    const { key } = await h.createOrg();
    const endpoint = (await create(key, { url: PUBLIC_URL, events: ['*'], description: 'x' })).body;
    const path = `/v1/webhook-endpoints/${endpoint.id}`;
    const patched = await h.api('PATCH', path, {
      key,
      body: { url: `${PUBLIC_URL}/v2`, events: ['contact.deleted', 'message.received'], description: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: `${PUBLIC_URL}/v2`,
      events: ['contact.deleted', 'message.received'],
      description: null,
      enabled: true,
    });
    expect(patched.body).not.toHaveProperty('secret');
    const disabled = await h.api('PATCH', path, { key, body: { enabled: false } });
    expect(disabled.body).toMatchObject({ enabled: false, disabled_reason: null });
    const enabled = await h.api('PATCH', path, { key, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await h.api('PATCH', path, { key, body: { enabled: 'yes' } })).status).toBe(422);
    expect((await h.api('PATCH', path, { key, body: { secret: 'whsec_x' } })).status).toBe(422);
  });

  it('rotate-secret answers 200 with a new secret; DELETE answers 204 and then 404', async () => {
    const { key } = await h.createOrg();
    const endpoint = (await create(key, { url: PUBLIC_URL, events: ['*'] })).body;
    const rotated = await h.api('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.id).toBe(endpoint.id);
    const deleted = await h.api('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await h.api('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/webhook-endpoints/${endpoint.id}`, { key })).status).toBe(404);
  });
});

describe('limits and isolation', () => {
  it('allows 20 endpoints per organization, also under concurrent creates; the 21st is a 422', async () => {
    const { key } = await h.createOrg();
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) => create(key, { url: `${PUBLIC_URL}/${i}`, events: ['*'] })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(6);
    for (const answer of refused) {
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toMatchObject({ code: 'webhook_endpoint_limit', limit: 20 });
    }
    expect((await h.api('GET', '/v1/webhook-endpoints', { key })).body.items).toHaveLength(20);
    // Another organization has its own 20.
    const other = await h.createOrg();
    expect((await create(other.key, { url: PUBLIC_URL, events: ['*'] })).status).toBe(201);
  });

  it('answers 404 for another organization’s endpoint on every route', async () => {
    const owner = await h.createOrg();
    const stranger = await h.createOrg();
    const endpoint = (await create(owner.key, { url: PUBLIC_URL, events: ['*'] })).body;
    await h.api('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: owner.key });
    const delivery = (await h.api('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: owner.key })).body
      .items[0];
    expect(delivery).toBeDefined();
    const base = `/v1/webhook-endpoints/${endpoint.id}`;
    for (const [method, url, body] of [
      ['GET', base],
      ['PATCH', base, { description: 'mine now' }],
      ['DELETE', base],
      ['POST', `${base}/rotate-secret`],
      ['POST', `${base}/test`],
      ['GET', `${base}/deliveries`],
      ['POST', `${base}/deliveries/${delivery.id}/retry`],
    ] as const) {
      const answer = await h.api(method, url, { key: stranger.key, ...(body ? { body } : {}) });
      expect(answer.status, `${method} ${url}`).toBe(404);
      expect(answer.body).toEqual({ detail: 'not_found' });
    }
    expect((await h.api('GET', '/v1/webhook-endpoints', { key: stranger.key })).body.items).toEqual([]);
    // Untouched for its owner.
    expect((await h.api('GET', base, { key: owner.key })).body).toMatchObject({ description: null, enabled: true });
    // A delivery of the owner's endpoint is not reachable through another endpoint either.
    const ownOther = (await create(owner.key, { url: `${PUBLIC_URL}/b`, events: ['*'] })).body;
    const crossed = await h.api('POST', `/v1/webhook-endpoints/${ownOther.id}/deliveries/${delivery.id}/retry`, {
      key: owner.key,
    });
    expect(crossed.status).toBe(404);
  });
});

describe('the OpenAPI document', () => {
  it('describes every event payload in its top-level webhooks section', async () => {
    const document = (await h.api('GET', '/v1/openapi.json')).body;
    expect(Object.keys(document.webhooks).sort()).toEqual(
      [
        'broadcast.finished',
        'broadcast.started',
        'broadcast.recipient.updated',
        'contact.created',
        'contact.deleted',
        'contact.updated',
        'conversation.note_created',
        'conversation.updated',
        'message.received',
        'message.updated',
        'ping',
        'template.status_updated',
      ].sort(),
    );
    // Schemas are named components (`$ref`), in the webhooks section as in the paths.
    const deref = (schema: any) =>
      schema.$ref ? document.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    const created = document.webhooks['contact.created'].post;
    expect(created.parameters.map((parameter: any) => parameter.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    const media = created.requestBody.content['application/json'];
    const body = deref(media.schema);
    expect(body.required).toEqual(['id', 'type', 'created_at', 'data']);
    expect(body.properties.type.const).toBe('contact.created');
    expect(media.example).toMatchObject({ type: 'contact.created', data: { id: expect.any(String) } });
    // data is the Contact as the API documents it: the very same component.
    const contactRef =
      document.paths['/v1/contacts/{contact_id}'].get.responses['200'].content['application/json'].schema;
    expect(body.properties.data.$ref).toBe(contactRef.$ref);
    const contact = deref(contactRef);
    expect(Object.keys(deref(body.properties.data).properties).sort()).toEqual(Object.keys(contact.properties).sort());
    const recipient = deref(
      deref(document.webhooks['broadcast.recipient.updated'].post.requestBody.content['application/json'].schema)
        .properties.data,
    );
    expect(Object.keys(recipient.properties)).toEqual(
      expect.arrayContaining(['broadcast_id', 'platform_message_id', 'status']),
    );
    expect(document.paths['/v1/webhook-endpoints'].post.responses['422']).toBeDefined();
  });
});

// Templates through HTTP with the Cloud API adapter against the fake Graph API server (real HTTP on 127.0.0.1):
// the exact wire shapes the service sends, and how platform refusals and faults come back.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type FakeCloudApi,
  isTemplateCreate,
  isTemplateDelete,
  startFakeCloudApi,
} from '../../fakes/fake-cloud-api.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let fake: FakeCloudApi;
beforeAll(async () => {
  fake = await startFakeCloudApi();
  h = await startHarness({
    unlimited: true,
    platform: 'cloud',
    cloud: { baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 500 },
  });
});
afterAll(async () => {
  await h.close();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

let sequence = 0;
async function setup() {
  sequence += 1;
  const { org, key } = await h.createOrg();
  const waba = `10229012934${String(1000 + sequence)}`;
  await h.createAccount(org.id, {
    business_account_id: waba,
    numbers: [{ phone: '+15550100001', phone_number_id: `10654035224${String(1000 + sequence)}` }],
  });
  return { key, waba };
}

const components = [
  {
    type: 'BODY',
    text: 'Hi {{first_name}}, your code is ready',
    example: { body_text_named_params: [{ param_name: 'first_name', example: 'Ana' }] },
  },
  { type: 'FOOTER', text: 'Reply STOP to opt out' },
];
const body = { name: 'ready_notice', language: 'en-US', category: 'UTILITY', components };

describe('create', () => {
  it('posts the documented body to /{waba}/message_templates and stores the platform id', async () => {
    const { key, waba } = await setup();
    const created = await h.api('POST', '/v1/templates', { key, body });
    expect(created.status).toBe(201);
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request).toMatchObject({ method: 'POST', path: `/${waba}/message_templates` });
    expect(request!.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(request!.body).toEqual({
      name: 'ready_notice',
      language: 'en_US',
      category: 'UTILITY',
      parameter_format: 'named',
      components,
    });
    expect(created.body).toMatchObject({ status: 'PENDING', language: 'en_US', business_account_id: waba });
    expect(created.body.platform_template_id).toMatch(/^\d+$/);
  });

  it('answers 422 platform_rejected with the platform’s explanation and stores nothing', async () => {
    const { key } = await setup();
    fake.refuseNextTemplate({
      code: 100,
      subcode: 2388023,
      message: 'Invalid parameter',
      userTitle: 'Language is being deleted',
      userMsg: "New English (US) content can't be added while the existing English (US) content is being deleted.",
    });
    const refused = await h.api('POST', '/v1/templates', { key, body });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual({
      code: 'platform_rejected',
      reason: "New English (US) content can't be added while the existing English (US) content is being deleted.",
    });
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toEqual([]);
    // Nothing was kept: the name is free for the next try.
    expect((await h.api('POST', '/v1/templates', { key, body })).status).toBe(201);
  });

  it('answers 503 platform_unavailable when the platform does not answer, and stores nothing', async () => {
    const { key } = await setup();
    fake.hangNext(isTemplateCreate);
    const response = await h.api('POST', '/v1/templates', { key, body });
    expect(response.status).toBe(503);
    expect(response.body.detail.code).toBe('platform_unavailable');
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toEqual([]);
  });
});

describe('delete', () => {
  it('deletes by name and hsm_id at the platform', async () => {
    const { key, waba } = await setup();
    const created = await h.api('POST', '/v1/templates', { key, body });
    expect((await h.api('DELETE', `/v1/templates/${created.body.id}`, { key })).status).toBe(204);
    const request = fake.requests.find(isTemplateDelete);
    expect(request).toMatchObject({
      path: `/${waba}/message_templates`,
      query: { name: 'ready_notice', hsm_id: created.body.platform_template_id },
    });
  });

  it('stands locally when the platform refuses or does not answer', async () => {
    const { key } = await setup();
    const first = await h.api('POST', '/v1/templates', { key, body });
    fake.failNextDelete({ code: 100, message: 'Template not found' });
    expect((await h.api('DELETE', `/v1/templates/${first.body.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', `/v1/templates/${first.body.id}`, { key })).status).toBe(404);

    const second = await h.api('POST', '/v1/templates', { key, body });
    expect(second.status).toBe(201);
    fake.hangNext(isTemplateDelete);
    expect((await h.api('DELETE', `/v1/templates/${second.body.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', '/v1/templates', { key })).body.items).toEqual([]);
  });
});

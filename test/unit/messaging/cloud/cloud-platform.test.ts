import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCloudPlatform } from '../../../../src/messaging/cloud/cloud-platform.ts';
import type { MessagingPlatform, TemplateMessage } from '../../../../src/messaging/platform.ts';
import { type FakeCloudApi, isSend, isTemplateCreate, startFakeCloudApi } from '../../../fakes/fake-cloud-api.ts';

let fake: FakeCloudApi;
let platform: MessagingPlatform;

beforeEach(async () => {
  fake = await startFakeCloudApi();
  platform = createCloudPlatform({ baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 2000 });
});
afterEach(async () => {
  await fake.close();
});

const simpleMessage: TemplateMessage = {
  phoneNumberId: '106540352242922',
  to: '+15551234567',
  templateName: 'order_update',
  language: 'en_US',
  components: [{ type: 'body', parameters: [{ type: 'text', text: 'Pablo' }] }],
};

describe('submitTemplate', () => {
  const submission = {
    businessAccountId: '102290129340398',
    name: 'seasonal_promo',
    language: 'en_US',
    category: 'MARKETING' as const,
    parameterFormat: 'named' as const,
    components: [
      {
        type: 'BODY',
        text: 'Hi {{first_name}}, our sale ends soon',
        example: { body_text_named_params: [{ param_name: 'first_name', example: 'Pablo' }] },
      },
    ],
  };

  it('posts the template to the business account with bearer auth and the exact body', async () => {
    const result = await platform.submitTemplate(submission);
    expect(result).toEqual({
      ok: true,
      platformTemplateId: expect.any(String),
      status: 'PENDING',
      category: 'MARKETING',
    });
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/102290129340398/message_templates');
    expect(request?.headers.authorization).toBe('Bearer test-token');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({
      name: 'seasonal_promo',
      language: 'en_US',
      category: 'MARKETING',
      parameter_format: 'named',
      components: submission.components,
    });
  });

  it('takes the category the platform answers with (re-categorised at creation)', async () => {
    fake.script(isTemplateCreate, { status: 200, body: { id: '42', status: 'APPROVED', category: 'UTILITY' } });
    expect(await platform.submitTemplate(submission)).toEqual({
      ok: true,
      platformTemplateId: '42',
      status: 'APPROVED',
      category: 'UTILITY',
    });
  });

  it('turns the error envelope into a refusal, preferring error_user_msg', async () => {
    fake.refuseNextTemplate({
      code: 100,
      subcode: 2388024,
      message: 'Invalid parameter',
      userTitle: 'Content in this language already exists',
      userMsg: 'The name seasonal_promo is being deleted; try again in 4 weeks',
    });
    expect(await platform.submitTemplate(submission)).toEqual({
      ok: false,
      reason: 'The name seasonal_promo is being deleted; try again in 4 weeks',
      code: 100,
    });
  });

  it('falls back to the error message when there is no user message', async () => {
    fake.refuseNextTemplate({ code: 192, message: '(#192) Param components[0] is invalid' });
    expect(await platform.submitTemplate(submission)).toEqual({
      ok: false,
      reason: '(#192) Param components[0] is invalid',
      code: 192,
    });
  });

  it('reports an unreachable platform as a refusal instead of throwing', async () => {
    await fake.close();
    const result = await platform.submitTemplate(submission);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/unreachable/);
    expect(result).toMatchObject({ unavailable: true });
    fake = await startFakeCloudApi(); // afterEach closes it
  });

  it('marks a server fault as unavailable and a content refusal as not', async () => {
    fake.refuseNextTemplate({ code: 1, message: 'An unknown error occurred', httpStatus: 500 });
    expect(await platform.submitTemplate(submission)).toMatchObject({ ok: false, unavailable: true });
    fake.refuseNextTemplate({ code: 100, message: 'Invalid parameter', userMsg: 'Body has too many variables' });
    const refused = await platform.submitTemplate(submission);
    expect(refused).toEqual({ ok: false, code: 100, reason: 'Body has too many variables' });
  });
});

describe('deleteTemplate', () => {
  const deletion = {
    businessAccountId: '102290129340398',
    name: 'seasonal_promo',
    platformTemplateId: '594425479261597',
  };

  it('deletes by name and hsm_id', async () => {
    expect(await platform.deleteTemplate(deletion)).toEqual({ ok: true });
    const [request] = fake.requests;
    expect(request?.method).toBe('DELETE');
    expect(request?.path).toBe('/102290129340398/message_templates');
    expect(request?.query).toEqual({ name: 'seasonal_promo', hsm_id: '594425479261597' });
    expect(request?.headers.authorization).toBe('Bearer test-token');
    expect(request?.rawBody).toBe('');
  });

  it('reports a refusal without throwing', async () => {
    fake.failNextDelete({ code: 100, message: 'Message template not found' });
    expect(await platform.deleteTemplate(deletion)).toEqual({ ok: false, reason: 'Message template not found' });
  });

  it('reports a network failure without throwing', async () => {
    const failing = createCloudPlatform({
      baseUrl: fake.baseUrl,
      token: 't',
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    });
    const result = await failing.deleteTemplate(deletion);
    expect(result.ok).toBe(false);
    expect(result.reason).toMatch(/fetch failed/);
  });

  it('does not throw even when fetch itself throws synchronously', async () => {
    const failing = createCloudPlatform({
      baseUrl: fake.baseUrl,
      token: 't',
      fetch: () => {
        throw new Error('boom');
      },
    });
    expect((await failing.deleteTemplate(deletion)).ok).toBe(false);
  });
});

describe('sendTemplate', () => {
  it('posts the exact message envelope and returns the platform message id', async () => {
    const result = await platform.sendTemplate(simpleMessage);
    expect(result).toEqual({ ok: true, platformMessageId: 'wamid.FAKE000001' });
    const [request] = fake.requests;
    expect(request?.path).toBe('/106540352242922/messages');
    expect(request?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15551234567',
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Pablo' }] }],
      },
    });
  });

  it('maps every parameter and component kind to the wire', async () => {
    await platform.sendTemplate({
      ...simpleMessage,
      components: [
        { type: 'header', parameters: [{ type: 'image', link: 'https://cdn.example.com/a.jpg' }] },
        { type: 'limited_time_offer', parameters: [{ type: 'limited_time_offer', expirationTimeMs: 1708804800000 }] },
        { type: 'body', parameters: [{ type: 'text', text: 'Ana', parameterName: 'first_name' }] },
        {
          type: 'button',
          subType: 'copy_code',
          index: 0,
          parameters: [{ type: 'coupon_code', couponCode: 'CARIBE25' }],
        },
        { type: 'button', subType: 'url', index: 1, parameters: [{ type: 'text', text: 'n3mtql' }] },
        {
          type: 'button',
          subType: 'mpm',
          index: 2,
          parameters: [
            {
              type: 'action',
              action: {
                thumbnailProductRetailerId: 'sku-1',
                sections: [{ title: 'Popular', productRetailerIds: ['sku-1', 'sku-2'] }],
              },
            },
          ],
        },
        {
          type: 'carousel',
          cards: [
            {
              cardIndex: 0,
              components: [
                { type: 'header', parameters: [{ type: 'video', link: 'https://cdn.example.com/v.mp4' }] },
                {
                  type: 'button',
                  subType: 'quick_reply',
                  index: 0,
                  parameters: [{ type: 'payload', payload: 'more' }],
                },
              ],
            },
            {
              cardIndex: 1,
              components: [
                { type: 'header', parameters: [{ type: 'document', link: 'https://cdn.example.com/d.pdf' }] },
              ],
            },
          ],
        },
      ],
    });
    const body = fake.requests[0]?.body as { template: { components: unknown[] } };
    expect(body.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/a.jpg' } }] },
      {
        type: 'limited_time_offer',
        parameters: [{ type: 'limited_time_offer', limited_time_offer: { expiration_time_ms: 1708804800000 } }],
      },
      { type: 'body', parameters: [{ type: 'text', text: 'Ana', parameter_name: 'first_name' }] },
      {
        type: 'button',
        sub_type: 'copy_code',
        index: '0',
        parameters: [{ type: 'coupon_code', coupon_code: 'CARIBE25' }],
      },
      { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'n3mtql' }] },
      {
        type: 'button',
        sub_type: 'mpm',
        index: '2',
        parameters: [
          {
            type: 'action',
            action: {
              thumbnail_product_retailer_id: 'sku-1',
              sections: [
                {
                  title: 'Popular',
                  product_items: [{ product_retailer_id: 'sku-1' }, { product_retailer_id: 'sku-2' }],
                },
              ],
            },
          },
        ],
      },
      {
        type: 'carousel',
        cards: [
          {
            card_index: 0,
            components: [
              { type: 'header', parameters: [{ type: 'video', video: { link: 'https://cdn.example.com/v.mp4' } }] },
              {
                type: 'button',
                sub_type: 'quick_reply',
                index: '0',
                parameters: [{ type: 'payload', payload: 'more' }],
              },
            ],
          },
          {
            card_index: 1,
            components: [
              {
                type: 'header',
                parameters: [{ type: 'document', document: { link: 'https://cdn.example.com/d.pdf' } }],
              },
            ],
          },
        ],
      },
    ]);
  });

  it('omits components when the template has no parameters', async () => {
    await platform.sendTemplate({ ...simpleMessage, components: [] });
    expect(fake.requests[0]?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15551234567',
      type: 'template',
      template: { name: 'order_update', language: { code: 'en_US' } },
    });
  });

  it('fails a send to a number that is not on the network, not retryable', async () => {
    fake.failNextSendTo('+15551234567', {
      code: 131026,
      message: 'Message undeliverable',
      details: 'Message Undeliverable.',
    });
    expect(await platform.sendTemplate(simpleMessage)).toEqual({
      ok: false,
      reason: 'not_on_network',
      retryable: false,
      code: 131026,
      message: 'Message undeliverable: Message Undeliverable.',
    });
    // only the scripted phone fails: the next send is accepted
    expect((await platform.sendTemplate(simpleMessage)).ok).toBe(true);
  });

  it('classifies by error code, not HTTP status: 130429 arrives with HTTP 400', async () => {
    fake.failNextSendTo('15551234567', { code: 130429, message: '(#130429) Rate limit hit', httpStatus: 400 });
    expect(await platform.sendTemplate(simpleMessage)).toMatchObject({
      ok: false,
      reason: 'rate_limited',
      retryable: true,
      code: 130429,
    });
  });

  it('treats a 5xx without an envelope as a retryable platform error', async () => {
    fake.script(isSend, { status: 502, rawBody: '<html>Bad Gateway</html>' });
    expect(await platform.sendTemplate(simpleMessage)).toEqual({
      ok: false,
      reason: 'platform_error',
      retryable: true,
      message: 'platform answered HTTP 502',
    });
  });

  it('treats an unknown code on a 4xx as a non-retryable platform error', async () => {
    fake.failNextSendTo('15551234567', { code: 131000, message: 'Something went wrong' });
    expect(await platform.sendTemplate(simpleMessage)).toMatchObject({
      reason: 'platform_error',
      retryable: false,
      code: 131000,
    });
  });

  it('maps template states and payment errors', async () => {
    fake.failNextSendTo('15551234567', { code: 132015, message: 'Template is paused' });
    fake.failNextSendTo('15551234567', { code: 132016, message: 'Template is disabled' });
    fake.failNextSendTo('15551234567', { code: 131042, message: 'Business eligibility payment issue' });
    fake.failNextSendTo('15551234567', { code: 132000, message: 'Number of parameters does not match' });
    const reasons = [];
    for (let i = 0; i < 4; i += 1) {
      const result = await platform.sendTemplate(simpleMessage);
      reasons.push(result.ok ? 'ok' : result.reason);
    }
    expect(reasons).toEqual(['template_paused', 'template_disabled', 'payment_required', 'invalid_parameter']);
  });

  it('reports a hung request as an uncertain outcome: never retried, never counted as failed', async () => {
    const impatient = createCloudPlatform({ baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 100 });
    fake.hangNext(isSend);
    const result = await impatient.sendTemplate(simpleMessage);
    expect(result).toMatchObject({ ok: false, reason: 'platform_error', retryable: false, uncertain: true });
    if (!result.ok) expect(result.message).toMatch(/timed out after 100 ms/);
  });

  it('treats a refused connection as retryable: nothing reached the platform', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const failing = createCloudPlatform({
      baseUrl: fake.baseUrl,
      token: 't',
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: refused })),
    });
    expect(await failing.sendTemplate(simpleMessage)).toEqual({
      ok: false,
      reason: 'platform_error',
      retryable: true,
      message: 'fetch failed: connect ECONNREFUSED 127.0.0.1:1',
    });
  });

  it('treats a connection lost mid-request as uncertain', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const failing = createCloudPlatform({
      baseUrl: fake.baseUrl,
      token: 't',
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: reset })),
    });
    expect(await failing.sendTemplate(simpleMessage)).toMatchObject({ ok: false, retryable: false, uncertain: true });
  });

  it('sends our callback reference as biz_opaque_callback_data', async () => {
    await platform.sendTemplate({ ...simpleMessage, callbackData: 'org_1|bc_1|7' });
    expect(fake.requests.at(-1)?.body).toMatchObject({ biz_opaque_callback_data: 'org_1|bc_1|7' });
  });

  it('does not retry a 2xx that carries no message id (it may have been sent)', async () => {
    fake.script(isSend, { status: 200, body: { messaging_product: 'whatsapp' } });
    expect(await platform.sendTemplate(simpleMessage)).toMatchObject({ ok: false, retryable: false });
  });

  it('sends the configured token; a wrong token is refused by the platform', async () => {
    const wrong = createCloudPlatform({ baseUrl: fake.baseUrl, token: 'stale' });
    expect(await wrong.sendTemplate(simpleMessage)).toMatchObject({ ok: false, code: 190, retryable: false });
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer stale');
  });

  it('tolerates a trailing slash on the base url', async () => {
    const slashed = createCloudPlatform({ baseUrl: `${fake.baseUrl}/`, token: fake.token });
    expect((await slashed.sendTemplate(simpleMessage)).ok).toBe(true);
    expect(fake.requests[0]?.path).toBe('/106540352242922/messages');
  });
});

// decisions §16, the platform's own pacing, against the fake Graph API server with the Cloud API's documented
// payloads: the per-user marketing cap (131049, reported in a `failed` status webhook) waits a long backoff instead
// of failing; a template paused by the platform (132015 on the send, or a status webhook) pauses its broadcasts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebhookPayload } from '../../../src/messaging/cloud/webhook-builder.ts';
import { type FakeCloudApi, isSend, startFakeCloudApi } from '../../fakes/fake-cloud-api.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones } from '../../helpers/sends.ts';

let h: Harness;
let fake: FakeCloudApi;
beforeAll(async () => {
  fake = await startFakeCloudApi();
  h = await startHarness({ unlimited: true, platform: 'cloud', cloud: { baseUrl: fake.baseUrl, token: fake.token } });
});
afterAll(async () => {
  await h.close();
  await fake.close();
});

let sequence = 0;
/** An organization on the Cloud API with a template of `components`, approved by the platform's status webhook. */
async function cloudTemplate(category: string, components: unknown[]) {
  sequence += 1;
  const waba = `30229012934${String(1000 + sequence)}`;
  const phoneNumberId = `30654035224${String(1000 + sequence)}`;
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, {
    business_account_id: waba,
    balance: 100,
    numbers: [{ phone: '+15550100001', phone_number_id: phoneNumberId }],
  });
  const created = await h.api('POST', '/v1/templates', {
    key,
    body: { name: `promo_${sequence}`, language: 'en_US', category, components },
  });
  expect(created.status).toBe(201);
  const template = created.body as { id: string; platform_template_id: string; name: string };
  const status = (event: string) =>
    h.webhook(
      buildWebhookPayload([
        {
          kind: 'template_status',
          businessAccountId: waba,
          platformTemplateId: template.platform_template_id,
          templateName: template.name,
          language: 'en_US',
          event,
        },
      ]),
    );
  expect((await status('APPROVED')).status).toBe(200);
  return { key, account, waba, phoneNumberId, template, status };
}

/** A MARKETING template with one body variable on the Cloud API, and an audience of `count` contacts, added. */
async function campaign(count: number) {
  const { key, account, waba, phoneNumberId, template, status } = await cloudTemplate('MARKETING', [
    { type: 'BODY', text: 'Sale: {{1}}', example: { body_text: [['20%']] } },
  ]);
  const list = phones(count);
  for (const phone of list) expect((await h.api('POST', '/v1/contacts', { key, body: { phone } })).status).toBe(201);
  const accepted = await h.api('POST', '/v1/broadcasts', {
    key,
    body: { template_id: template.id, audience: {}, variables: { 'body.1': '20%' } },
  });
  expect(accepted.status).toBe(202);
  await h.audiences.drain();
  return { key, account, waba, phoneNumberId, template, status, list, id: accepted.body.id as string };
}

const read = async (key: string, id: string) => (await h.api('GET', `/v1/broadcasts/${id}`, { key })).body;

describe('the platform’s pacing', () => {
  it('waits out the per-user marketing cap (131049 in a failed status webhook): queued again, refunded, not failed', async () => {
    const { key, account, waba, phoneNumberId, list, id } = await campaign(2);
    await h.fanout.drain();
    expect(await read(key, id)).toMatchObject({ sent: 2, failed: 0 });
    const capped = fake.accepted.find((message) => message.to === (list[0] as string).slice(1));
    const report = buildWebhookPayload([
      {
        kind: 'message_status',
        businessAccountId: waba,
        phoneNumberId,
        platformMessageId: capped?.id as string,
        status: 'failed',
        recipient: list[0] as string,
        timestamp: new Date(),
        error: {
          code: 131049,
          title: 'This message was not delivered to maintain healthy ecosystem engagement.',
          message: 'In order to maintain a healthy ecosystem engagement, the message failed to be delivered.',
          reason: 'platform_error',
        },
      },
    ]);
    expect((await h.webhook(report)).status).toBe(200);
    const after = await read(key, id);
    expect(after).toMatchObject({ status: 'in_progress', sent: 1, failed: 0, pending: 1 });
    expect(after.sent + after.failed + after.pending).toBe(after.requested);
    // Refunded: one message paid of two sent.
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(99);
    const row = await h.database.db
      .selectFrom('broadcast_recipients')
      .select(['status', 'error_code', 'next_attempt_at'])
      .where('broadcast_id', '=', id)
      .where('phone', '=', list[0] as string)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'queued', error_code: 131049 });
    expect(row.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 11 * 3_600_000);
    // Not due before its backoff: the fan-out leaves it alone.
    const sends = fake.requests.filter(isSend).length;
    await h.fanout.drain();
    expect(fake.requests.filter(isSend)).toHaveLength(sends);
  });

  it('pauses the broadcast when the platform refuses a paused template (132015); the recipient waits, uncharged', async () => {
    const { key, account, list, id } = await campaign(3);
    fake.failNextSendTo(list[0] as string, {
      code: 132015,
      message: '(#132015) Template is paused',
      details: 'Template is paused due to low quality so it cannot be sent in a template message.',
      httpStatus: 400,
    });
    await h.fanout.drain();
    const paused = await read(key, id);
    expect(paused).toMatchObject({ status: 'paused', status_reason: 'template_not_sendable', failed: 0 });
    expect(paused.sent + paused.failed + paused.pending).toBe(paused.requested);
    expect(paused.pending).toBeGreaterThanOrEqual(1);
    const balance = (await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance;
    expect(balance).toBe(100 - paused.sent);
    // Nothing more is handed off while paused.
    const sends = fake.requests.filter(isSend).length;
    await h.fanout.drain();
    expect(fake.requests.filter(isSend)).toHaveLength(sends);
  });

  it('pauses broadcasts with pending recipients when a status webhook takes the template out of APPROVED', async () => {
    const { key, id, status } = await campaign(2);
    expect((await status('PAUSED')).status).toBe(200);
    expect(await read(key, id)).toMatchObject({ status: 'paused', status_reason: 'template_not_sendable', sent: 0 });
    await h.fanout.drain();
    expect((await read(key, id)).sent).toBe(0);
    const refused = await h.api('POST', `/v1/broadcasts/${id}/resume`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('template_not_sendable');
    expect((await status('REINSTATED')).status).toBe(200);
    expect((await h.api('POST', `/v1/broadcasts/${id}/resume`, { key })).body).toMatchObject({
      status: 'in_progress',
      status_reason: null,
    });
    await h.fanout.drain();
    expect(await read(key, id)).toMatchObject({ status: 'completed', sent: 2 });
  });
});

describe('an audience’s per-contact values on the wire (D219)', () => {
  it('sends each contact its own values (quotes, backslashes, `$&`, accents kept), and a retry sends them again', async () => {
    const { key, template } = await cloudTemplate('UTILITY', [
      {
        type: 'BODY',
        text: 'Hi {{first_name}} in {{city}}: {{offer}}',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Ana' },
            { param_name: 'city', example: 'Lima' },
            { param_name: 'offer', example: '20%' },
          ],
        },
      },
    ]);
    const [first, second] = phones(2) as [string, string];
    const tricky = 'Ana "la" \\ $& $1 ü 🎉';
    for (const contact of [
      { phone: first, first_name: tricky, city: 'León' },
      { phone: second, first_name: 'Bo', city: 'Lima' },
    ])
      expect((await h.api('POST', '/v1/contacts', { key, body: contact })).status).toBe(201);
    const accepted = await h.api('POST', '/v1/broadcasts', {
      key,
      body: { template_id: template.id, audience: {}, variables: { 'body.offer': '20% "off"' } },
    });
    expect(accepted.status).toBe(202);
    await h.audiences.drain();
    fake.failNextSendTo(second, { code: 131008, message: 'Required parameter is missing', httpStatus: 400 });
    await h.fanout.drain();
    expect(await read(key, accepted.body.id)).toMatchObject({ status: 'completed', sent: 1, failed: 1 });

    /** The named parameters of each template send to `phone`, in order. */
    const sentTo = (phone: string) =>
      fake.requests
        .filter(isSend)
        .map((request) => request.body as { to: string; template: { components: { parameters: unknown[] }[] } })
        .filter((body) => body.to === phone.slice(1))
        .map((body) => body.template.components.flatMap((component) => component.parameters));
    const named = (first_name: string, city: string) => [
      { type: 'text', text: first_name, parameter_name: 'first_name' },
      { type: 'text', text: city, parameter_name: 'city' },
      { type: 'text', text: '20% "off"', parameter_name: 'offer' },
    ];
    expect(sentTo(first)).toEqual([named(tricky, 'León')]);
    expect(sentTo(second)).toEqual([named('Bo', 'Lima')]);

    // decisions §13 on an audience broadcast: the retry sends the failed recipient the same components.
    const retried = await h.api('POST', `/v1/broadcasts/${accepted.body.id}/retry`, { key, body: {} });
    expect(retried.status).toBe(202);
    await h.fanout.drain();
    expect(await read(key, retried.body.id)).toMatchObject({ sent: 1, failed: 0 });
    expect(sentTo(second)).toEqual([named('Bo', 'Lima'), named('Bo', 'Lima')]);
  });
});

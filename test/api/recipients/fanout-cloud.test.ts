// The fan-out over the Cloud API adapter against the fake Graph API server (real HTTP): the send's wire shape,
// retryable refusals, and hand-offs whose answer was lost (never sent twice; settled by webhook or reconciled).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildWebhookPayload } from '../../../src/messaging/cloud/webhook-builder.ts';
import { type FakeCloudApi, isSend, startFakeCloudApi } from '../../fakes/fake-cloud-api.ts';
import { type Harness, startHarness, WEBHOOK_APP_SECRET } from '../../helpers/harness.ts';
import { phones, recipientsFor } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
let fake: FakeCloudApi;
let webhookUrl: string;
beforeAll(async () => {
  fake = await startFakeCloudApi();
  h = await startHarness({
    unlimited: true,
    platform: 'cloud',
    cloud: { baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 300 },
    fanout: { backoffBaseMs: 5, backoffMaxMs: 20, maxAttempts: 3 },
  });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  webhookUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/webhooks/messaging`;
});
afterAll(async () => {
  await h.close();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.accepted.length = 0;
});

let sequence = 0;
async function cloudSender(balance = 100) {
  sequence += 1;
  const waba = `20229012934${String(1000 + sequence)}`;
  const phoneNumberId = `20654035224${String(1000 + sequence)}`;
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, {
    business_account_id: waba,
    balance,
    numbers: [{ phone: '+15550100001', phone_number_id: phoneNumberId }],
  });
  const created = await h.api('POST', '/v1/templates', {
    key,
    body: {
      name: `notice_${sequence}`,
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Your code is {{1}}', example: { body_text: [['123']] } }],
    },
  });
  expect(created.status).toBe(201);
  const approval = buildWebhookPayload([
    {
      kind: 'template_status',
      businessAccountId: waba,
      platformTemplateId: created.body.platform_template_id,
      templateName: created.body.name,
      language: 'en_US',
      event: 'APPROVED',
    },
  ]);
  expect((await h.webhook(approval)).status).toBe(200);
  return { org, key, account, waba, phoneNumberId, templateId: created.body.id as string };
}

const sendTo = (key: string, templateId: string, list: string[]) =>
  h.api('POST', `/v1/templates/${templateId}/send`, {
    key,
    body: { recipients: recipientsFor(list, { 'body.1': '777' }) },
  });

/** Moves the database's clock past the platform's pacing: numbers rest no more, backed-off recipients are due. */
async function restIsOver() {
  await h.database.db.updateTable('channels').set({ slowed_until: null }).execute();
  await h.database.db
    .updateTable('broadcast_recipients')
    .set({ next_attempt_at: new Date(0) })
    .where('status', '=', 'queued')
    .where('next_attempt_at', '<', new Date('9999-01-01'))
    .execute();
}

const recipientsOf = async (key: string, broadcastId: string) =>
  (await h.api('GET', `/v1/broadcasts/${broadcastId}/recipients`, { key })).body.items;

describe('hand-off over the Cloud API', () => {
  it('posts the documented template message with our callback reference', async () => {
    const { org, key, templateId, phoneNumberId } = await cloudSender();
    const [phone] = phones(1);
    const response = await sendTo(key, templateId, [phone as string]);
    await h.fanout.drain();
    const send = fake.requests.find(isSend);
    expect(send?.path).toBe(`/${phoneNumberId}/messages`);
    expect(send?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: (phone as string).slice(1),
      type: 'template',
      template: {
        name: `notice_${sequence}`,
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: '777' }] }],
      },
      biz_opaque_callback_data: `${org.id}|${response.body.id}|0`,
    });
    expect((await recipientsOf(key, response.body.id))[0]).toMatchObject({
      status: 'sent',
      platform_message_id: fake.accepted[0]?.id,
    });
  });

  // decisions §16: the platform's pacing slows the number down and is no attempt (audience-pacing.test.ts has more).
  it('rests the number after a throughput refusal (130429 with HTTP 400), then hands the message off once', async () => {
    const { key, account, templateId } = await cloudSender();
    const [phone] = phones(1);
    fake.failNextSendTo(phone as string, { code: 130429, message: 'Rate limit hit', httpStatus: 400 });
    const response = await sendTo(key, templateId, [phone as string]);
    await h.fanout.drain();
    expect(fake.requests.filter(isSend)).toHaveLength(1);
    await restIsOver();
    await h.fanout.drain();
    expect(fake.requests.filter(isSend)).toHaveLength(2);
    expect(fake.accepted).toHaveLength(1);
    expect((await recipientsOf(key, response.body.id))[0].status).toBe('sent');
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(99);
  });

  it('does not burn attempts on pair-rate refusals (131056): more tries than maxAttempts, then sent', async () => {
    const { key, account, templateId } = await cloudSender();
    const [phone] = phones(1);
    for (let i = 0; i < 3; i++)
      fake.failNextSendTo(phone as string, { code: 131056, message: 'Pair rate limit', httpStatus: 400 });
    const response = await sendTo(key, templateId, [phone as string]);
    for (let i = 0; i < 4; i++) {
      await h.fanout.drain();
      await restIsOver();
    }
    expect(fake.requests.filter(isSend)).toHaveLength(4);
    const [recipient] = await recipientsOf(key, response.body.id);
    expect(recipient).toMatchObject({ status: 'sent' });
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(99);
  });

  it('never sends again when the answer was lost; the platform’s status webhook settles it', async () => {
    const { key, waba, templateId } = await cloudSender();
    fake.deliverStatusesTo({ url: webhookUrl, appSecret: WEBHOOK_APP_SECRET, businessAccountId: waba, delayMs: 400 });
    try {
      const [phone] = phones(1);
      fake.script(isSend, { status: 0, acceptThenHang: true });
      const response = await sendTo(key, templateId, [phone as string]);
      await h.fanout.drain(); // times out after 300 ms: outcome unknown
      expect((await recipientsOf(key, response.body.id))[0].status).toBe('sending');
      await h.fanout.drain();
      expect(fake.requests.filter(isSend)).toHaveLength(1);
      await waitUntil(async () => (await recipientsOf(key, response.body.id))[0].status !== 'sending', {
        message: 'the late acceptance recorded',
      });
      const [recipient] = await recipientsOf(key, response.body.id);
      expect(recipient).toMatchObject({ status: 'sent', platform_message_id: fake.accepted[0]?.id });
      expect((await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body.status).toBe('completed');
    } finally {
      fake.deliverStatusesTo({ url: 'http://127.0.0.1:1/', appSecret: 'x', businessAccountId: '0', delayMs: 0 });
    }
  });

  it('fails and refunds a lost hand-off that no webhook settles within the reconciliation window', async () => {
    const { key, account, templateId } = await cloudSender();
    const reconciling = await startHarness({
      database: h.database,
      unlimited: true,
      platform: 'cloud',
      cloud: { baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 200 },
      fanout: { reconcileAfterMs: 0 },
    });
    try {
      fake.hangNext(isSend);
      const response = await sendTo(key, templateId, phones(1));
      await reconciling.fanout.drain();
      expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(99);
      expect(await reconciling.fanout.reconcile()).toBe(1);
      const [recipient] = await recipientsOf(key, response.body.id);
      expect(recipient).toMatchObject({ status: 'failed', error: expect.stringContaining('handoff_unconfirmed') });
      expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(100);
      await reconciling.fanout.drain();
      expect(fake.requests.filter(isSend)).toHaveLength(1);
    } finally {
      await reconciling.app.close();
    }
  });
});

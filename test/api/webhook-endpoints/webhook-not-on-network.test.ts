// contract (messaging_status): a not-on-the-chat-network answer makes the contact `unavailable`. On the Cloud API
// that answer often comes after the send was accepted, as a `failed` status webhook with error 131026.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebhookPayload } from '../../../src/messaging/cloud/webhook-builder.ts';
import { type FakeCloudApi, startFakeCloudApi } from '../../fakes/fake-cloud-api.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor } from '../../helpers/sends.ts';

let h: Harness;
let fake: FakeCloudApi;
beforeAll(async () => {
  fake = await startFakeCloudApi();
  h = await startHarness({
    unlimited: true,
    platform: 'cloud',
    cloud: { baseUrl: fake.baseUrl, token: fake.token, timeoutMs: 1000 },
  });
});
afterAll(async () => {
  await h.close();
  await fake.close();
});

/** A status webhook exactly as the Cloud API sends it (string timestamp, errors with error_data). */
function failedStatus(waba: string, phoneNumberId: string, messageId: string, phone: string, code: number) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550100001', phone_number_id: phoneNumberId },
              statuses: [
                {
                  id: messageId,
                  status: 'failed',
                  timestamp: String(Math.floor(Date.now() / 1000) + 5),
                  recipient_id: phone.slice(1),
                  errors: [
                    {
                      code,
                      title: 'Message undeliverable',
                      message: 'Message undeliverable',
                      error_data: { details: 'Message Undeliverable.' },
                    },
                  ],
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

let sequence = 0;
async function acceptedSend() {
  sequence += 1;
  const waba = `30339012934${String(1000 + sequence)}`;
  const phoneNumberId = `30754035224${String(1000 + sequence)}`;
  const { org, key } = await h.createOrg();
  await h.createAccount(org.id, {
    business_account_id: waba,
    balance: 100,
    numbers: [{ phone: '+15550100001', phone_number_id: phoneNumberId }],
  });
  const template = await h.api('POST', '/v1/templates', {
    key,
    body: {
      name: `notice_${sequence}`,
      language: 'en_US',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Your code is {{1}}', example: { body_text: [['123']] } }],
    },
  });
  const approval = buildWebhookPayload([
    {
      kind: 'template_status',
      businessAccountId: waba,
      platformTemplateId: template.body.platform_template_id,
      templateName: template.body.name,
      language: 'en_US',
      event: 'APPROVED',
    },
  ]);
  expect((await h.webhook(approval)).status).toBe(200);
  const [phone] = phones(1) as [string];
  const sent = await h.api('POST', `/v1/templates/${template.body.id}/send`, {
    key,
    body: { recipients: recipientsFor([phone], { 'body.1': '777' }) },
  });
  expect(sent.status).toBe(202);
  await h.fanout.drain();
  const [recipient] = (await h.api('GET', `/v1/broadcasts/${sent.body.id}/recipients`, { key })).body.items;
  expect(recipient.status).toBe('sent');
  const contact = async () => (await h.api('GET', `/v1/contacts/${recipient.contact_id}`, { key })).body;
  return { key, waba, phoneNumberId, phone, recipient, contact, broadcastId: sent.body.id as string };
}

describe('a failed status webhook after an accepted send', () => {
  it('error 131026 makes the contact unavailable and fails the recipient', async () => {
    const send = await acceptedSend();
    const payload = failedStatus(send.waba, send.phoneNumberId, send.recipient.platform_message_id, send.phone, 131026);
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await send.contact()).messaging_status).toBe('unavailable');
    const [recipient] = (await h.api('GET', `/v1/broadcasts/${send.broadcastId}/recipients`, { key: send.key })).body
      .items;
    expect(recipient.status).toBe('failed');
  });

  it('another failure code leaves the contact as the accepted send made it', async () => {
    const send = await acceptedSend();
    const before = (await send.contact()).messaging_status;
    const payload = failedStatus(send.waba, send.phoneNumberId, send.recipient.platform_message_id, send.phone, 131000);
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await send.contact()).messaging_status).toBe(before);
  });
});

// Conversations: inbound messages (delivered by the sandbox as signed webhooks) create contacts and conversations;
// message statuses move forward only; the history is read through GET /v1/conversations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { inbound } from '../../helpers/messages.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

async function setup() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, { numbers: [{ phone: '+15550100001' }, { phone: '+15550100002' }] });
  return { org, key, account, channels: account.numbers.map((n: { id: string }) => n.id) as string[] };
}

const contactsOf = (orgId: string, phone: string) =>
  h.database.db.selectFrom('contacts').selectAll().where('org_id', '=', orgId).where('phone', '=', phone).execute();

describe('inbound messages', () => {
  it('create a contact and a conversation, and list as sender "contact"', async () => {
    const { org, key, channels } = await setup();
    const delivered = await inbound(h, channels[0]!, '+15557654321', 'Hello there');
    expect(delivered.status).toBe(200);
    expect(delivered.body.webhook.entry[0].changes[0].value.messages[0]).toMatchObject({
      from: '15557654321',
      type: 'text',
      text: { body: 'Hello there' },
    });
    const [contact] = await contactsOf(org.id, '+15557654321');
    expect(contact).toMatchObject({ origin: 'OTHER', messaging_status: 'unverified', deleted_at: null });

    const list = await h.api('GET', '/v1/conversations', { key });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const conversation = list.body.items[0];
    expect(conversation).toMatchObject({ contact_id: contact!.id, channel_id: channels[0] });
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body).toEqual(conversation);

    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    expect(messages.status).toBe(200);
    expect(messages.body.items).toEqual([
      expect.objectContaining({
        sender: 'contact',
        direction: 'inbound',
        type: 'text',
        text: 'Hello there',
        phone: '+15557654321',
        status: 'received',
        platform_message_id: delivered.body.platform_message_id,
        conversation_id: conversation.id,
      }),
    ]);
  });

  it('in the platform’s documented shape name the new contact after the sender’s profile', async () => {
    const { org, key, account } = await setup();
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: account.business_account_id,
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550100001', phone_number_id: account.numbers[0].phone_number_id },
                contacts: [{ profile: { name: 'Kerry Fisher' }, wa_id: '16315551181' }],
                messages: [
                  {
                    from: '16315551181',
                    id: 'wamid.ABGGFlA5Fpa',
                    timestamp: '1504902988',
                    text: { body: 'this is a text message' },
                    type: 'text',
                  },
                  {
                    from: '16315551181',
                    id: 'wamid.ABGGFlA5Fpb',
                    timestamp: '1504902990',
                    type: 'button',
                    button: { text: 'Stop promotions', payload: 'STOP' },
                  },
                ],
              },
              field: 'messages',
            },
          ],
        },
      ],
    };
    expect((await h.webhook(payload)).status).toBe(200);
    const [contact] = await contactsOf(org.id, '+16315551181');
    expect(contact).toMatchObject({ first_name: 'Kerry Fisher', origin: 'OTHER', messaging_status: 'unverified' });
    const conversation = (await h.api('GET', `/v1/conversations?contact_id=${contact!.id}`, { key })).body.items[0];
    expect(conversation.last_message_at).toBe('2017-09-08T20:36:30.000Z');
    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    expect(messages.body.items.map((m: { type: string; text: string }) => [m.type, m.text])).toEqual([
      ['button', 'Stop promotions'],
      ['text', 'this is a text message'],
    ]);
  });

  it('keep one conversation per contact and number, newest activity first, filtered and paged', async () => {
    const { org, key, channels } = await setup();
    await inbound(h, channels[0]!, '+15551110001', 'one');
    await inbound(h, channels[0]!, '+15551110002', 'two');
    await inbound(h, channels[1]!, '+15551110001', 'three');
    await inbound(h, channels[0]!, '+15551110001', 'four');
    expect(await contactsOf(org.id, '+15551110001')).toHaveLength(1);

    const all = await h.api('GET', '/v1/conversations', { key });
    expect(all.body.items).toHaveLength(3);
    const [contact] = await contactsOf(org.id, '+15551110001');
    const mine = await h.api('GET', `/v1/conversations?contact_id=${contact!.id}`, { key });
    expect(mine.body.items).toHaveLength(2);
    const onSecond = await h.api('GET', `/v1/conversations?channel_id=${channels[1]}`, { key });
    expect(onSecond.body.items).toHaveLength(1);

    const first = await h.api('GET', '/v1/conversations?limit=2', { key });
    expect(first.body.items).toHaveLength(2);
    const second = await h.api('GET', `/v1/conversations?limit=2&cursor=${first.body.next_cursor}`, { key });
    expect(second.body.items).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    const ids = [...first.body.items, ...second.body.items].map((c: { id: string }) => c.id);
    expect(new Set(ids).size).toBe(3);

    const conversation = mine.body.items.find((c: { channel_id: string }) => c.channel_id === channels[0]);
    const page1 = await h.api('GET', `/v1/conversations/${conversation.id}/messages?limit=1`, { key });
    expect(page1.body.items.map((m: { text: string }) => m.text)).toEqual(['four']);
    const page2 = await h.api(
      'GET',
      `/v1/conversations/${conversation.id}/messages?limit=1&cursor=${page1.body.next_cursor}`,
      {
        key,
      },
    );
    expect(page2.body.items.map((m: { text: string }) => m.text)).toEqual(['one']);
    expect(page2.body.next_cursor).toBeNull();
  });

  it('from one new phone at once create one contact and one conversation', async () => {
    const { org, key, channels } = await setup();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, index) => inbound(h, channels[0]!, '+15552220000', `burst ${index}`)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(await contactsOf(org.id, '+15552220000')).toHaveLength(1);
    const conversations = await h.api('GET', '/v1/conversations', { key });
    expect(conversations.body.items).toHaveLength(1);
    const messages = await h.api('GET', `/v1/conversations/${conversations.body.items[0].id}/messages`, { key });
    expect(messages.body.items).toHaveLength(6);
  });

  it('stored once when the same webhook is delivered several times at once', async () => {
    const { key, channels } = await setup();
    const delivered = await inbound(h, channels[0]!, '+15553330000', 'only once');
    const payload = delivered.body.webhook;
    const answers = await Promise.all(Array.from({ length: 4 }, () => h.webhook(payload)));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    expect(messages.body.items).toHaveLength(1);
  });

  it('to a removed or unknown number are refused by the sandbox control', async () => {
    const { account, channels } = await setup();
    await h.admin('DELETE', `/messaging-accounts/${account.id}/numbers/${channels[1]}`);
    expect((await inbound(h, channels[1]!, '+15554440000', 'hi')).status).toBe(404);
    expect((await inbound(h, 'ch_unknown', '+15554440000', 'hi')).status).toBe(404);
    expect(
      (await h.admin('POST', '/sandbox/inbound', { channel_id: channels[0], from: '555', text: 'x' })).status,
    ).toBe(422);
  });

  it('are invisible to other organizations', async () => {
    const { key, channels } = await setup();
    await inbound(h, channels[0]!, '+15555550000', 'private');
    const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
    const { key: other } = await h.createOrg();
    expect((await h.api('GET', '/v1/conversations', { key: other })).body.items).toEqual([]);
    for (const path of [`/v1/conversations/${conversation.id}`, `/v1/conversations/${conversation.id}/messages`]) {
      const response = await h.api('GET', path, { key: other });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: 'not_found' });
    }
  });
});

describe('message statuses', () => {
  // Outbound messages are written by the broadcast worker (a later issue); until then this test writes the row the
  // worker would write after the platform accepted the message.
  async function outbound(orgId: string, channelId: string, phone: string) {
    await inbound(h, channelId, phone, 'hi');
    const conversation = await h.database.db
      .selectFrom('conversations')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('channel_id', '=', channelId)
      .executeTakeFirstOrThrow();
    const platformMessageId = `wamid.TEST${newId('x').slice(2)}`;
    const now = new Date();
    await h.database.db
      .insertInto('messages')
      .values({
        org_id: orgId,
        id: newId('msg'),
        conversation_id: conversation.id,
        contact_id: conversation.contact_id,
        channel_id: channelId,
        direction: 'outbound',
        sender: 'system',
        type: 'template',
        phone,
        platform_message_id: platformMessageId,
        status: 'sent',
        created_at: now,
        sent_at: now,
        updated_at: now,
      })
      .execute();
    return { conversationId: conversation.id, contactId: conversation.contact_id, platformMessageId };
  }

  const messageOf = async (key: string, conversationId: string, platformMessageId: string) => {
    const messages = await h.api('GET', `/v1/conversations/${conversationId}/messages`, { key });
    return messages.body.items.find(
      (m: { platform_message_id: string }) => m.platform_message_id === platformMessageId,
    );
  };

  it('move forward only, whatever order the reports arrive in', async () => {
    const { org, key, channels } = await setup();
    const sent = await outbound(org.id, channels[0]!, '+15556660001');
    const report = (status: string) =>
      h.admin('POST', `/sandbox/messages/${sent.platformMessageId}/status`, { status });
    expect((await report('read')).status).toBe(200);
    let message = await messageOf(key, sent.conversationId, sent.platformMessageId);
    expect(message).toMatchObject({ status: 'read', sender: 'system' });
    expect(message.read_at).not.toBeNull();
    expect((await report('delivered')).status).toBe(200);
    expect((await report('failed')).status).toBe(200);
    message = await messageOf(key, sent.conversationId, sent.platformMessageId);
    expect(message.status).toBe('read');
    expect(message.delivered_at).not.toBeNull();
    expect(message.error).toBeNull();
  });

  it('record a platform failure as the stable platform_error, its words in error_message (D134)', async () => {
    const { org, key, channels } = await setup();
    const sent = await outbound(org.id, channels[0]!, '+15556660500');
    const before = await messageOf(key, sent.conversationId, sent.platformMessageId);
    expect(before).toMatchObject({ error: null, error_message: null });
    const failed = await h.admin('POST', `/sandbox/messages/${sent.platformMessageId}/status`, {
      status: 'failed',
      error: 'Recipient phone number not in allowed list',
    });
    expect(failed.status).toBe(200);
    const message = await messageOf(key, sent.conversationId, sent.platformMessageId);
    expect(message).toMatchObject({
      status: 'failed',
      error: 'platform_error',
      error_message: 'Recipient phone number not in allowed list',
    });
  });

  it('record a failure, and not-on-the-network makes the contact unavailable', async () => {
    const { org, key, channels } = await setup();
    const sent = await outbound(org.id, channels[0]!, '+15556660404');
    const failed = await h.admin('POST', `/sandbox/messages/${sent.platformMessageId}/status`, {
      status: 'failed',
      error: 'not_on_network',
    });
    expect(failed.body.webhook.entry[0].changes[0].value.statuses[0].errors[0].code).toBe(131026);
    const message = await messageOf(key, sent.conversationId, sent.platformMessageId);
    expect(message).toMatchObject({ status: 'failed', error: 'not_on_network', error_message: expect.any(String) });
    const contact = await h.database.db
      .selectFrom('contacts')
      .select('messaging_status')
      .where('org_id', '=', org.id)
      .where('id', '=', sent.contactId)
      .executeTakeFirstOrThrow();
    expect(contact.messaging_status).toBe('unavailable');
    // A later delivery report does not revive a failed message.
    await h.admin('POST', `/sandbox/messages/${sent.platformMessageId}/status`, { status: 'delivered' });
    expect((await messageOf(key, sent.conversationId, sent.platformMessageId)).status).toBe('failed');
  });

  it('about an unknown message is a 404 from the sandbox control', async () => {
    expect((await h.admin('POST', '/sandbox/messages/wamid.nope/status', { status: 'read' })).status).toBe(404);
  });
});

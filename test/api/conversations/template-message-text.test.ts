// A template Message's `text` is the body the contact received (decisions §19, D240): a template reply, a list
// send's and an audience broadcast's messages in their conversations, positional and named placeholders filled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { NAMED_BODY, phones, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

/** The newest message of the conversation with `phone`. */
async function newestMessage(key: string, phone: string) {
  const conversations = await h.api('GET', '/v1/conversations', { key });
  for (const conversation of conversations.body.items) {
    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    if (messages.body.items[0]?.phone === phone) return messages.body.items[0];
  }
  throw new Error(`no conversation with ${phone}`);
}

describe('a template message’s text', () => {
  it('is the body as sent for a template reply, answered and listed', async () => {
    const setup = await sender(h, { balance: 10 });
    const [phone] = phones(1) as [string];
    const channelId = setup.account.numbers[0].id as string;
    expect((await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hi' })).status).toBe(
      200,
    );
    const conversations = await h.api('GET', '/v1/conversations', { key: setup.key });
    const answered = await h.api('POST', `/v1/conversations/${conversations.body.items[0].id}/messages`, {
      key: setup.key,
      body: { type: 'template', template_id: setup.template.id, variables: { 'body.1': '4417' } },
    });
    expect(answered.status).toBe(202);
    expect(answered.body).toMatchObject({ type: 'template', text: 'Your code is 4417' });
    expect(await newestMessage(setup.key, phone)).toMatchObject({ id: answered.body.id, text: 'Your code is 4417' });
  });

  it('is the body as sent for each recipient of a send, in their conversations', async () => {
    const setup = await sender(h);
    const [first, second] = phones(2) as [string, string];
    const sent = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
      key: setup.key,
      body: {
        recipients: [
          { phone: first, variables: { 'body.1': '111' } },
          { phone: second, variables: { 'body.1': '222' } },
        ],
      },
    });
    expect(sent.status).toBe(202);
    await h.fanout.drain();
    expect(await newestMessage(setup.key, first)).toMatchObject({ type: 'template', text: 'Your code is 111' });
    expect(await newestMessage(setup.key, second)).toMatchObject({ type: 'template', text: 'Your code is 222' });
  });

  it('fills named placeholders from the contact and the broadcast for an audience', async () => {
    const setup = await sender(h, { components: NAMED_BODY });
    const [phone] = phones(1) as [string];
    const made = await h.api('POST', '/v1/contacts', {
      key: setup.key,
      body: { first_name: 'Ana', phone, country: 'MX' },
    });
    expect(made.status).toBe(201);
    const created = await h.api('POST', '/v1/broadcasts', {
      key: setup.key,
      body: { template_id: setup.template.id, audience: { country: ['MX'] }, variables: { 'body.order_id': 'A-7' } },
    });
    expect(created.status).toBe(202);
    for (let step = 0; step < 20 && (await h.audiences.runOnce()) > 0; step++);
    await h.fanout.drain();
    expect(await newestMessage(setup.key, phone)).toMatchObject({
      type: 'template',
      text: 'Hi Ana, your order A-7 ships today',
    });
  });
});

// The sandbox's timers end to end: templates approve themselves and accepted messages report delivered and read,
// each through a signed webhook into the same handler as the real platform's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, sandbox: { autoReviewMs: 30, autoReportsMs: 200 } });
});
afterAll(() => h.close());

/** Reads until `done` holds (the sandbox's timer acted); fails, saying what it last read, after 10 s. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  await waitUntil(
    async () => {
      value = await read();
      return done(value);
    },
    { message: 'the sandbox to act' },
  );
  return value;
}

describe('sandbox timers', () => {
  it('approve a new template by themselves; it reads back with its requirements', async () => {
    const { org, key } = await h.createOrg();
    await h.createAccount(org.id);
    const created = await h.api('POST', '/v1/templates', {
      key,
      body: {
        name: 'auto_approved',
        language: 'en_US',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Hello {{1}}', example: { body_text: [['Ana']] } }],
      },
    });
    expect(created.body.status).toBe('PENDING');
    const read = await eventually(
      () => h.api('GET', `/v1/templates/${created.body.id}`, { key }),
      (response) => response.body.status === 'APPROVED',
    );
    expect(read.body.status).toBe('APPROVED');
    const requirements = await h.api('GET', `/v1/templates/${created.body.id}/send-requirements`, { key });
    expect(requirements.body.variables).toEqual([expect.objectContaining({ token: 'body.1', resolves_from: null })]);
  });

  it('report an accepted message delivered, then read', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const number = account.numbers[0];
    // The sandbox alone, without a send through the API: write what the worker would, a contact's conversation and
    // the outbound message.
    const inbound = await h.admin('POST', '/sandbox/inbound', {
      channel_id: number.id,
      from: '+15557770001',
      text: 'hi',
    });
    expect(inbound.status).toBe(200);
    const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
    const sent = await h.messaging.platform.sendTemplate({
      phoneNumberId: number.phone_number_id,
      to: '+15557770001',
      templateName: 'auto_approved',
      language: 'en_US',
      components: [],
    });
    if (!sent.ok) throw new Error('sandbox refused the send');
    const now = new Date();
    await h.database.db
      .insertInto('messages')
      .values({
        org_id: org.id,
        id: newId('msg'),
        conversation_id: conversation.id,
        contact_id: conversation.contact_id,
        channel_id: number.id,
        direction: 'outbound',
        sender: 'system',
        type: 'template',
        phone: '+15557770001',
        platform_message_id: sent.platformMessageId,
        status: 'sent',
        created_at: now,
        sent_at: now,
        updated_at: now,
      })
      .execute();
    const messages = await eventually(
      () => h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key }),
      (response) => response.body.items.some((m: { status: string }) => m.status === 'read'),
    );
    const message = messages.body.items.find(
      (m: { platform_message_id: string }) => m.platform_message_id === sent.platformMessageId,
    );
    expect(message.status).toBe('read');
    expect(message.delivered_at).not.toBeNull();
    expect(message.read_at).not.toBeNull();
  });
});

describe('POST /webhooks/messaging without a content type', () => {
  it('still reads the raw bytes and checks their signature', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/webhooks/messaging', payload: '{}' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ detail: 'missing_signature' });
  });
});

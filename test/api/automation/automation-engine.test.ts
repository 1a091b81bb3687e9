// decisions §20: what a contact's message runs, through HTTP on the sandbox platform — rules by position with
// `stop` (a new conversation's `conversation.created` rules, then its `message.received` rules, as one evaluation),
// their runs, their `system` messages handed off as §15 replies (skipped for an opted-out contact), opt-out keywords
// running nothing, one `conversation.updated` for all the rules' changes, a webhook delivered twice running once,
// and the away message once per closed period and never where someone owns the conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebhookPayload } from '../../../src/messaging/cloud/webhook-builder.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { messagesOf } from '../../helpers/messages.ts';
import { phones } from '../../helpers/sends.ts';
import { addUser, eventsOf, inbound, inboxOrg } from '../../helpers/team-inbox.ts';

// Monday 2030-01-07 20:00 UTC (the organizations here are in UTC).
const clock = manualClock(Date.parse('2030-01-07T20:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

const rule = (key: string, body: Record<string, unknown>) =>
  h.api('POST', '/v1/automation-rules', { key, body: { name: 'rule', ...body } });

async function conversationOf(key: string, phone: string) {
  const list = await h.api('GET', '/v1/conversations', { key });
  return list.body.items.find((item: { contact: { phone: string } }) => item.contact.phone === phone);
}

/** Hands every queued reply to the platform (the replies' worker step). */
async function handOff() {
  while ((await h.wiring.replies.runOnce()) > 0) {}
}

describe('rules', () => {
  it('run by position; stop ends both events of a new conversation; later messages run message.received', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const first = await rule(key, {
      event: 'conversation.created',
      position: 0,
      actions: [
        { type: 'add_labels', labels: ['new'] },
        { type: 'send_text', text: 'Welcome!' },
      ],
    });
    const stopper = await rule(key, {
      event: 'conversation.created',
      position: 1,
      conditions: [{ field: 'message.text', operator: 'matches', value: '\\burgent\\b' }],
      actions: [{ type: 'set_priority', priority: 'urgent' }],
      stop: true,
    });
    const later = await rule(key, {
      event: 'message.received',
      position: 0,
      actions: [{ type: 'add_labels', labels: ['seen'] }],
    });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'This is URGENT please');
    const conversation = await conversationOf(key, phone);
    expect(conversation).toMatchObject({ labels: ['new'], priority: 'urgent' });
    // One conversation.updated for every change the rules made on this message.
    const updates = await eventsOf(h, orgId, 'conversation.updated');
    expect(updates).toHaveLength(1);
    expect(updates[0].changed.sort()).toEqual(['labels', 'priority']);

    await inbound(h, channelId, phone, 'urgent again');
    expect(await conversationOf(key, phone)).toMatchObject({ labels: ['new', 'seen'], priority: 'urgent' });

    const runsOf = async (id: string) =>
      (await h.api('GET', `/v1/automation-rules/${id}/runs`, { key })).body.items as { actions: unknown[] }[];
    expect(await runsOf(first.body.id)).toHaveLength(1);
    expect((await runsOf(first.body.id))[0]?.actions).toEqual([
      { type: 'add_labels', outcome: 'done' },
      { type: 'send_text', outcome: 'done' },
    ]);
    expect(await runsOf(stopper.body.id)).toHaveLength(1);
    expect(await runsOf(later.body.id)).toHaveLength(1); // the second message only

    await handOff();
    const messages = await messagesOf(h, key, conversation.id, { oldestFirst: true });
    expect(messages.map((message) => [message.sender, message.text])).toEqual([
      ['contact', 'This is URGENT please'],
      ['system', 'Welcome!'],
      ['contact', 'urgent again'],
    ]);
    expect(messages[1]?.status).toBe('sent');
  });

  it('move their system messages forward by the platform’s reports, each a message.updated like other replies', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    await rule(key, { event: 'message.received', actions: [{ type: 'send_text', text: 'We got your message.' }] });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hi');
    await handOff();
    const conversation = await conversationOf(key, phone);
    const sent = (await messagesOf(h, key, conversation.id, { oldestFirst: true })).find(
      (message) => message.sender === 'system',
    ) as unknown as {
      id: string;
    };
    const row = await h.database.db
      .selectFrom('messages')
      .select('platform_message_id')
      .where('org_id', '=', orgId)
      .where('id', '=', sent.id)
      .executeTakeFirstOrThrow();
    const report = await h.admin('POST', `/sandbox/messages/${row.platform_message_id}/status`, {
      status: 'delivered',
    });
    expect(report.status, report.text).toBeLessThan(300);
    const updates = (await eventsOf(h, orgId, 'message.updated')).filter((data) => data.id === sent.id);
    expect(updates.map((data) => data.status)).toContain('delivered');
    expect(
      (await messagesOf(h, key, conversation.id, { oldestFirst: true })).find((message) => message.sender === 'system')
        ?.status,
    ).toBe('delivered');
  });

  it('skip a send_text to an opted-out contact; an opt-out keyword runs nothing', async () => {
    const { key, channelId } = await inboxOrg(h);
    const greeter = await rule(key, { event: 'message.received', actions: [{ type: 'send_text', text: 'Hi!' }] });
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'STOP');
    const runs = () => h.api('GET', `/v1/automation-rules/${greeter.body.id}/runs`, { key });
    expect((await runs()).body.items).toEqual([]);
    await inbound(h, channelId, phone, 'hello?');
    expect((await runs()).body.items[0].actions).toEqual([
      { type: 'send_text', outcome: 'skipped', reason: 'opted_out' },
    ]);
    const conversation = await conversationOf(key, phone);
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((message) => message.sender)).toEqual(
      ['contact', 'contact'],
    );
  });

  it('run once when the platform delivers the same webhook twice', async () => {
    const waba = `3022901293${Math.floor(Math.random() * 1e5)}`;
    const phoneNumberId = `3065403522${Math.floor(Math.random() * 1e5)}`;
    const { org, key } = await h.createOrg();
    await h.createAccount(org.id, {
      business_account_id: waba,
      numbers: [{ phone: '+15550100001', phone_number_id: phoneNumberId }],
    });
    const labeler = await rule(key, { event: 'message.received', actions: [{ type: 'send_text', text: 'Got it' }] });
    const [phone] = phones(1) as [string];
    const payload = buildWebhookPayload([
      {
        kind: 'inbound_message',
        businessAccountId: waba,
        phoneNumberId,
        platformMessageId: `wamid.${phone}`,
        from: phone,
        type: 'text',
        text: 'hello',
        timestamp: clock.now(),
      },
    ]);
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await h.api('GET', `/v1/automation-rules/${labeler.body.id}/runs`, { key })).body.items).toHaveLength(1);
    const conversation = await conversationOf(key, phone);
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((message) => message.sender)).toEqual(
      ['contact', 'system'],
    );
  });
});

describe('the away message', () => {
  it('goes once per closed period, never where a person owns the conversation', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const hours = await h.api('PUT', '/v1/business-hours', {
      key,
      body: {
        enabled: true,
        week: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, open: '09:00', close: '17:00' })),
        away_message: { text: 'We are closed; back at 9.' },
      },
    });
    expect(hours.status).toBe(200);
    const [phone, other] = phones(2) as [string, string];
    clock.set(Date.parse('2030-01-07T20:00:00.000Z')); // Monday evening: closed
    await inbound(h, channelId, phone, 'hello?');
    clock.advance(60_000);
    await inbound(h, channelId, phone, 'anyone?');
    clock.set(Date.parse('2030-01-08T07:00:00.000Z')); // Tuesday 07:00: the same closed night
    await inbound(h, channelId, phone, 'still there?');
    clock.set(Date.parse('2030-01-08T10:00:00.000Z')); // open
    await inbound(h, channelId, phone, 'good morning');
    clock.set(Date.parse('2030-01-08T18:00:00.000Z')); // closed again: a new period
    await inbound(h, channelId, phone, 'one more thing');
    const conversation = await conversationOf(key, phone);
    expect((await messagesOf(h, key, conversation.id, { oldestFirst: true })).map((message) => message.sender)).toEqual(
      ['contact', 'system', 'contact', 'contact', 'contact', 'contact', 'system'],
    );

    // Owned by a person: no away message.
    clock.set(Date.parse('2030-01-09T20:00:00.000Z'));
    const user = await addUser(h, orgId);
    await inbound(h, channelId, other, 'first');
    const owned = await conversationOf(key, other);
    const assigned = await h.api('PATCH', `/v1/conversations/${owned.id}`, {
      key,
      body: { assignee: { type: 'user', id: user } },
    });
    expect(assigned.status).toBe(200);
    clock.set(Date.parse('2030-01-10T20:00:00.000Z'));
    await inbound(h, channelId, other, 'second, next night');
    expect((await messagesOf(h, key, owned.id, { oldestFirst: true })).map((message) => message.sender)).toEqual([
      'contact',
      'system',
      'contact',
    ]);
  });
});

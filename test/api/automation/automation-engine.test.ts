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

describe('actions', () => {
  it('give the conversation to a team, snooze it, and skip a send_text outside the window', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const team = await h.api('POST', '/v1/teams', { key, body: { name: 'Sales' } });
    expect(team.status, team.text).toBe(201);
    clock.set(Date.parse('2030-01-21T10:00:00.000Z'));
    const until = '2030-01-22T09:00:00.000Z';
    const router = await rule(key, {
      event: 'message.received',
      actions: [
        { type: 'assign_team', team_id: team.body.id },
        { type: 'set_status', status: 'snoozed', snoozed_until: until },
        { type: 'send_text', text: 'Thanks, we will write tomorrow.' },
      ],
    });
    expect(router.status, router.text).toBe(201);
    const [phone] = phones(1) as [string];
    await inbound(h, channelId, phone, 'hello');
    expect(await conversationOf(key, phone)).toMatchObject({
      team_id: team.body.id,
      status: 'snoozed',
      snoozed_until: until,
    });
    const runs = async () => (await h.api('GET', `/v1/automation-rules/${router.body.id}/runs`, { key })).body.items;
    expect((await runs())[0].actions).toEqual([
      { type: 'assign_team', outcome: 'done' },
      { type: 'set_status', outcome: 'done' },
      { type: 'send_text', outcome: 'done' },
    ]);

    // A contact's message that reaches us more than 24 hours after it was written: its window is closed.
    const [late] = phones(1) as [string];
    const account = (await h.admin('GET', `/organizations/${orgId}/messaging-accounts`)).body.items[0];
    const number = account.numbers[0];
    const payload = buildWebhookPayload([
      {
        kind: 'inbound_message',
        businessAccountId: account.business_account_id,
        phoneNumberId: number.phone_number_id,
        platformMessageId: `wamid.${late}`,
        from: late,
        type: 'text',
        text: 'written yesterday',
        timestamp: new Date(clock.now().getTime() - 25 * 60 * 60 * 1000),
      },
    ]);
    expect((await h.webhook(payload)).status).toBe(200);
    expect((await runs())[0].actions).toEqual([
      { type: 'assign_team', outcome: 'done' },
      { type: 'set_status', outcome: 'done' },
      { type: 'send_text', outcome: 'skipped', reason: 'window_closed' },
    ]);
    const conversation = await conversationOf(key, late);
    expect((await messagesOf(h, key, conversation.id)).map((message) => message.sender)).toEqual(['contact']);
  });
});

describe('conditions on a contact’s message', () => {
  it('read the message, the contact and the conversation as stored: each field of decisions §20', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    for (const property of [
      { key: 'tier', label: 'Tier', kind: 'TEXT' },
      { key: 'visits', label: 'Visits', kind: 'NUMBER' },
    ]) {
      const created = await h.api('POST', '/v1/properties', { key, body: property });
      expect(created.status, created.text).toBe(201);
    }
    const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Qualified' } });
    expect(stage.status, stage.text).toBe(201);
    const [phone] = phones(1) as [string];
    const contact = await h.api('POST', '/v1/contacts', {
      key,
      body: {
        phone,
        country: 'MX',
        funnel_stage_id: stage.body.id,
        properties: {
          tier: { kind: 'TEXT', value_text: 'Gold' },
          visits: { kind: 'NUMBER', value_number: 3 },
        },
      },
    });
    expect(contact.status, contact.text).toBe(201);
    const user = await addUser(h, orgId);
    // One rule per condition, each labelling the conversation; which ran is read from its runs.
    const conditions: Record<string, { field: string; operator: string; value: string | boolean }> = {
      text_equals: { field: 'message.text', operator: 'equals', value: 'HELLO THERE' },
      text_contains: { field: 'message.text', operator: 'contains', value: 'There' },
      text_starts: { field: 'message.text', operator: 'starts_with', value: 'hello' },
      text_starts_not: { field: 'message.text', operator: 'starts_with', value: 'there' },
      type: { field: 'message.type', operator: 'equals', value: 'TEXT' },
      type_not: { field: 'message.type', operator: 'equals', value: 'image' },
      // Business hours disabled: always open (decisions §20's details).
      open: { field: 'within_business_hours', operator: 'equals', value: true },
      closed: { field: 'within_business_hours', operator: 'equals', value: false },
      country: { field: 'contact.country', operator: 'equals', value: 'mx' },
      stage: { field: 'contact.funnel_stage_id', operator: 'equals', value: stage.body.id },
      tier_equals: { field: 'contact.properties.tier', operator: 'equals', value: 'gold' },
      tier_contains: { field: 'contact.properties.tier', operator: 'contains', value: 'OL' },
      // The stored shape of a value is not its text.
      tier_shape_not: { field: 'contact.properties.tier', operator: 'contains', value: 'value_text' },
      visits_equals: { field: 'contact.properties.visits', operator: 'equals', value: '3' },
      status: { field: 'conversation.status', operator: 'equals', value: 'open' },
      unassigned: { field: 'conversation.assignee', operator: 'equals', value: 'unassigned' },
      assigned_user: { field: 'conversation.assignee', operator: 'equals', value: user },
      labelled: { field: 'conversation.labels', operator: 'contains', value: 'RETURNING' },
    };
    const ids: Record<string, string> = {};
    for (const [name, condition] of Object.entries(conditions)) {
      const created = await rule(key, {
        name,
        event: 'message.received',
        conditions: [condition],
        actions: [{ type: 'add_note', text: name }],
      });
      expect(created.status, created.text).toBe(201);
      ids[name] = created.body.id;
    }
    const ran = async () => {
      const names: string[] = [];
      for (const [name, id] of Object.entries(ids)) {
        const runs = await h.api('GET', `/v1/automation-rules/${id}/runs`, { key });
        if (runs.body.items.length > 0) names.push(name);
        for (const run of runs.body.items) expect(run.actions).toEqual([{ type: 'add_note', outcome: 'done' }]);
      }
      return names.sort();
    };
    await inbound(h, channelId, phone, 'Hello there');
    expect(await ran()).toEqual(
      [
        'country',
        'open',
        'stage',
        'status',
        'text_contains',
        'text_equals',
        'text_starts',
        'tier_contains',
        'tier_equals',
        'type',
        'unassigned',
        'visits_equals',
      ].sort(),
    );

    // A person owns it now, and it carries a label: the next message is judged on that.
    const conversation = await conversationOf(key, phone);
    const changed = await h.api('PATCH', `/v1/conversations/${conversation.id}`, {
      key,
      body: { assignee: { type: 'user', id: user }, labels: ['returning'] },
    });
    expect(changed.status, changed.text).toBe(200);
    await inbound(h, channelId, phone, 'Bye');
    const second: Record<string, number> = {};
    for (const [name, id] of Object.entries(ids)) {
      second[name] = (await h.api('GET', `/v1/automation-rules/${id}/runs`, { key })).body.items.length;
    }
    // Counted over both messages: the user and the label hold now, `unassigned` and the text no longer.
    expect(second).toMatchObject({ assigned_user: 1, labelled: 1, unassigned: 1, text_equals: 1, type: 2 });
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

  it('is free, comes after the rules, and never goes where a rule’s assignee or the assistant owns it', async () => {
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
    const accounts = async () => (await h.admin('GET', `/organizations/${orgId}/messaging-accounts`)).body.items;
    const [account] = await accounts();
    const [plain, routed, assisted] = phones(3) as [string, string, string];
    clock.set(Date.parse('2030-01-14T20:00:00.000Z')); // Monday evening: closed

    // Inside the window (the contact just wrote): sent, and charged nothing.
    await inbound(h, channelId, plain, 'hello?');
    await handOff();
    const first = await conversationOf(key, plain);
    const away = (await messagesOf(h, key, first.id)).find((message) => message.sender === 'system');
    expect(away).toMatchObject({ text: 'We are closed; back at 9.', status: 'sent' });
    expect((await accounts())[0].balance).toBe(account.balance);

    // A rule that runs first gives the conversation to a person: no away message (within_business_hours is false).
    const user = await addUser(h, orgId);
    const router = await rule(key, {
      event: 'message.received',
      conditions: [
        { field: 'within_business_hours', operator: 'equals', value: false },
        { field: 'message.text', operator: 'contains', value: 'sales' },
      ],
      actions: [{ type: 'assign', assignee: { type: 'user', id: user } }],
    });
    expect(router.status, router.text).toBe(201);
    await inbound(h, channelId, routed, 'A sales question');
    const second = await conversationOf(key, routed);
    expect(second.assignee).toEqual({ type: 'user', id: user });
    expect((await messagesOf(h, key, second.id)).map((message) => message.sender)).toEqual(['contact']);

    // The assistant owns a new conversation on its number: no away message either.
    const assistant = await h.api('PUT', '/v1/ai-assistant', {
      key,
      body: { enabled: true, mode: 'autonomous', faqs: [{ question: 'opening hours', answer: 'From 9.' }] },
    });
    expect(assistant.status, assistant.text).toBe(200);
    await inbound(h, channelId, assisted, 'Your opening hours?');
    const third = await conversationOf(key, assisted);
    expect(third.assignee).toEqual({ type: 'ai' });
    expect((await messagesOf(h, key, third.id)).map((message) => message.sender)).toEqual(['contact']);
  });
});

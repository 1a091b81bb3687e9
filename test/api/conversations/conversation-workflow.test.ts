// decisions §19, a conversation's state: status, snooze, assignee, team, priority and labels through PATCH with
// every refusal; what moves it by itself (a contact's message, a snooze ending, resolving); its clocks
// (`waiting_since`, `first_reply_at`, `last_activity_at`); one `conversation.updated` per change; and changes at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { recipientsFor, sender, phones as testPhones } from '../../helpers/sends.ts';
import { addUser, eventsOf, inbound, inboxOrg, openConversation } from '../../helpers/team-inbox.ts';

const DAY = 24 * 60 * 60 * 1000;
const clock = manualClock(Date.parse('2030-03-01T10:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

let phones = 0;
const nextPhone = () => `+1555700${String(++phones).padStart(4, '0')}`;

async function fixture() {
  const org = await inboxOrg(h);
  const phone = nextPhone();
  const conversation = await openConversation(h, org.key, org.channelId, phone);
  return { ...org, phone, conversation };
}

const patch = (key: string, id: string, body: unknown) => h.api('PATCH', `/v1/conversations/${id}`, { key, body });

describe('a new conversation', () => {
  it('starts open, unassigned, without priority or labels, waiting since the contact wrote', async () => {
    const { conversation } = await fixture();
    const at = clock.now().toISOString();
    expect(conversation).toMatchObject({
      status: 'open',
      snoozed_until: null,
      assignee: null,
      team_id: null,
      priority: 'none',
      labels: [],
      waiting_since: at,
      first_reply_at: null,
      last_activity_at: at,
    });
  });
});

describe('PATCH /v1/conversations/{id}', () => {
  it('changes the state and records one event with what changed and what it was', async () => {
    const { orgId, key, conversation } = await fixture();
    const user = await addUser(h, orgId);
    clock.advance(1000);
    const changed = await patch(key, conversation.id, {
      assignee: { type: 'user', id: user },
      priority: 'high',
      labels: ['VIP', 'shipping'],
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({
      assignee: { type: 'user', id: user },
      priority: 'high',
      labels: ['VIP', 'shipping'],
      updated_at: clock.now().toISOString(),
    });
    const events = await eventsOf(h, orgId, 'conversation.updated');
    expect(events).toEqual([
      {
        conversation: changed.body,
        changed: ['assignee', 'priority', 'labels'],
        previous: { assignee: null, priority: 'none', labels: [] },
      },
    ]);
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body).toEqual(changed.body);
  });

  it('that changes nothing answers 200, keeps updated_at and records no event', async () => {
    const { orgId, key, conversation } = await fixture();
    expect((await patch(key, conversation.id, { priority: 'low', labels: ['a'] })).status).toBe(200);
    const before = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    clock.advance(1000);
    for (const body of [{}, { priority: 'low' }, { labels: ['a'], status: 'open', assignee: null, team_id: null }]) {
      const same = await patch(key, conversation.id, body);
      expect(same.status, same.text).toBe(200);
      expect(same.body).toEqual(before);
    }
    expect(await eventsOf(h, orgId, 'conversation.updated')).toHaveLength(1);
  });

  it('refuses what §19 refuses, at its field, and changes nothing', async () => {
    const { orgId, key, conversation } = await fixture();
    const other = await h.createOrg();
    const stranger = await addUser(h, other.org.id);
    const soon = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
    const cases: [unknown, (string | number)[]][] = [
      [{ snoozed_until: soon(DAY) }, ['body', 'snoozed_until']],
      [{ status: 'open', snoozed_until: soon(DAY) }, ['body', 'snoozed_until']],
      [{ status: 'snoozed', snoozed_until: soon(-1000) }, ['body', 'snoozed_until']],
      [{ status: 'snoozed', snoozed_until: soon(91 * DAY) }, ['body', 'snoozed_until']],
      [{ assignee: { type: 'user', id: stranger } }, ['body', 'assignee', 'id']],
      [{ team_id: 'team_unknown' }, ['body', 'team_id']],
      [{ labels: ['a', 'A'] }, ['body', 'labels', 1]],
      [{ labels: [' padded'] }, ['body', 'labels', 0]],
      [{ labels: [''] }, ['body', 'labels', 0]],
      [{ labels: ['x'.repeat(51)] }, ['body', 'labels', 0]],
      [{ labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }, ['body', 'labels']],
      [{ status: 'closed' }, ['body', 'status']],
      [{ priority: 'highest' }, ['body', 'priority']],
    ];
    for (const [body, loc] of cases) {
      const refused = await patch(key, conversation.id, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.detail.map((issue: { loc: unknown }) => issue.loc)).toContainEqual(loc);
    }
    const ai = await patch(key, conversation.id, { assignee: { type: 'ai' }, priority: 'high' });
    expect(ai.status).toBe(409);
    expect(ai.body).toEqual({ detail: { code: 'ai_disabled' } });
    expect((await patch(key, 'conv_unknown', { priority: 'high' })).status).toBe(404);
    expect((await patch(other.key, conversation.id, { priority: 'high' })).status).toBe(404);
    const after = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(after).toEqual({ ...conversation, unread_count: after.unread_count });
    expect(await eventsOf(h, orgId, 'conversation.updated')).toEqual([]);
  });
});

describe('what moves a conversation by itself', () => {
  it('a contact’s message reopens a resolved or snoozed conversation and ends the snooze', async () => {
    const { orgId, key, channelId, phone, conversation } = await fixture();
    // A moment after the contact's message: a resolve asked for at its very instant would race it (D292).
    clock.advance(1000);
    const resolved = await patch(key, conversation.id, { status: 'resolved' });
    expect(resolved.body).toMatchObject({ status: 'resolved', waiting_since: null });
    clock.advance(1000);
    await inbound(h, channelId, phone, 'one more thing');
    let read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ status: 'open', waiting_since: clock.now().toISOString() });

    clock.advance(1000);
    const until = new Date(clock.now().getTime() + DAY).toISOString();
    const snoozed = await patch(key, conversation.id, { status: 'snoozed', snoozed_until: until });
    expect(snoozed.body).toMatchObject({ status: 'snoozed', snoozed_until: until });
    clock.advance(1000);
    await inbound(h, channelId, phone, 'hello?');
    read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ status: 'open', snoozed_until: null });
    const events = await eventsOf(h, orgId, 'conversation.updated');
    expect(events.map((event) => [event.changed, event.previous])).toEqual([
      [['status'], { status: 'open' }],
      [['status'], { status: 'resolved' }],
      [['status', 'snoozed_until'], { status: 'open', snoozed_until: null }],
      [['status', 'snoozed_until'], { status: 'snoozed', snoozed_until: until }],
    ]);
    expect(events.at(-1).conversation).toEqual(read);
  });

  it('a snooze ends at its time (the worker’s task), once', async () => {
    const { orgId, key, conversation } = await fixture();
    clock.advance(1000); // after the contact's message (D292)
    const until = new Date(clock.now().getTime() + 60_000).toISOString();
    expect((await patch(key, conversation.id, { status: 'snoozed', snoozed_until: until })).status).toBe(200);
    const forever = await fixture();
    clock.advance(1000);
    expect((await patch(forever.key, forever.conversation.id, { status: 'snoozed' })).body).toMatchObject({
      status: 'snoozed',
      snoozed_until: null,
    });
    await h.wiring.changes.endSnoozes(h.database.db, clock.now());
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.status).toBe('snoozed');
    clock.advance(60_000);
    await h.wiring.changes.endSnoozes(h.database.db, clock.now());
    await h.wiring.changes.endSnoozes(h.database.db, clock.now());
    const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ status: 'open', snoozed_until: null });
    const events = await eventsOf(h, orgId, 'conversation.updated');
    expect(events.map((event) => event.changed)).toEqual([
      ['status', 'snoozed_until'],
      ['status', 'snoozed_until'],
    ]);
    const stillSnoozed = await h.api('GET', `/v1/conversations/${forever.conversation.id}`, { key: forever.key });
    expect(stillSnoozed.body.status).toBe('snoozed');
  });

  it('replies answer the wait and the first one is the first reply; resolving clears the wait', async () => {
    const { key, channelId, phone, conversation } = await fixture();
    const wrote = clock.now().toISOString();
    clock.advance(1000);
    await inbound(h, channelId, phone, 'anyone?');
    let read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ waiting_since: wrote, first_reply_at: null });
    clock.advance(1000);
    const replied = clock.now().toISOString();
    const reply = await h.api('POST', `/v1/conversations/${conversation.id}/messages`, {
      key,
      body: { type: 'text', text: 'Here' },
    });
    expect(reply.status, reply.text).toBe(202);
    read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ waiting_since: null, first_reply_at: replied, last_activity_at: replied });
    clock.advance(1000);
    await inbound(h, channelId, phone, 'thanks');
    clock.advance(1000);
    await h.api('POST', `/v1/conversations/${conversation.id}/messages`, { key, body: { type: 'text', text: 'bye' } });
    read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({ waiting_since: null, first_reply_at: replied });
    clock.advance(1000);
    const asked = clock.now().toISOString();
    await inbound(h, channelId, phone, 'wait');
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.waiting_since).toBe(asked);
    clock.advance(1000);
    const resolved = await patch(key, conversation.id, { status: 'resolved' });
    expect(resolved.body).toMatchObject({ status: 'resolved', waiting_since: null });
  });
});

describe('a broadcast’s template', () => {
  it('answers the wait (a system message) without being a first reply', async () => {
    const { key, template, account } = await sender(h);
    const [phone] = testPhones(1) as [string];
    const wrote = await h.admin('POST', '/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from: phone,
      text: 'hi',
    });
    expect(wrote.status).toBe(200);
    const [conversation] = (await h.api('GET', '/v1/conversations', { key })).body.items;
    expect(conversation.waiting_since).toBe(clock.now().toISOString());
    clock.advance(1000);
    const send = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor([phone]) },
    });
    expect(send.status, send.text).toBe(202);
    await h.fanout.drain();
    const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    // (The fan-out stamps its messages with the database's clock, not this test's: only the wait is compared.)
    expect(read).toMatchObject({ waiting_since: null, first_reply_at: null });
  });
});

describe('changes at once', () => {
  it('two people assigning one conversation end with one assignee and two events in order', async () => {
    const { orgId, key, conversation } = await fixture();
    const [ana, ben] = [await addUser(h, orgId), await addUser(h, orgId)];
    for (let round = 0; round < 5; round++) {
      await patch(key, conversation.id, { assignee: null });
      const before = (await eventsOf(h, orgId, 'conversation.updated')).length;
      const answers = await Promise.all([
        patch(key, conversation.id, { assignee: { type: 'user', id: ana } }),
        patch(key, conversation.id, { assignee: { type: 'user', id: ben } }),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      const events = (await eventsOf(h, orgId, 'conversation.updated')).slice(before);
      expect(events).toHaveLength(2);
      const [first, second] = events;
      expect(first.previous).toEqual({ assignee: null });
      expect(second.previous).toEqual({ assignee: first.conversation.assignee });
      const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
      expect(read.assignee).toEqual(second.conversation.assignee);
      expect([ana, ben]).toContain(read.assignee.id);
    }
  });

  it('a contact’s message racing a resolve ends open, as if it came after the resolve (D292)', async () => {
    const { orgId, key, channelId, phone, conversation } = await fixture();
    // Whichever commits first (the message before the resolve takes the row's lock, while it holds it, or after),
    // the outcome is the serial order "resolve, then the message": two events in order, open, waiting since the
    // message. The clock stands still within a round: the message is received at the moment the request arrives.
    for (let round = 0; round < 20; round++) {
      expect((await patch(key, conversation.id, { status: 'open' })).status).toBe(200);
      const before = (await eventsOf(h, orgId, 'conversation.updated')).length;
      clock.advance(1000);
      const [resolved, delivered] = await Promise.all([
        patch(key, conversation.id, { status: 'resolved' }),
        inbound(h, channelId, phone, `race ${round}`),
      ]);
      expect([resolved.status, delivered.status]).toEqual([200, 200]);
      const events = (await eventsOf(h, orgId, 'conversation.updated')).slice(before);
      expect(events.map((event) => [event.previous.status, event.conversation.status])).toEqual([
        ['open', 'resolved'],
        ['resolved', 'open'],
      ]);
      const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
      expect(read).toMatchObject({ status: 'open', waiting_since: clock.now().toISOString(), snoozed_until: null });
      expect(events[1].conversation.waiting_since).toBe(read.waiting_since);
    }
  });

  it('a message received before the resolve arrived is covered by it; a snooze races like a resolve (D292)', async () => {
    const { orgId, key, channelId, phone, conversation } = await fixture();
    clock.advance(1000);
    expect((await inbound(h, channelId, phone, 'one more thing')).status).toBe(200);
    clock.advance(1000);
    const before = (await eventsOf(h, orgId, 'conversation.updated')).length;
    expect((await patch(key, conversation.id, { status: 'resolved' })).body).toMatchObject({
      status: 'resolved',
      waiting_since: null,
    });
    expect(await eventsOf(h, orgId, 'conversation.updated')).toHaveLength(before + 1);
    expect((await patch(key, conversation.id, { status: 'open' })).status).toBe(200);
    for (let round = 0; round < 10; round++) {
      clock.advance(1000);
      const until = new Date(clock.now().getTime() + DAY).toISOString();
      const count = (await eventsOf(h, orgId, 'conversation.updated')).length;
      const [snoozed, delivered] = await Promise.all([
        patch(key, conversation.id, { status: 'snoozed', snoozed_until: until }),
        inbound(h, channelId, phone, `snooze race ${round}`),
      ]);
      expect([snoozed.status, delivered.status]).toEqual([200, 200]);
      const events = (await eventsOf(h, orgId, 'conversation.updated')).slice(count);
      expect(events.map((event) => event.conversation.status)).toEqual(['snoozed', 'open']);
      const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
      expect(read).toMatchObject({ status: 'open', snoozed_until: null });
      expect(read.waiting_since).not.toBeNull();
    }
  });
});

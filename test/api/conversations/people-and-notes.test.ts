// decisions §19: the organization's people (`GET /v1/users`, availability set by each person in the console) and
// private notes (never sent, no unread, wait or reply effect; listed among the messages; `conversation.note_created`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { createUser } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { addUser, eventsOf, inboxOrg, openConversation } from '../../helpers/team-inbox.ts';

const clock = manualClock(Date.parse('2030-04-01T10:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

let phones = 0;
const nextPhone = () => `+1555710${String(++phones).padStart(4, '0')}`;

describe('people', () => {
  it('are listed with their role and availability, which each person sets for themselves in the console', async () => {
    const { orgId, key } = await inboxOrg(h);
    const agent = await createUser(h, orgId, { role: 'agent', name: 'Ana' });
    const listed = await h.api('GET', '/v1/users', { key });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.items).toEqual([
      { id: agent.user.id, name: 'Ana', email: agent.email, role: 'agent', available: true },
    ]);
    const away = await agent.client.call('PATCH', '/app/api/me', { body: { available: false } });
    expect(away.status, away.text).toBe(200);
    expect(away.body).toMatchObject({ id: agent.user.id, available: false });
    const seen = await agent.client.call('GET', '/app/api/v1/users');
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.items[0].available).toBe(false);
    expect((await agent.client.call('GET', '/app/api/session')).body.user.available).toBe(false);
    const bad = await agent.client.call('PATCH', '/app/api/me', { body: { available: 'no' } });
    expect(bad.status).toBe(422);
    const other = await h.createOrg();
    expect((await h.api('GET', '/v1/users', { key: other.key })).body.items).toEqual([]);
  });
});

describe('a private note', () => {
  it('is a Message apart: never sent, no unread, wait or reply effect, but the newest activity', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const conversation = await openConversation(h, key, channelId, nextPhone());
    const mentioned = await addUser(h, orgId);
    clock.advance(60_000);
    const created = await h.api('POST', `/v1/conversations/${conversation.id}/notes`, {
      key,
      body: { text: 'Refund approved', mention_ids: [mentioned] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      conversation_id: conversation.id,
      type: 'note',
      private: true,
      sender: 'agent',
      author_id: null,
      status: null,
      text: 'Refund approved',
      platform_message_id: null,
      created_at: clock.now().toISOString(),
    });
    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    expect(messages.body.items[0]).toEqual(created.body);
    const read = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body;
    expect(read).toMatchObject({
      unread_count: conversation.unread_count,
      waiting_since: conversation.waiting_since,
      first_reply_at: null,
      last_message_at: conversation.last_message_at,
      last_activity_at: clock.now().toISOString(),
      last_message: { id: created.body.id, type: 'note', private: true, sender: 'agent', text: 'Refund approved' },
    });
    const handoffs = await h.database.db
      .selectFrom('reply_handoffs')
      .select('message_id')
      .where('org_id', '=', orgId)
      .execute();
    expect(handoffs).toEqual([]);
    expect(await eventsOf(h, orgId, 'conversation.note_created')).toEqual([
      { ...created.body, mention_ids: [mentioned] },
    ]);
    expect(await eventsOf(h, orgId, 'conversation.updated')).toEqual([]);
  });

  it('names its console author; refuses a mention of someone else, an unknown conversation and a bad text', async () => {
    const { orgId, key, channelId } = await inboxOrg(h);
    const conversation = await openConversation(h, key, channelId, nextPhone());
    const agent = await createUser(h, orgId, { role: 'agent' });
    const fromConsole = await agent.client.call('POST', `/app/api/v1/conversations/${conversation.id}/notes`, {
      body: { text: 'mine' },
    });
    expect(fromConsole.status, fromConsole.text).toBe(201);
    expect(fromConsole.body).toMatchObject({ author_id: agent.user.id, private: true });

    const stranger = await addUser(h, (await h.createOrg()).org.id);
    const path = `/v1/conversations/${conversation.id}/notes`;
    const refused = await h.api('POST', path, { key, body: { text: 'x', mention_ids: [agent.user.id, stranger] } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(['body', 'mention_ids', 1]);
    for (const body of [{ text: '' }, { text: 'x'.repeat(10_001) }, {}]) {
      expect((await h.api('POST', path, { key, body })).status).toBe(422);
    }
    expect((await h.api('POST', '/v1/conversations/conv_unknown/notes', { key, body: { text: 'x' } })).status).toBe(
      404,
    );
    const messages = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key });
    expect(messages.body.items.filter((message: { type: string }) => message.type === 'note')).toHaveLength(1);
  });
});

// decisions §19, conversations worked by a team: a conversation's list row carries its contact and newest message;
// every Message has `author_id` and `private`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../helpers/clock.ts';
import { createUser } from '../../helpers/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { inbound } from '../../helpers/team-inbox.ts';

const clock = manualClock(Date.parse('2030-03-01T10:00:00.000Z'));
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, clock });
});
afterAll(() => h.close());

async function setup() {
  const { org, key } = await h.createOrg();
  const account = await h.createAccount(org.id, { numbers: [{ phone: '+15550100001' }] });
  return { org, key, channelId: account.numbers[0].id as string };
}

describe('a conversation row', () => {
  it('carries its contact and its newest message, in the list and the read', async () => {
    const { key, channelId } = await setup();
    expect((await inbound(h, channelId, '+15557000001', 'first')).status).toBe(200);
    clock.advance(1000);
    expect((await inbound(h, channelId, '+15557000001', 'Where is my order?')).status).toBe(200);
    const list = await h.api('GET', '/v1/conversations', { key });
    expect(list.status).toBe(200);
    const [row] = list.body.items;
    const messages = await h.api('GET', `/v1/conversations/${row.id}/messages`, { key });
    const newest = messages.body.items[0];
    expect(row.contact).toEqual({ id: row.contact_id, first_name: null, last_name: null, phone: '+15557000001' });
    expect(row.last_message).toEqual({
      id: newest.id,
      sender: 'contact',
      type: 'text',
      text: 'Where is my order?',
      private: false,
      created_at: clock.now().toISOString(),
    });
    expect(newest).toMatchObject({ author_id: null, private: false });
    expect((await h.api('GET', `/v1/conversations/${row.id}`, { key })).body).toEqual(row);
  });

  it('names the console person who wrote a reply, and no one for a key', async () => {
    const { org, key, channelId } = await setup();
    expect((await inbound(h, channelId, '+15557000002')).status).toBe(200);
    const [conversation] = (await h.api('GET', '/v1/conversations', { key })).body.items;
    const agent = await createUser(h, org.id, { role: 'agent' });
    const fromConsole = await agent.client.call('POST', `/app/api/v1/conversations/${conversation.id}/messages`, {
      body: { type: 'text', text: 'On its way' },
    });
    expect(fromConsole.status, fromConsole.text).toBe(202);
    expect(fromConsole.body).toMatchObject({ author_id: agent.user.id, private: false, sender: 'agent' });
    const fromKey = await h.api('POST', `/v1/conversations/${conversation.id}/messages`, {
      key,
      body: { type: 'text', text: 'Tomorrow' },
    });
    expect(fromKey.status, fromKey.text).toBe(202);
    expect(fromKey.body).toMatchObject({ author_id: null, private: false });
    const read = await h.api('GET', `/v1/conversations/${conversation.id}`, { key });
    expect(read.body.last_message).toMatchObject({ id: fromKey.body.id, sender: 'agent', text: 'Tomorrow' });
  });
});

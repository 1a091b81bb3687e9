// decisions §15, the conversation's state: the customer-service window (`last_inbound_at`, `window_expires_at`),
// `unread_count` kept exact under concurrent inbound messages and read calls, the `unread` and `window` filters, and
// the read call with its receipt to the platform.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxPlatform } from '../../../src/messaging/sandbox/sandbox-platform.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { inbound } from '../../helpers/team-inbox.ts';

const DAY = 24 * 60 * 60 * 1000;
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

async function conversationOf(key: string, channelId: string, from: string) {
  const delivered = await inbound(h, channelId, from);
  expect(delivered.status).toBe(200);
  const list = await h.api('GET', '/v1/conversations', { key });
  return { conversation: list.body.items[0], delivered };
}

const receipts = () => (h.messaging.platform as SandboxPlatform).readReceipts();

describe('conversation state', () => {
  it('opens the window at the newest inbound message and counts unread messages until a read call', async () => {
    const { key, channelId } = await setup();
    const { conversation, delivered } = await conversationOf(key, channelId, '+15557000001');
    const at = clock.now().toISOString();
    expect(conversation).toMatchObject({
      last_inbound_at: at,
      window_expires_at: new Date(clock.now().getTime() + DAY).toISOString(),
      unread_count: 1,
    });
    clock.advance(60_000);
    const second = await inbound(h, channelId, '+15557000001', 'again');
    const read = await h.api('GET', `/v1/conversations/${conversation.id}`, { key });
    expect(read.body).toMatchObject({ last_inbound_at: clock.now().toISOString(), unread_count: 2 });

    const before = receipts().length;
    clock.advance(1000);
    const marked = await h.api('POST', `/v1/conversations/${conversation.id}/read`, { key });
    expect(marked.status).toBe(200);
    expect(marked.body).toMatchObject({ id: conversation.id, unread_count: 0, updated_at: clock.now().toISOString() });
    // The receipt names the newest inbound message, once.
    expect(receipts().slice(before)).toEqual([
      expect.objectContaining({ platformMessageId: second.body.platform_message_id }),
    ]);
    expect(second.body.platform_message_id).not.toBe(delivered.body.platform_message_id);
    clock.advance(1000);
    const again = await h.api('POST', `/v1/conversations/${conversation.id}/read`, { key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(marked.body);
    expect(receipts().length).toBe(before + 1);
  });

  it('takes no body or an empty object, as documented, and refuses anything else without marking (D225)', async () => {
    const { key, channelId } = await setup();
    const { conversation } = await conversationOf(key, channelId, '+15557000003');
    const path = `/v1/conversations/${conversation.id}/read`;
    const refused = await h.api('POST', path, { key, body: { unread_count: 5 } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'unread_count'], type: 'extra_forbidden' }),
    ]);
    for (const body of [[], 'read', null]) expect((await h.api('POST', path, { key, body })).status).toBe(422);
    const untouched = await h.api('GET', `/v1/conversations/${conversation.id}`, { key });
    expect(untouched.body.unread_count).toBe(1);
    const empty = await h.api('POST', path, { key, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.unread_count).toBe(0);
    expect((await h.api('POST', path, { key })).status).toBe(200);
    const document = (await h.api('GET', '/v1/openapi.json')).body;
    const requestBody = document.paths['/v1/conversations/{conversation_id}/read'].post.requestBody;
    expect(requestBody.required).toBe(false);
  });

  it('answers 404 for a read of an unknown conversation or one of another organization', async () => {
    const { key } = await setup();
    const other = await setup();
    const { conversation } = await conversationOf(other.key, other.channelId, '+15557000002');
    expect((await h.api('POST', '/v1/conversations/conv_unknown/read', { key })).status).toBe(404);
    expect((await h.api('POST', `/v1/conversations/${conversation.id}/read`, { key })).status).toBe(404);
    const untouched = await h.api('GET', `/v1/conversations/${conversation.id}`, { key: other.key });
    expect(untouched.body.unread_count).toBe(1);
  });

  it('filters by unread and by window, open or closed, and pages within a filter', async () => {
    const { key, channelId } = await setup();
    const old = (await conversationOf(key, channelId, '+15557000011')).conversation;
    clock.advance(DAY); // old's window closes exactly now
    await inbound(h, channelId, '+15557000012');
    await inbound(h, channelId, '+15557000013');
    const ids = async (query: string) => {
      const list = await h.api('GET', `/v1/conversations?${query}`, { key });
      expect(list.status).toBe(200);
      return list.body.items.map((c: { id: string }) => c.id);
    };
    const all = await ids('');
    expect(all).toHaveLength(3);
    expect(await ids('window=closed')).toEqual([old.id]);
    expect(await ids('window=open')).toEqual(all.filter((id: string) => id !== old.id));
    await h.api('POST', `/v1/conversations/${all[0]}/read`, { key });
    expect(await ids('unread=false')).toEqual([all[0]]);
    expect(await ids('unread=true')).toEqual(all.slice(1));
    const first = await h.api('GET', '/v1/conversations?unread=true&limit=1', { key });
    const next = await h.api('GET', `/v1/conversations?unread=true&limit=1&cursor=${first.body.next_cursor}`, { key });
    expect([...first.body.items, ...next.body.items].map((c: { id: string }) => c.id)).toEqual(all.slice(1));
    expect(next.body.next_cursor).toBeNull();
    // A cursor belongs to its filter.
    const mixed = await h.api('GET', `/v1/conversations?unread=false&cursor=${first.body.next_cursor}`, { key });
    expect(mixed.status).toBe(422);
    expect((await h.api('GET', '/v1/conversations?window=ajar', { key })).status).toBe(422);
    expect((await h.api('GET', '/v1/conversations?unread=maybe', { key })).status).toBe(422);
  });

  it('counts every one of many concurrent inbound messages, and read calls racing them lose none after them', async () => {
    const { key, channelId } = await setup();
    const { conversation } = await conversationOf(key, channelId, '+15557000021');
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, index) => inbound(h, channelId, '+15557000021', `burst ${index}`)),
    );
    expect(burst.every((answer) => answer.status === 200)).toBe(true);
    const counted = await h.api('GET', `/v1/conversations/${conversation.id}`, { key });
    expect(counted.body.unread_count).toBe(41);

    // Reads racing inbound messages: whatever the interleaving, the count afterwards is that of the inbound
    // messages committed after the last read, so a last read leaves 0 and each later message adds exactly one.
    const mixed = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        index % 4 === 0
          ? h.api('POST', `/v1/conversations/${conversation.id}/read`, { key })
          : inbound(h, channelId, '+15557000021', `mixed ${index}`),
      ),
    );
    expect(mixed.every((answer) => answer.status === 200)).toBe(true);
    const between = (await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.unread_count;
    expect(between).toBeGreaterThanOrEqual(0);
    expect(between).toBeLessThanOrEqual(30);
    expect((await h.api('POST', `/v1/conversations/${conversation.id}/read`, { key })).body.unread_count).toBe(0);
    await Promise.all(Array.from({ length: 7 }, (_, index) => inbound(h, channelId, '+15557000021', `after ${index}`)));
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.unread_count).toBe(7);
  });

  it('does not count a redelivered inbound message twice', async () => {
    const { key, channelId } = await setup();
    const { conversation, delivered } = await conversationOf(key, channelId, '+15557000031');
    expect((await h.webhook(delivered.body.webhook)).status).toBe(200);
    expect((await h.api('GET', `/v1/conversations/${conversation.id}`, { key })).body.unread_count).toBe(1);
  });
});

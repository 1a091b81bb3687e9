// decisions §15, a reply's delivery: handed off in the order accepted per conversation, woken at once after the 202,
// statuses forward only with `message.updated` for each move, the platform's refusals (the sandbox's window rule
// 131047, its magic numbers), and hand-offs whose answer was lost: settled by the platform's report through our
// callback reference, or failed `handoff_unconfirmed` (never sent again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedWebhook } from '../../../src/messaging/cloud/webhook-builder.ts';
import { claimReplies } from '../../../src/modules/conversations/reply-handoffs.repo.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type Harness, startHarness, WEBHOOK_APP_SECRET } from '../../helpers/harness.ts';
import { phones, sender } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

const DAY = 24 * 60 * 60 * 1000;
const clock = manualClock(Date.parse('2030-05-01T10:00:00.000Z'));
let h: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [h, receiver] = await Promise.all([
    startHarness({ unlimited: true, clock, fanout: { leaseMs: 200, reconcileAfterMs: 0 } }),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

async function conversation(phone = phones(1)[0] as string, setup?: Awaited<ReturnType<typeof sender>>) {
  const org = setup ?? (await sender(h, { balance: 100 }));
  const channelId = org.account.numbers[0].id as string;
  const inbound = await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hello' });
  expect(inbound.status).toBe(200);
  const list = await h.api('GET', `/v1/conversations?limit=100`, { key: org.key });
  const found = list.body.items.find((item: any) => item.contact_id && item.channel_id === channelId);
  const all = list.body.items as any[];
  const byPhone = [];
  for (const item of all) {
    const contact = await h.api('GET', `/v1/contacts/${item.contact_id}`, { key: org.key });
    if (contact.body.phone === phone) byPhone.push(item);
  }
  return { ...org, channelId, phone, conversationId: (byPhone[0] ?? found).id as string };
}

const reply = (key: string, conversationId: string, body: unknown) =>
  h.api('POST', `/v1/conversations/${conversationId}/messages`, { key, body });

const drain = async () => {
  let total = 0;
  for (let handled = await h.wiring.replies.runOnce(); handled > 0; handled = await h.wiring.replies.runOnce()) {
    total += handled;
  }
  return total;
};

const messageOf = async (key: string, conversationId: string, id: string) =>
  (await h.api('GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key })).body.items.find(
    (message: any) => message.id === id,
  );

let paths = 0;
async function endpoint(key: string) {
  const path = `/replies/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events: ['message.updated'] },
  });
  expect(created.status).toBe(201);
  return async () => {
    await h.deliveries.drain();
    return receiver
      .at(path)
      .map((request) => verify(created.body.secret, request))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  };
}

describe('hand-off order', () => {
  it('hands off one reply per conversation at a time, in the order accepted', async () => {
    const a = await conversation();
    const b = await conversation(phones(1)[0], a);
    const accepted: Record<string, string[]> = { [a.conversationId]: [], [b.conversationId]: [] };
    for (let index = 0; index < 4; index++) {
      for (const conversationId of [a.conversationId, b.conversationId]) {
        const answered = await reply(a.key, conversationId, { type: 'text', text: `#${index}` });
        expect(answered.status).toBe(202);
        accepted[conversationId]?.push(answered.body.id);
      }
    }
    // Each claim takes at most the head of each conversation: two rounds of two... four rounds in all.
    const rounds: number[] = [];
    for (let handled = await h.wiring.replies.runOnce(); handled > 0; handled = await h.wiring.replies.runOnce()) {
      rounds.push(handled);
    }
    expect(rounds).toEqual([2, 2, 2, 2]);
    for (const [conversationId, ids] of Object.entries(accepted)) {
      const sent = await Promise.all(ids.map((id) => messageOf(a.key, conversationId, id)));
      expect(sent.every((message) => message.status === 'sent')).toBe(true);
      const times = sent.map((message) => Date.parse(message.sent_at));
      expect([...times].sort((x, y) => x - y)).toEqual(times);
    }
  });

  it('a reply waiting for a retry holds back the later ones of its conversation', async () => {
    const a = await conversation();
    const first = await reply(a.key, a.conversationId, { type: 'text', text: 'first' });
    const second = await reply(a.key, a.conversationId, { type: 'text', text: 'second' });
    // The first is due later (as a retry would be): the second must wait for it.
    await h.database.db
      .updateTable('reply_handoffs')
      .set({ next_attempt_at: new Date(Date.now() + 60_000) })
      .where('message_id', '=', first.body.id)
      .execute();
    expect(await h.wiring.replies.runOnce()).toBe(0);
    expect((await messageOf(a.key, a.conversationId, second.body.id)).status).toBe('sending');
    await h.database.db
      .updateTable('reply_handoffs')
      .set({ next_attempt_at: new Date(Date.now() - 1000) })
      .where('message_id', '=', first.body.id)
      .execute();
    expect(await drain()).toBe(2);
  });
});

describe('statuses and message.updated', () => {
  it('moves forward only, with one message.updated per move (sent, delivered, read)', async () => {
    const a = await conversation();
    const events = await endpoint(a.key);
    const answered = await reply(a.key, a.conversationId, { type: 'text', text: 'hello back' });
    await drain();
    const sent = await messageOf(a.key, a.conversationId, answered.body.id);
    const status = (value: string) =>
      h.admin('POST', `/sandbox/messages/${sent.platform_message_id}/status`, { status: value });
    expect((await status('read')).status).toBe(200);
    expect((await status('delivered')).status).toBe(200); // late: stale, but tells when it was delivered
    const read = await messageOf(a.key, a.conversationId, answered.body.id);
    expect(read).toMatchObject({ status: 'read', read_at: expect.any(String), delivered_at: expect.any(String) });
    const delivered = await events();
    expect(delivered.map((event) => [event.type, event.data.status])).toEqual([
      ['message.updated', 'sent'],
      ['message.updated', 'read'],
    ]);
    expect(delivered[1].data).toMatchObject({
      id: answered.body.id,
      conversation_id: a.conversationId,
      sender: 'agent',
    });
    // A failure report after read changes nothing.
    await status('failed');
    expect((await messageOf(a.key, a.conversationId, answered.body.id)).status).toBe('read');
  });

  it('SANDBOX_AUTO_REPORTS_MS delivers and reads replies too', async () => {
    const auto = await startHarness({ unlimited: true, sandbox: { autoReportsMs: 5 } });
    try {
      const setup = await (async () => {
        const { org, key } = await auto.createOrg();
        const account = await auto.createAccount(org.id);
        return { key, channelId: account.numbers[0].id as string };
      })();
      const [phone] = phones(1);
      await auto.admin('POST', '/sandbox/inbound', { channel_id: setup.channelId, from: phone, text: 'hi' });
      const conversationId = (await auto.api('GET', '/v1/conversations', { key: setup.key })).body.items[0].id;
      const answered = await auto.api('POST', `/v1/conversations/${conversationId}/messages`, {
        key: setup.key,
        body: { type: 'text', text: 'auto' },
      });
      expect(answered.status).toBe(202);
      await auto.wiring.replies.runOnce();
      await waitUntil(async () => {
        const items = (await auto.api('GET', `/v1/conversations/${conversationId}/messages`, { key: setup.key })).body
          .items;
        return items.find((message: any) => message.id === answered.body.id)?.status === 'read';
      });
    } finally {
      await auto.close();
    }
  });
});

describe('the platform’s refusals', () => {
  it('131047: the sandbox refuses a free-form message once the phone has not written for 24 hours → window_closed', async () => {
    const a = await conversation();
    const events = await endpoint(a.key);
    const answered = await reply(a.key, a.conversationId, { type: 'text', text: 'just in time' });
    expect(answered.status).toBe(202);
    clock.advance(DAY); // the window closes before the hand-off
    await drain();
    const failed = await waitUntil(async () => {
      const message = await messageOf(a.key, a.conversationId, answered.body.id);
      return message.status === 'failed' ? message : undefined;
    });
    expect(failed).toMatchObject({ error: 'window_closed', failed_at: expect.any(String) });
    const seen = await events();
    expect(seen.at(-1)?.data).toMatchObject({ id: answered.body.id, status: 'failed', error: 'window_closed' });
  });

  it('0404 fails not_on_network and the contact becomes unavailable; 0500 fails platform_error', async () => {
    const org = await sender(h, { balance: 100 });
    const unreachable = await conversation('+15557770404', org);
    const broken = await conversation('+15557770500', org);
    const lost = await reply(org.key, unreachable.conversationId, { type: 'text', text: 'x' });
    const error = await reply(org.key, broken.conversationId, { type: 'text', text: 'y' });
    await drain();
    expect(await messageOf(org.key, unreachable.conversationId, lost.body.id)).toMatchObject({
      status: 'failed',
      error: 'not_on_network',
    });
    expect(await messageOf(org.key, broken.conversationId, error.body.id)).toMatchObject({
      status: 'failed',
      error: 'platform_error',
    });
    const contact = await h.api('GET', `/v1/contacts/${lost.body.contact_id}`, { key: org.key });
    expect(contact.body.messaging_status).toBe('unavailable');
  });

  it('a refused template gives its price back', async () => {
    const org = await sender(h, { balance: 10, prices: { UTILITY: 3 } });
    const c = await conversation('+15557780404', org);
    const answered = await reply(org.key, c.conversationId, {
      type: 'template',
      template_id: org.template.id,
      variables: { 'body.1': '1' },
    });
    expect(answered.status).toBe(202);
    expect((await h.admin('GET', `/messaging-accounts/${org.account.id}`)).body.balance).toBe(7);
    await drain();
    expect((await h.admin('GET', `/messaging-accounts/${org.account.id}`)).body.balance).toBe(10);
  });
});

describe('hand-offs whose answer was lost', () => {
  it('a marked reply is never sent again: the report with our reference settles it, else handoff_unconfirmed', async () => {
    const org = await sender(h, { balance: 100, prices: { UTILITY: 2 } });
    const a = await conversation(phones(1)[0], org);
    const b = await conversation(phones(1)[0], org);
    const reported = await reply(org.key, a.conversationId, { type: 'text', text: 'answer lost, report came' });
    const unconfirmed = await reply(org.key, b.conversationId, {
      type: 'template',
      template_id: org.template.id,
      variables: { 'body.1': '1' },
    });
    // A worker marks both and dies before the platform's answers are recorded.
    const claimed = await claimReplies(h.database.db, { limit: 10, leaseMs: 1, token: 'dead-worker' });
    expect(claimed.map((row) => row.message_id).sort()).toEqual([reported.body.id, unconfirmed.body.id].sort());
    const later = await reply(org.key, a.conversationId, { type: 'text', text: 'after the lost one' });
    await waitUntil(async () => {
      const row = await h.database.db
        .selectFrom('reply_handoffs')
        .select('lease_until')
        .where('message_id', '=', reported.body.id)
        .executeTakeFirstOrThrow();
      return (row.lease_until as Date).getTime() < Date.now();
    });
    // The marked ones are not claimed again; the conversation's next reply goes once the lease ran out.
    expect(await drain()).toBe(1);
    expect((await messageOf(org.key, a.conversationId, later.body.id)).status).toBe('sent');

    // The platform's report of the first, carrying our callback reference, settles it.
    const platformMessageId = 'wamid.LOSTANSWER1';
    const { rawBody } = buildSignedWebhook(
      [
        {
          kind: 'message_status',
          businessAccountId: org.account.business_account_id,
          phoneNumberId: org.account.numbers[0].phone_number_id,
          platformMessageId,
          status: 'delivered',
          recipient: a.phone,
          timestamp: clock.now(),
          callbackData: `reply|${org.org.id}|${reported.body.id}`,
        },
      ],
      WEBHOOK_APP_SECRET,
    );
    expect((await h.webhook(undefined, { raw: rawBody.toString('utf8') })).status).toBe(200);
    expect(await messageOf(org.key, a.conversationId, reported.body.id)).toMatchObject({
      status: 'delivered',
      platform_message_id: platformMessageId,
      sent_at: expect.any(String),
    });
    // The other fails as handoff_unconfirmed and its price comes back.
    expect(await h.wiring.replies.reconcile()).toBe(1);
    expect(await messageOf(org.key, b.conversationId, unconfirmed.body.id)).toMatchObject({
      status: 'failed',
      error: 'handoff_unconfirmed',
    });
    expect((await h.admin('GET', `/messaging-accounts/${org.account.id}`)).body.balance).toBe(100);
    expect(await h.wiring.replies.runOnce()).toBe(0);
  });
});

describe('the worker is woken', () => {
  it('hands a reply off at once after its 202, with a poll far away', async () => {
    const woken = await startHarness({ unlimited: true, pollMs: 60_000 });
    const worker = woken.wiring.startWorker();
    try {
      const { org, key } = await woken.createOrg();
      const account = await woken.createAccount(org.id);
      const [phone] = phones(1);
      await woken.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from: phone, text: 'hi' });
      const conversationId = (await woken.api('GET', '/v1/conversations', { key })).body.items[0].id;
      const started = Date.now();
      const answered = await woken.api('POST', `/v1/conversations/${conversationId}/messages`, {
        key,
        body: { type: 'text', text: 'quick' },
      });
      expect(answered.status).toBe(202);
      await waitUntil(
        async () => {
          const items = (await woken.api('GET', `/v1/conversations/${conversationId}/messages`, { key })).body.items;
          return items.find((message: any) => message.id === answered.body.id)?.status === 'sent';
        },
        { timeoutMs: 5000 },
      );
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await worker.stop();
      await woken.close();
    }
  });
});

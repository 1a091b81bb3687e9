// decisions D176 (§15, and the same guarantee for broadcasts): a hand-off whose answer was lost ends failed with
// `handoff_unconfirmed` unless the platform's report arrives — also when that report arrives after the reconciler
// failed it: a later `sent`/`delivered`/`read` moves it on and charges it again the price it was admitted at, with its
// event, its contact reached and the counts whole. No other failure is undone, and a later `failed` report changes
// nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedWebhook } from '../../../src/messaging/cloud/webhook-builder.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { claimReplies } from '../../../src/modules/conversations/reply-handoffs.repo.ts';
import { callbackReference } from '../../../src/modules/recipients/recipient-rules.ts';
import { createFanout } from '../../../src/worker/fanout.ts';
import { type Harness, startHarness, WEBHOOK_APP_SECRET } from '../../helpers/harness.ts';
import { balanceOf } from '../../helpers/messages.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [h, receiver] = await Promise.all([
    startHarness({ unlimited: true, fanout: { leaseMs: 200, reconcileAfterMs: 0 } }),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type Org = Awaited<ReturnType<typeof sender>>;

/** The platform's status report, signed as the platform signs it. */
async function report(org: Org, fields: { id: string; status: string; phone: string; callbackData: string }) {
  const { rawBody } = buildSignedWebhook(
    [
      {
        kind: 'message_status',
        businessAccountId: org.account.business_account_id,
        phoneNumberId: org.account.numbers[0].phone_number_id,
        platformMessageId: fields.id,
        status: fields.status as 'sent',
        recipient: fields.phone,
        timestamp: new Date(),
        callbackData: fields.callbackData,
        ...(fields.status === 'failed'
          ? { error: { code: 131026, title: 'undeliverable', reason: 'platform_error' as const } }
          : {}),
      },
    ],
    WEBHOOK_APP_SECRET,
  );
  const response = await h.webhook(undefined, { raw: rawBody.toString('utf8') });
  expect(response.status).toBe(200);
}

let paths = 0;
/** The organization's webhooks of `type` as an integrator's receiver gets them (verified), oldest first. */
async function subscribe(key: string) {
  const path = `/late/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events: ['*'] },
  });
  expect(created.status).toBe(201);
  return async (type: string) => {
    await h.deliveries.drain();
    return receiver
      .at(path)
      .map((request) => verify(created.body.secret, request))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
      .filter((event) => event.type === type)
      .map((event) => event.data);
  };
}

/** A fan-out whose hand-offs named by `lost` lose their answer (the adapter throws): they stay `sending`, marked. */
const losingAnswers = (lost: (callbackData: string | undefined) => boolean) =>
  createFanout({
    moves: broadcastMoves,
    db: h.database.db,
    log: h.app.log,
    options: { perNumberPerSecond: null, reconcileAfterMs: 0 },
    platform: {
      ...h.messaging.platform,
      sendTemplate: async (message) => {
        if (lost(message.callbackData)) throw new Error('reset');
        return h.messaging.platform.sendTemplate(message);
      },
    },
  });

/** The messages of the contact's conversations, oldest first, as the conversation API shows them. */
async function conversationMessages(org: Org, phone: string) {
  const contact = await h.database.db
    .selectFrom('contacts')
    .select('id')
    .where('org_id', '=', org.org.id)
    .where('phone', '=', phone)
    .executeTakeFirstOrThrow();
  const conversations = await h.api('GET', `/v1/conversations?contact_id=${contact.id}`, { key: org.key });
  expect(conversations.status).toBe(200);
  const messages = [];
  for (const conversation of conversations.body.items) {
    const page = await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key: org.key });
    expect(page.status).toBe(200);
    messages.push(...page.body.items);
  }
  return messages.map(({ direction, type, platform_message_id, status }) => ({
    direction,
    type,
    platform_message_id,
    status,
  }));
}

/** A send of the organization's template to one phone. */
const sendOne = (org: Org, phone: string) =>
  h.api('POST', `/v1/templates/${org.template.id}/send`, {
    key: org.key,
    body: { recipients: recipientsFor([phone]) },
  });

describe('a broadcast recipient whose answer is lost, then reported', () => {
  it('joins its contact’s conversation from the report that settles it while still sending', async () => {
    const org = await sender(h, { balance: 100 });
    const [phone] = phones(1) as [string];
    const send = await sendOne(org, phone);
    expect(send.status).toBe(202);
    const fanout = losingAnswers(() => true);
    expect(await fanout.runOnce()).toBe(1);
    expect(await conversationMessages(org, phone)).toEqual([]);
    // Still `sending` (the lease has not run out): the report settles the hand-off and brings the message.
    const callbackData = callbackReference(org.org.id, send.body.id, 0);
    await report(org, { id: 'wamid.EARLY1', status: 'sent', phone, callbackData });
    expect(await conversationMessages(org, phone)).toEqual([
      { direction: 'outbound', type: 'template', platform_message_id: 'wamid.EARLY1', status: 'sent' },
    ]);
    await report(org, { id: 'wamid.EARLY1', status: 'delivered', phone, callbackData });
    expect(await conversationMessages(org, phone)).toEqual([
      { direction: 'outbound', type: 'template', platform_message_id: 'wamid.EARLY1', status: 'delivered' },
    ]);
  });
});

describe('a broadcast recipient failed handoff_unconfirmed, then reported', () => {
  it('moves on, charged again at its admitted price, with its event, contact and counts; other failures stay', async () => {
    const org = await sender(h, { balance: 100, prices: { UTILITY: 3 } });
    const eventsOf = await subscribe(org.key);
    const [lost, other] = phones(2) as [string, string];
    const list = [lost, other, '+15557770500']; // …0500: the sandbox refuses it (platform_error)
    const send = await h.api('POST', `/v1/templates/${org.template.id}/send`, {
      key: org.key,
      body: { recipients: recipientsFor(list) },
    });
    expect(send.status).toBe(202);
    const broadcastId = send.body.id as string;
    // The hand-off of position 0 loses its answer (the adapter throws): it stays `sending`, marked.
    const fanout = losingAnswers((callbackData) => callbackData === callbackReference(org.org.id, broadcastId, 0));
    expect(await fanout.runOnce()).toBe(3);
    expect(await balanceOf(h, org.account.id)).toBe(94);
    expect(await fanout.reconcile()).toBe(1);
    expect(await balanceOf(h, org.account.id)).toBe(97);
    const view = async () => (await h.api('GET', `/v1/broadcasts/${broadcastId}`, { key: org.key })).body;
    expect(await view()).toMatchObject({ status: 'completed', requested: 3, sent: 1, failed: 2, pending: 0 });
    const listed = async () =>
      (await h.api('GET', `/v1/broadcasts/${broadcastId}/recipients?limit=10`, { key: org.key })).body.items as any[];
    expect((await listed())[0]).toMatchObject({ status: 'failed', error: 'handoff_unconfirmed' });
    const contact = async (phone: string) =>
      h.database.db
        .selectFrom('contacts')
        .select(['messaging_status', 'last_contacted_at'])
        .where('org_id', '=', org.org.id)
        .where('phone', '=', phone)
        .executeTakeFirstOrThrow();
    expect((await contact(lost)).messaging_status).toBe('unverified');

    // The price changes meanwhile; the platform's report of it comes late, carrying our callback reference.
    expect((await h.admin('PATCH', `/messaging-accounts/${org.account.id}`, { prices: { UTILITY: 7 } })).status).toBe(
      200,
    );
    const callbackData = callbackReference(org.org.id, broadcastId, 0);
    await report(org, { id: 'wamid.LATE1', status: 'delivered', phone: lost, callbackData });
    const [moved] = await listed();
    expect(moved).toMatchObject({
      status: 'delivered',
      error: null,
      error_message: null,
      platform_message_id: 'wamid.LATE1',
      delivered_at: expect.any(String),
    });
    // Charged again the price it was admitted at (3), even though the price has changed since.
    expect(await balanceOf(h, org.account.id)).toBe(94);
    const row = await h.database.db
      .selectFrom('broadcast_recipients')
      .select(['charged', 'unconfirmed_charge', 'failed_at', 'error_code', 'sent_at'])
      .where('org_id', '=', org.org.id)
      .where('broadcast_id', '=', broadcastId)
      .where('position', '=', 0)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ unconfirmed_charge: null, failed_at: null, error_code: null });
    expect(Number(row.charged)).toBe(3);
    expect(row.sent_at).not.toBeNull();
    // requested = sent + failed + pending still; the broadcast does not finish a second time.
    expect(await view()).toMatchObject({ status: 'completed', requested: 3, sent: 2, failed: 1, pending: 0 });
    expect(await eventsOf('broadcast.finished')).toHaveLength(1);
    expect((await contact(lost)).messaging_status).toBe('verified');
    const moves = (await eventsOf('broadcast.recipient.updated')).filter((data) => data.phone === lost);
    expect(moves.map((data) => [data.status, data.error])).toEqual([
      ['failed', 'handoff_unconfirmed'],
      ['delivered', null],
    ]);

    // The contact's conversation has the message, as if the answer had come (one, with the platform's id).
    expect(await conversationMessages(org, lost)).toEqual([
      { direction: 'outbound', type: 'template', platform_message_id: 'wamid.LATE1', status: 'delivered' },
    ]);

    // Forward only from there: read moves it, a late `failed` and a second report change nothing, charge nothing.
    await report(org, { id: 'wamid.LATE1', status: 'read', phone: lost, callbackData });
    await report(org, { id: 'wamid.LATE1', status: 'failed', phone: lost, callbackData });
    await report(org, { id: 'wamid.LATE1', status: 'sent', phone: lost, callbackData });
    expect((await listed())[0]).toMatchObject({ status: 'read' });
    expect(await balanceOf(h, org.account.id)).toBe(94);
    expect(await conversationMessages(org, lost)).toEqual([
      { direction: 'outbound', type: 'template', platform_message_id: 'wamid.LATE1', status: 'read' },
    ]);

    // The refused one (another failure) is not undone by a report naming it.
    await report(org, {
      id: 'wamid.REFUSED',
      status: 'sent',
      phone: '+15557770500',
      callbackData: callbackReference(org.org.id, broadcastId, 2),
    });
    expect((await listed())[2]).toMatchObject({ status: 'failed', error: 'platform_error' });
    expect(await balanceOf(h, org.account.id)).toBe(94);
    expect(await view()).toMatchObject({ sent: 2, failed: 1 });
  });

  it('a late failed report leaves it failed handoff_unconfirmed and refunded', async () => {
    const org = await sender(h, { balance: 10 });
    const [phone] = phones(1) as [string];
    const send = await sendOne(org, phone);
    const fanout = losingAnswers(() => true);
    expect(await fanout.runOnce()).toBe(1);
    expect(await fanout.reconcile()).toBe(1);
    const callbackData = callbackReference(org.org.id, send.body.id, 0);
    await report(org, { id: 'wamid.LATEFAIL', status: 'failed', phone, callbackData });
    const listed = (await h.api('GET', `/v1/broadcasts/${send.body.id}/recipients`, { key: org.key })).body.items;
    expect(listed[0]).toMatchObject({ status: 'failed', error: 'handoff_unconfirmed' });
    expect(await balanceOf(h, org.account.id)).toBe(10);
  });
});

describe('a reply failed handoff_unconfirmed, then reported', () => {
  it('moves on, charged again at its admitted price, with message.updated; the queue forgets it', async () => {
    const org = await sender(h, { balance: 100, prices: { UTILITY: 2 } });
    const eventsOf = await subscribe(org.key);
    const [phone] = phones(1) as [string];
    const channelId = org.account.numbers[0].id as string;
    expect((await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hi' })).status).toBe(
      200,
    );
    const conversationId = (await h.api('GET', '/v1/conversations?limit=10', { key: org.key })).body.items[0]
      .id as string;
    const replied = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key: org.key,
      body: { type: 'template', template_id: org.template.id, variables: { 'body.1': '1' } },
    });
    expect(replied.status).toBe(202);
    expect(await balanceOf(h, org.account.id)).toBe(98);
    // A worker marks it and dies before the platform's answer is recorded; the reconciler fails it, refunded.
    expect(await claimReplies(h.database.db, { limit: 10, leaseMs: 1, token: 'dead-worker' })).toHaveLength(1);
    await waitUntil(async () => (await h.wiring.replies.reconcile()) === 1);
    expect(await balanceOf(h, org.account.id)).toBe(100);
    const messageOf = async () =>
      (await h.api('GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key: org.key })).body.items.find(
        (message: any) => message.id === replied.body.id,
      );
    expect(await messageOf()).toMatchObject({ status: 'failed', error: 'handoff_unconfirmed' });
    expect(await h.wiring.replies.runOnce()).toBe(0); // never sent again

    const callbackData = `reply|${org.org.id}|${replied.body.id}`;
    await report(org, { id: 'wamid.LATEREPLY', status: 'sent', phone, callbackData });
    expect(await messageOf()).toMatchObject({
      status: 'sent',
      error: null,
      error_message: null,
      failed_at: null,
      platform_message_id: 'wamid.LATEREPLY',
      sent_at: expect.any(String),
    });
    expect(await balanceOf(h, org.account.id)).toBe(98);
    await report(org, { id: 'wamid.LATEREPLY', status: 'read', phone, callbackData });
    await report(org, { id: 'wamid.LATEREPLY', status: 'failed', phone, callbackData });
    expect(await messageOf()).toMatchObject({ status: 'read', delivered_at: expect.any(String) });
    expect(await balanceOf(h, org.account.id)).toBe(98);
    const updates = (await eventsOf('message.updated')).filter((data) => data.id === replied.body.id);
    expect(updates.map((data) => [data.status, data.error])).toEqual([
      ['failed', 'handoff_unconfirmed'],
      ['sent', null],
      ['read', null],
    ]);
    const left = await h.database.db
      .selectFrom('reply_handoffs')
      .select('state')
      .where('org_id', '=', org.org.id)
      .execute();
    expect(left).toEqual([]);
    expect(await h.wiring.replies.runOnce()).toBe(0);
  });

  it('a reply refused by the platform is not undone by a report naming it', async () => {
    const org = await sender(h, { balance: 100 });
    const phone = '+15557770500';
    const channelId = org.account.numbers[0].id as string;
    await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hi' });
    const conversationId = (await h.api('GET', '/v1/conversations?limit=10', { key: org.key })).body.items[0]
      .id as string;
    const replied = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key: org.key,
      body: { type: 'text', text: 'hello' },
    });
    expect(replied.status).toBe(202);
    await h.wiring.replies.runOnce();
    const messageOf = async () =>
      (await h.api('GET', `/v1/conversations/${conversationId}/messages?limit=100`, { key: org.key })).body.items.find(
        (message: any) => message.id === replied.body.id,
      );
    const refused = await messageOf();
    expect(refused.status).toBe('failed');
    await report(org, {
      id: 'wamid.NOTUNDONE',
      status: 'sent',
      phone,
      callbackData: `reply|${org.org.id}|${replied.body.id}`,
    });
    expect(await messageOf()).toMatchObject({ status: 'failed', error: refused.error });
  });
});

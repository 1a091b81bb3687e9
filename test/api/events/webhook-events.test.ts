// The events of decisions §11 caused by messaging: contacts made by sends and inbound messages, template reviews and
// category changes, every recipient move, a broadcast's end, inbound messages. Each is checked as an integrator's
// receiver sees it (a real HTTP server verifying with `standardwebhooks`) against what the API answers.
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../../src/db/schema.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { contactsForPhones } from '../../../src/modules/contacts/contact-intake.ts';
import { finishEndedBroadcasts, recordRecipientMoves } from '../../../src/modules/recipients/recipient-events.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { approvedTemplate, phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [h, receiver] = await Promise.all([startHarness({ unlimited: true }), startWebhookReceiver()]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

let paths = 0;
async function endpoint(key: string, types: string[] = ['*']) {
  const path = `/events/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events: types },
  });
  expect(created.status).toBe(201);
  const { secret } = created.body as { secret: string };
  /** Every event delivered so far, verified as a receiver would, oldest first. */
  const events = async () => {
    await h.deliveries.drain();
    return receiver
      .at(path)
      .map((request) => verify(secret, request))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  };
  return { id: created.body.id as string, events };
}
const ofType = (events: any[], type: string) => events.filter((event) => event.type === type);
const send = (key: string, templateId: string, list: string[]) =>
  h.api('POST', `/v1/templates/${templateId}/send`, { key, body: { recipients: recipientsFor(list) } });
/** The listed recipients as events carry them: the list also names each contact (D242), an event does not. */
const recipientsOf = async (key: string, broadcastId: string) =>
  ((await h.api('GET', `/v1/broadcasts/${broadcastId}/recipients?limit=100`, { key })).body.items as any[]).map(
    ({ contact: _contact, ...recipient }) => recipient,
  );

describe('broadcast events', () => {
  it('a send to new phones: contact.created, a recipient event per move, broadcast.finished once as completed', async () => {
    const { key, template } = await sender(h);
    const hook = await endpoint(key);
    const list = phones(3);
    const response = await send(key, template.id, list);
    expect(response.status).toBe(202);
    await h.fanout.drain();
    const broadcastId = response.body.id as string;
    let events = await hook.events();

    // contact.created: the Contact as GET /v1/contacts/{id} returned it when it was made (the send has since made
    // it `verified` and recorded when it was contacted).
    const created = ofType(events, 'contact.created');
    expect(created.map((event) => event.data.phone).sort()).toEqual([...list].sort());
    for (const event of created) {
      const now = (await h.api('GET', `/v1/contacts/${event.data.id}`, { key })).body;
      expect(event.data).toEqual({
        ...now,
        messaging_status: 'unverified',
        last_contacted_at: null,
        updated_at: event.data.updated_at,
      });
      expect(event.data.origin).toBe('API');
    }

    // One `sent` event per recipient, its data the recipient as the list shows it with broadcast_id.
    const listed = await recipientsOf(key, broadcastId);
    const sent = ofType(events, 'broadcast.recipient.updated');
    expect(sent).toHaveLength(3);
    expect(sent.map((event) => event.data).sort((a, b) => a.phone.localeCompare(b.phone))).toEqual(
      listed
        .map((item) => ({ ...item, broadcast_id: broadcastId }))
        .sort((a: any, b: any) => a.phone.localeCompare(b.phone)),
    );
    for (const event of sent) expect(event.data.platform_message_id).toEqual(expect.any(String));

    const finished = ofType(events, 'broadcast.finished');
    expect(finished).toHaveLength(1);
    expect(finished[0].data).toEqual((await h.api('GET', `/v1/broadcasts/${broadcastId}`, { key })).body);
    expect(finished[0].data).toMatchObject({ status: 'completed', sent: 3, pending: 0 });

    // Status reports: delivered, then read, each an event; a stale report none; the broadcast does not finish again.
    const target = listed[0];
    const report = (status: string) =>
      h.admin('POST', `/sandbox/messages/${target.platform_message_id}/status`, { status });
    expect((await report('delivered')).status).toBe(200);
    expect((await report('read')).status).toBe(200);
    expect((await report('delivered')).status).toBe(200);
    events = await hook.events();
    const moves = ofType(events, 'broadcast.recipient.updated').filter((event) => event.data.phone === target.phone);
    expect(moves.map((event) => event.data.status)).toEqual(['sent', 'delivered', 'read']);
    const after = (await recipientsOf(key, broadcastId)).find((item) => item.phone === target.phone);
    expect(moves[2].data).toEqual({ ...after, broadcast_id: broadcastId });
    expect(ofType(events, 'broadcast.finished')).toHaveLength(1);
  });

  it('refusals and failure reports are failed recipient events; the end is one broadcast.finished', async () => {
    const { key, template } = await sender(h);
    const hook = await endpoint(key, ['broadcast.recipient.updated', 'broadcast.finished']);
    const [good] = phones(1);
    const response = await send(key, template.id, [good as string, '+15557770404', '+15557770500']);
    await h.fanout.drain();
    const broadcastId = response.body.id as string;
    let events = await hook.events();
    // Subscribed to two types only: no contact.created reaches this endpoint.
    expect(new Set(events.map((event) => event.type))).toEqual(
      new Set(['broadcast.recipient.updated', 'broadcast.finished']),
    );
    const byPhone = new Map(
      ofType(events, 'broadcast.recipient.updated').map((event) => [event.data.phone, event.data]),
    );
    expect(byPhone.get(good)?.status).toBe('sent');
    expect(byPhone.get('+15557770404')).toMatchObject({ status: 'failed', error: expect.stringContaining('not_on') });
    expect(byPhone.get('+15557770500')).toMatchObject({ status: 'failed', error: expect.any(String) });
    const listed = await recipientsOf(key, broadcastId);
    for (const item of listed) expect(byPhone.get(item.phone)).toEqual({ ...item, broadcast_id: broadcastId });
    expect(ofType(events, 'broadcast.finished').map((event) => event.data.status)).toEqual(['completed']);

    // A failure report after `sent`: one more event, no second end.
    const sentItem = listed.find((item) => item.phone === good);
    await h.admin('POST', `/sandbox/messages/${sentItem.platform_message_id}/status`, {
      status: 'failed',
      error: 'expired',
    });
    events = await hook.events();
    const last = ofType(events, 'broadcast.recipient.updated').filter((event) => event.data.phone === good);
    expect(last.map((event) => event.data.status)).toEqual(['sent', 'failed']);
    expect(ofType(events, 'broadcast.finished')).toHaveLength(1);
  });

  it('cancel and a stop for balance each emit broadcast.finished with that status, once', async () => {
    const cancelled = await sender(h);
    const cancelHook = await endpoint(cancelled.key, ['broadcast.finished']);
    const first = await send(cancelled.key, cancelled.template.id, phones(4));
    const answer = await h.api('POST', `/v1/broadcasts/${first.body.id}/cancel`, { key: cancelled.key });
    expect(answer.status).toBe(200);
    await h.fanout.drain();
    const cancelEvents = await cancelHook.events();
    expect(cancelEvents).toHaveLength(1);
    expect(cancelEvents[0].data).toEqual(answer.body);
    expect(cancelEvents[0].data.status).toBe('cancelled');

    const poor = await sender(h, { balance: 2 });
    const poorHook = await endpoint(poor.key, ['broadcast.finished', 'broadcast.recipient.updated']);
    const second = await send(poor.key, poor.template.id, phones(5));
    await h.fanout.drain();
    await h.admin('PATCH', `/messaging-accounts/${poor.account.id}`, { balance: 50 });
    await h.fanout.drain();
    const poorEvents = await poorHook.events();
    expect(ofType(poorEvents, 'broadcast.recipient.updated')).toHaveLength(2);
    const ends = ofType(poorEvents, 'broadcast.finished');
    expect(ends).toHaveLength(1);
    // The Broadcast at the moment it stopped: the two paid hand-offs were still under way (they finish after).
    const now = (await h.api('GET', `/v1/broadcasts/${second.body.id}`, { key: poor.key })).body;
    expect(now).toMatchObject({ status: 'stopped_low_balance', sent: 2, pending: 3 });
    expect(ends[0].data).toEqual({ ...now, sent: 0, pending: 5 });
  });

  it('emits broadcast.finished exactly once while two workers share a fan-out', async () => {
    const second = await startHarness({ unlimited: true, database: h.database });
    try {
      const { key, template } = await sender(h);
      const hook = await endpoint(key, ['broadcast.finished', 'broadcast.recipient.updated']);
      const response = await send(key, template.id, phones(60));
      await Promise.all([h.fanout.drain(), second.fanout.drain(), h.fanout.drain()]);
      const events = await hook.events();
      expect(ofType(events, 'broadcast.recipient.updated')).toHaveLength(60);
      const ends = ofType(events, 'broadcast.finished');
      expect(ends).toHaveLength(1);
      expect(ends[0].data).toMatchObject({ id: response.body.id, status: 'completed', sent: 60, pending: 0 });
    } finally {
      await second.app.close();
    }
  });
});

describe('broadcast.finished under concurrency', () => {
  it('two transactions that each move one of the last recipients finish the broadcast once', async () => {
    const { org, key, template } = await sender(h);
    const hook = await endpoint(key, ['broadcast.finished']);
    const broadcastId = (await send(key, template.id, phones(2))).body.id as string;
    const move = async (trx: Kysely<DB>, position: number) => {
      await sql`update broadcast_recipients set status = 'failed', error = 'test', failed_at = now()
        where org_id = ${org.id} and broadcast_id = ${broadcastId} and position = ${position}`.execute(trx);
      await recordRecipientMoves(trx, [{ org_id: org.id, broadcast_id: broadcastId, position }], broadcastMoves);
    };
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let moved = () => {};
    const firstMoved = new Promise<void>((resolve) => {
      moved = resolve;
    });
    // The first transaction moves its recipient and stays open; the second moves the other one meanwhile. Each
    // sees the other's recipient still pending (D359: the end check reads without the broadcast's lock), so neither
    // ends it: the worker's sweep does, once. On PGlite (one session) the second waits for the first and ends it.
    const first = h.database.db.transaction().execute(async (trx) => {
      await move(trx, 0);
      moved();
      await held;
    });
    await firstMoved;
    const second = h.database.db.transaction().execute((trx) => move(trx, 1));
    if (h.database.kind === 'pglite') {
      await waitUntil(async () => h.database.poolStats().waiting > 0, {
        message: 'the second transaction waiting for the session',
      });
    } else {
      await second; // it never waits for the first
    }
    release();
    await Promise.all([first, second]);
    await finishEndedBroadcasts(h.database.db, broadcastMoves, org.id);
    expect(await finishEndedBroadcasts(h.database.db, broadcastMoves, org.id)).toBe(0);
    const ends = await hook.events();
    expect(ends).toHaveLength(1);
    expect(ends[0].data).toMatchObject({ id: broadcastId, status: 'completed', failed: 2, pending: 0 });
  });
});

describe('inbound messages', () => {
  it('a message from a new phone: contact.created and message.received, as the API shows them', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const hook = await endpoint(key);
    const [from] = phones(1);
    const inbound = await h.admin('POST', '/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from,
      text: 'Hello there',
    });
    expect(inbound.status).toBe(200);
    const events = await hook.events();
    expect(events.map((event) => event.type)).toEqual(['contact.created', 'message.received']);
    const contact = (await h.api('GET', `/v1/contacts/${events[0].data.id}`, { key })).body;
    expect(events[0].data).toEqual(contact);
    expect(contact).toMatchObject({ phone: from, origin: 'OTHER' });
    const conversation = (await h.api('GET', '/v1/conversations', { key })).body.items[0];
    const messages = (await h.api('GET', `/v1/conversations/${conversation.id}/messages`, { key })).body.items;
    expect(events[1].data).toEqual(messages[0]);
    expect(events[1].data).toMatchObject({
      conversation_id: conversation.id,
      contact_id: contact.id,
      channel_id: account.numbers[0].id,
      direction: 'inbound',
      text: 'Hello there',
    });

    // A second message from the known contact: no contact event, one more message.
    await h.admin('POST', '/sandbox/inbound', { channel_id: account.numbers[0].id, from, text: 'again' });
    const more = await hook.events();
    expect(more.map((event) => event.type)).toEqual(['contact.created', 'message.received', 'message.received']);
  });
});

describe('template events', () => {
  it('template.status_updated after a review result and after a category change, with the Template', async () => {
    const { org, key } = await h.createOrg();
    await h.createAccount(org.id);
    const hook = await endpoint(key, ['template.status_updated']);
    const template = await approvedTemplate(h, key);
    let events = await hook.events();
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual(template);
    expect(events[0].data.status).toBe('APPROVED');

    await h.admin('POST', `/sandbox/templates/${template.id}/review`, { event: 'APPROVED', new_category: 'MARKETING' });
    events = await hook.events();
    const latest = (await h.api('GET', `/v1/templates/${template.id}`, { key })).body;
    expect(latest.category).toBe('MARKETING');
    expect(events.at(-1).data).toEqual(latest);
  });
});

describe('the outbox', () => {
  it('a rolled-back change emits nothing', async () => {
    const { org, key } = await h.createOrg();
    const hook = await endpoint(key);
    const [phone] = phones(1);
    await expect(
      h.database.db.transaction().execute(async (trx) => {
        const made = await contactsForPhones(trx, org.id, [{ phone: phone as string }], { origin: 'API' });
        expect(made.get(phone as string)?.created).toBe(true);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await hook.events()).toEqual([]);
    const stored = await h.database.db.selectFrom('webhook_events').select('id').where('org_id', '=', org.id).execute();
    expect(stored).toEqual([]);
    // The same intake committed emits its event.
    await h.database.db.transaction().execute(async (trx) => {
      await contactsForPhones(trx, org.id, [{ phone: phone as string }], { origin: 'API' });
    });
    expect((await hook.events()).map((event) => event.type)).toEqual(['contact.created']);
  });

  it('a rolled-back recipient move emits neither its event nor the broadcast’s end', async () => {
    const { org, key, template } = await sender(h);
    const hook = await endpoint(key, ['broadcast.recipient.updated', 'broadcast.finished']);
    const broadcastId = (await send(key, template.id, phones(1))).body.id as string;
    const fail = (trx: Kysely<DB>) =>
      sql`update broadcast_recipients set status = 'failed', error = 'test', failed_at = now()
        where org_id = ${org.id} and broadcast_id = ${broadcastId} and position = 0`
        .execute(trx)
        .then(() =>
          recordRecipientMoves(trx, [{ org_id: org.id, broadcast_id: broadcastId, position: 0 }], broadcastMoves),
        );
    await expect(
      h.database.db.transaction().execute(async (trx) => {
        await fail(trx);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await hook.events()).toEqual([]);
    const broadcast = await h.database.db
      .selectFrom('broadcasts')
      .select('finished_at')
      .where('org_id', '=', org.id)
      .where('id', '=', broadcastId)
      .executeTakeFirstOrThrow();
    expect(broadcast.finished_at).toBeNull();
    await h.database.db.transaction().execute(fail);
    expect((await hook.events()).map((event) => [event.type, event.data.status]).sort()).toEqual([
      ['broadcast.finished', 'completed'],
      ['broadcast.recipient.updated', 'failed'],
    ]);
  });
});

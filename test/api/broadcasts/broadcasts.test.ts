// Broadcasts after the request: idempotency, the fan-out's outcomes, status reports, balance, cancel, reads, and
// the count invariant while a fan-out runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey, completeIdempotencyKey, requestHash } from '../../../src/http/idempotency.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { claimBatch } from '../../../src/modules/recipients/claim-candidates.ts';
import { chargeClaims } from '../../../src/modules/recipients/claim-charge.ts';
import { recordedEvents } from '../../helpers/events.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { paceLoop, waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const send = (key: string, templateId: string, body: unknown, headers: Record<string, string> = {}) =>
  h.api('POST', `/v1/templates/${templateId}/send`, { key, body, headers });

const broadcastCount = async (orgId: string) =>
  Number(
    (
      await h.database.db
        .selectFrom('broadcasts')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('Idempotency-Key', () => {
  it('returns the original broadcast for the same key and body, and 422 for another body', async () => {
    const { org, key, template } = await sender(h);
    const body = { recipients: recipientsFor(phones(2)) };
    const first = await send(key, template.id, body, { 'idempotency-key': 'order-1' });
    expect(first.status).toBe(202);
    const again = await send(key, template.id, body, { 'idempotency-key': 'order-1' });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await send(
      key,
      template.id,
      { recipients: recipientsFor(phones(1)) },
      { 'idempotency-key': 'order-1' },
    );
    expect(other.status).toBe(422);
    expect(other.body.detail).toEqual({ code: 'idempotency_key_reused' });
    expect(await broadcastCount(org.id)).toBe(1);
  });

  it('makes exactly one broadcast from twenty concurrent requests with one key', async () => {
    const { org, key, template } = await sender(h);
    const body = { recipients: recipientsFor(phones(3)) };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => send(key, template.id, body, { 'idempotency-key': 'burst' })),
    );
    const accepted = responses.filter((response) => response.status === 202);
    const inFlight = responses.filter((response) => response.status === 409);
    expect(accepted.length + inFlight.length).toBe(20);
    expect(new Set(accepted.map((response) => response.body.id)).size).toBe(1);
    for (const response of inFlight) expect(response.body.detail).toEqual({ code: 'idempotency_key_in_flight' });
    expect(await broadcastCount(org.id)).toBe(1);
  });

  it('is per organization, and a refused request releases its key', async () => {
    const first = await sender(h);
    const second = await sender(h);
    const body = { recipients: recipientsFor(phones(1)) };
    const a = await send(first.key, first.template.id, body, { 'idempotency-key': 'shared' });
    const b = await send(second.key, second.template.id, body, { 'idempotency-key': 'shared' });
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.id).not.toBe(b.body.id);

    const refused = await send(
      first.key,
      first.template.id,
      { recipients: [{ phone: phones(1)[0] }] },
      { 'idempotency-key': 'fix-me' },
    );
    expect(refused.status).toBe(422);
    const fixed = await send(
      first.key,
      first.template.id,
      { recipients: recipientsFor(phones(1)) },
      { 'idempotency-key': 'fix-me' },
    );
    expect(fixed.status).toBe(202);
  });
});

describe('Idempotency-Key after a request died', () => {
  it('is taken over once its lock runs out, and the old request can no longer complete it', async () => {
    const { org, key, template } = await sender(h);
    const body = { recipients: recipientsFor(phones(1)) };
    const hash = requestHash({ template_id: template.id, body });
    const stale = await claimIdempotencyKey(h.database.db, org.id, 'dead-request', hash);
    expect(stale.kind).toBe('new');
    expect((await send(key, template.id, body, { 'idempotency-key': 'dead-request' })).status).toBe(409);
    await h.database.db
      .updateTable('idempotency_keys')
      .set({ locked_until: new Date(Date.now() - 1000) })
      .where('org_id', '=', org.id)
      .execute();
    const taken = await send(key, template.id, body, { 'idempotency-key': 'dead-request' });
    expect(taken.status).toBe(202);
    if (stale.kind !== 'new') throw new Error('expected a new claim');
    await expect(
      h.database.db
        .transaction()
        .execute((trx) => completeIdempotencyKey(trx, org.id, { key: 'dead-request', token: stale.token }, 'bc_old')),
    ).rejects.toMatchObject({ status: 409 });
    const replay = await send(key, template.id, body, { 'idempotency-key': 'dead-request' });
    expect(replay.body.id).toBe(taken.body.id);
    expect(await broadcastCount(org.id)).toBe(1);
  });
});

describe('the fan-out', () => {
  it('records platform failures: not on the network makes the contact unavailable; a generic error does not; neither is charged', async () => {
    const { org, key, account, template } = await sender(h);
    const [good] = phones(1);
    const list = [good as string, '+15557770404', '+15557770500'];
    const response = await send(key, template.id, { recipients: recipientsFor(list) });
    await h.fanout.drain();
    const broadcast = (await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body;
    expect(broadcast).toMatchObject({ status: 'completed', sent: 1, failed: 2, pending: 0 });
    const recipients = (await h.api('GET', `/v1/broadcasts/${response.body.id}/recipients?status=failed`, { key }))
      .body;
    expect(recipients.total_count).toBe(2);
    expect(recipients.items.map((item: { error: string }) => item.error)).toEqual([
      expect.stringContaining('not_on_network'),
      expect.any(String),
    ]);
    const statuses = await h.database.db
      .selectFrom('contacts')
      .select(['phone', 'messaging_status'])
      .where('org_id', '=', org.id)
      .execute();
    const byPhone = Object.fromEntries(statuses.map((row) => [row.phone, row.messaging_status]));
    expect(byPhone).toEqual({
      [good as string]: 'verified',
      '+15557770404': 'unavailable',
      '+15557770500': 'unverified',
    });
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(99);
    const metrics = (await h.app.inject('/metrics')).body;
    expect(metrics).toMatch(/fanout_handoffs_total\{outcome="sent"\} [1-9]/);
    expect(metrics).toMatch(/fanout_handoffs_total\{outcome="failed"\} [1-9]/);
  });

  it('stops a broadcast as stopped_low_balance when the balance cannot pay the next message', async () => {
    const { key, account, template } = await sender(h, { balance: 2 });
    const response = await send(key, template.id, { recipients: recipientsFor(phones(5)) });
    expect(response.status).toBe(202);
    await h.fanout.drain();
    const broadcast = (await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body;
    expect(broadcast).toMatchObject({ status: 'stopped_low_balance', requested: 5, sent: 2, failed: 0, pending: 3 });
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}/recipients`, { key })).body.total_count).toBe(2);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(0);
    const cancel = await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key });
    expect(cancel.status).toBe(409);
    expect(cancel.body.detail.code).toBe('broadcast_not_cancellable');
    // Topping up does not restart a stopped broadcast.
    await h.admin('PATCH', `/messaging-accounts/${account.id}`, { balance: 50 });
    expect(await h.fanout.drain()).toBe(0);
  });

  it('resumes a broadcast stopped by the balance once a top-up pays a message, and it finishes again (D227)', async () => {
    const { org, key, account, template } = await sender(h, { balance: 2 });
    const hook = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['broadcast.finished'] },
    });
    expect(hook.status).toBe(201);
    const response = await send(key, template.id, { recipients: recipientsFor(phones(5)) });
    expect(response.status).toBe(202);
    const id = response.body.id as string;
    await h.fanout.drain();
    const view = async () => (await h.api('GET', `/v1/broadcasts/${id}`, { key })).body;
    expect(await view()).toMatchObject({ status: 'stopped_low_balance', sent: 2, pending: 3 });
    const resume = () => h.api('POST', `/v1/broadcasts/${id}/resume`, { key });
    // Nothing to pay with: 402, and it stays stopped.
    const unpaid = await resume();
    expect(unpaid.status).toBe(402);
    expect(unpaid.body.detail).toEqual({ code: 'messaging_insufficient_balance', balance: 0, price: 1 });
    expect(await view()).toMatchObject({ status: 'stopped_low_balance', pending: 3 });
    expect(await h.fanout.drain()).toBe(0);

    // A top-up of one message more: it goes on, and stops again after that message.
    await h.admin('PATCH', `/messaging-accounts/${account.id}`, { balance: 1 });
    const resumed = await resume();
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'in_progress', status_reason: null, sent: 2, pending: 3 });
    await h.fanout.drain();
    expect(await view()).toMatchObject({ status: 'stopped_low_balance', sent: 3, pending: 2 });
    await h.admin('PATCH', `/messaging-accounts/${account.id}`, { balance: 10 });
    expect((await resume()).status).toBe(200);
    await h.fanout.drain();
    const done = await view();
    expect(done).toMatchObject({ status: 'completed', sent: 5, failed: 0, pending: 0 });
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(8);
    // Each stop and the completion announced its end, once each.
    const finished = await recordedEvents(h, org.id, 'broadcast.finished');
    expect(finished.map((event) => event.status)).toEqual(['stopped_low_balance', 'stopped_low_balance', 'completed']);
    const again = await resume();
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatchObject({ code: 'broadcast_not_resumable', status: 'completed' });
  });

  it('charges once when a claim dies before its hand-offs and the rows are claimed again', async () => {
    const { org, key, account, template } = await sender(h, { balance: 10 });
    const response = await send(key, template.id, { recipients: recipientsFor(phones(3)) });
    // A worker claims (and reserves the price of) every row, then dies before handing any off.
    const claimed = await h.database.db.transaction().execute(async (trx) => {
      const rows = await claimBatch(trx, org.id, {
        limit: 10,
        leaseMs: 50,
        token: 'dead-worker',
      });
      return chargeClaims(trx, rows, {
        perNumberPerSecond: null,
        leaseMs: 50,
        token: 'dead-worker',
        moves: broadcastMoves,
      });
    });
    expect(claimed).toHaveLength(3);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(7);
    // The dead worker's lease runs out (the rows are claimable again): wait for that, not for a fixed time.
    await waitUntil(
      async () =>
        (
          await h.database.db
            .selectFrom('broadcast_recipients')
            .select((eb) => eb.fn.countAll<number>().as('held'))
            .where('broadcast_id', '=', response.body.id)
            .where('lease_until', '>', new Date())
            .executeTakeFirstOrThrow()
        ).held === 0,
      { message: 'the dead claim’s lease to run out' },
    );
    expect(await h.fanout.drain()).toBe(3);
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body).toMatchObject({
      sent: 3,
      pending: 0,
    });
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(7);
  });

  it('caps hand-offs per number per second', async () => {
    const capped = await startHarness({ unlimited: true, database: h.database, fanout: { perNumberPerSecond: 4 } });
    try {
      const { key, template } = await sender(h);
      await send(key, template.id, { recipients: recipientsFor(phones(10)) });
      // One claim happens within one second's window, so it can take at most the cap.
      expect(await capped.fanout.runOnce()).toBeLessThanOrEqual(4);
      const windows = await h.database.db.selectFrom('channel_send_windows').select('count').execute();
      expect(Math.max(...windows.map((window) => window.count))).toBeLessThanOrEqual(4);
    } finally {
      await capped.app.close();
    }
  });
});

describe('status reports', () => {
  it('move recipients forward through delivered and read, never backwards', async () => {
    const { key, template } = await sender(h);
    const response = await send(key, template.id, { recipients: recipientsFor(phones(1)) });
    await h.fanout.drain();
    const url = `/v1/broadcasts/${response.body.id}/recipients`;
    const [recipient] = (await h.api('GET', url, { key })).body.items;
    const report = (status: string) =>
      h.admin('POST', `/sandbox/messages/${recipient.platform_message_id}/status`, { status });
    expect((await report('read')).status).toBe(200);
    let item = (await h.api('GET', url, { key })).body.items[0];
    expect(item.status).toBe('read');
    expect(item.read_at).not.toBeNull();
    expect(item.delivered_at).not.toBeNull();
    await report('delivered');
    await report('failed');
    item = (await h.api('GET', url, { key })).body.items[0];
    expect(item.status).toBe('read');
    const broadcast = (await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body;
    expect(broadcast).toMatchObject({ sent: 1, failed: 0, pending: 0, status: 'completed' });
  });

  it('a failure report after sent counts the recipient as failed', async () => {
    const { key, template } = await sender(h);
    const response = await send(key, template.id, { recipients: recipientsFor(phones(2)) });
    await h.fanout.drain();
    const url = `/v1/broadcasts/${response.body.id}/recipients`;
    const [first] = (await h.api('GET', url, { key })).body.items;
    await h.admin('POST', `/sandbox/messages/${first.platform_message_id}/status`, {
      status: 'failed',
      error: 'expired',
    });
    const broadcast = (await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body;
    expect(broadcast).toMatchObject({ sent: 1, failed: 1, pending: 0 });
    expect((await h.api('GET', `${url}?status=failed`, { key })).body.items[0].error).toEqual(expect.any(String));
  });
});

describe('cancel', () => {
  it('abandons the unsent remainder; nothing more is sent; a second cancel is 409', async () => {
    const { key, account, template } = await sender(h);
    const response = await send(key, template.id, { recipients: recipientsFor(phones(6)) });
    const cancelled = await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', requested: 6, sent: 0, failed: 0, pending: 6 });
    expect(await h.fanout.drain()).toBe(0);
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}/recipients`, { key })).body).toMatchObject({
      items: [],
      total_count: 0,
    });
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(100);
    const again = await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatchObject({ code: 'broadcast_not_cancellable', status: 'cancelled' });
  });

  it('is 409 for a completed broadcast and 404 for another organization’s', async () => {
    const { key, template } = await sender(h);
    const response = await send(key, template.id, { recipients: recipientsFor(phones(1)) });
    await h.fanout.drain();
    expect((await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key })).status).toBe(409);
    const other = await h.createOrg();
    expect((await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key: other.key })).status).toBe(404);
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key: other.key })).status).toBe(404);
  });
});

describe('reads', () => {
  it('list broadcasts newest first, filtered by status and template, page by page', async () => {
    const { key, template, account } = await sender(h);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await send(key, template.id, { recipients: recipientsFor(phones(1)) })).body.id);
    await h.api('POST', `/v1/broadcasts/${ids[0]}/cancel`, { key });
    const page1 = await h.api('GET', '/v1/broadcasts?limit=2', { key });
    expect(page1.body.items.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[1]]);
    const page2 = await h.api('GET', `/v1/broadcasts?limit=2&cursor=${page1.body.next_cursor}`, { key });
    expect(page2.body.items.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
    expect(page2.body.next_cursor).toBeNull();
    const cancelled = await h.api('GET', '/v1/broadcasts?status=cancelled', { key });
    expect(cancelled.body.items.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
    const running = await h.api('GET', '/v1/broadcasts?status=in_progress,completed', { key });
    expect(running.body.items).toHaveLength(2);
    expect((await h.api('GET', `/v1/broadcasts?template_id=${template.id}`, { key })).body.items).toHaveLength(3);
    expect((await h.api('GET', '/v1/broadcasts?template_id=tpl_other', { key })).body.items).toHaveLength(0);
    const bad = await h.api('GET', `/v1/broadcasts?status=cancelled&cursor=${page1.body.next_cursor}`, { key });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'cursor']);
    expect((await h.api('GET', '/v1/broadcasts?status=finished', { key })).status).toBe(422);
    // decisions §16 adds `scheduled`, `preparing` and `paused`: none of these sends is one.
    expect((await h.api('GET', '/v1/broadcasts?status=paused,scheduled,preparing', { key })).body.items).toEqual([]);
    void account;
  });

  it('page recipients with limit, status and total_count', async () => {
    const { key, template } = await sender(h);
    const list = [...phones(4), '+15557770404'];
    const response = await send(key, template.id, { recipients: recipientsFor(list) });
    await h.fanout.drain();
    const url = `/v1/broadcasts/${response.body.id}/recipients`;
    const first = await h.api('GET', `${url}?limit=2`, { key });
    expect(first.body.items).toHaveLength(2);
    expect(first.body.total_count).toBe(5);
    const second = await h.api('GET', `${url}?limit=2&cursor=${first.body.next_cursor}`, { key });
    const third = await h.api('GET', `${url}?limit=2&cursor=${second.body.next_cursor}`, { key });
    expect(third.body.next_cursor).toBeNull();
    const seen = [...first.body.items, ...second.body.items, ...third.body.items].map(
      (item: { phone: string }) => item.phone,
    );
    expect(seen).toEqual(list);
    expect((await h.api('GET', `${url}?status=sent`, { key })).body.total_count).toBe(4);
    expect((await h.api('GET', `${url}?status=sent&status=failed`, { key })).body.total_count).toBe(5);
    expect((await h.api('GET', `${url}?limit=0`, { key })).status).toBe(422);
    expect((await h.api('GET', `${url}?limit=201`, { key })).status).toBe(422);
  });

  it('keep sent + failed + pending == requested at every read while a 1,000-recipient fan-out runs', async () => {
    const { key, template } = await sender(h, { limit: 2000, balance: 5000 });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const list = phones(100).map((phone, index) =>
        index % 25 === 0 ? `+1555${String(i).padStart(3, '0')}0404` : phone,
      );
      const response = await send(key, template.id, { recipients: recipientsFor([...new Set(list)]) });
      expect(response.status).toBe(202);
      ids.push(response.body.id);
    }
    let reads = 0;
    let partial = 0;
    const last = new Map<string, number>();
    const check = async () => {
      for (const id of ids) {
        const broadcast = (await h.api('GET', `/v1/broadcasts/${id}`, { key })).body;
        reads += 1;
        expect(broadcast.sent + broadcast.failed + broadcast.pending).toBe(broadcast.requested);
        // Counts only ever grow.
        expect(broadcast.sent + broadcast.failed).toBeGreaterThanOrEqual(last.get(id) ?? 0);
        last.set(id, broadcast.sent + broadcast.failed);
        if (broadcast.pending > 0 && broadcast.pending < broadcast.requested) partial += 1;
      }
    };
    // A reader polls while the fan-out runs batch after batch, and every batch is followed by a full read too.
    let running = true;
    const reader = (async () => {
      while (running) {
        await check();
        await paceLoop(25);
      }
    })();
    try {
      while ((await h.fanout.runOnce()) > 0) await check();
    } finally {
      running = false;
    }
    await reader;
    expect(partial).toBeGreaterThan(0);
    expect(reads).toBeGreaterThan(ids.length * 10);
    const totals = (await h.api('GET', '/v1/broadcasts?limit=10', { key })).body.items;
    expect(
      totals.every((item: { status: string; pending: number }) => item.status === 'completed' && item.pending === 0),
    ).toBe(true);
  }, 120_000);
});

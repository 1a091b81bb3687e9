// Events delivered to webhook endpoints (decisions §11), checked as an integrator's receiver would: a real HTTP
// server on 127.0.0.1 verifying each request with the `standardwebhooks` library. Contact events are recorded in
// the transaction of the change (the outbox); the test ping; secret rotation; the deliveries log and manual retry.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_DEFAULTS } from '../../../src/config.ts';
import { recordEvents } from '../../../src/modules/events/events.ts';
import { pruneHistory } from '../../../src/worker/retention.ts';
import { createWebhookDeliverer } from '../../../src/worker/webhook-deliveries.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { paceLoop, waitUntil } from '../../helpers/wait.ts';
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
async function endpoint(key: string, events: string[] = ['*'], path = `/hooks/${++paths}`) {
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events },
  });
  expect(created.status).toBe(201);
  return { ...created.body, path } as { id: string; secret: string; path: string };
}
const deliveries = async (key: string, endpointId: string, query = '') =>
  (await h.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries${query}`, { key })).body;

describe('contact events', () => {
  it('delivers contact.created, contact.updated and contact.deleted, signed in the Standard Webhooks format', async () => {
    const { key } = await h.createOrg();
    const hook = await endpoint(key);
    const created = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Ada', phone: '+15550101234' } });
    const updated = await h.api('PATCH', `/v1/contacts/${created.body.id}`, { key, body: { city: 'London' } });
    expect((await h.api('DELETE', `/v1/contacts/${created.body.id}`, { key })).status).toBe(204);
    expect(await h.deliveries.drain()).toBe(3);

    const received = receiver.at(hook.path);
    expect(received).toHaveLength(3);
    const events = received.map((request) => verify(hook.secret, request));
    const byType = new Map(events.map((event) => [event.type, event]));
    expect([...byType.keys()].sort()).toEqual(['contact.created', 'contact.deleted', 'contact.updated']);
    // data is the Contact exactly as the API returned it.
    expect(byType.get('contact.created')).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'contact.created',
      created_at: expect.any(String),
      data: created.body,
    });
    expect(byType.get('contact.updated').data).toEqual(updated.body);
    expect(byType.get('contact.deleted').data).toEqual({ id: created.body.id });
    for (const [index, request] of received.entries()) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toBe(events[index].id);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    // A tampered body or another secret does not verify.
    const [first] = received;
    expect(() => verify(hook.secret, { ...(first as any), body: `${first?.body} ` })).toThrow();
    const other = await endpoint(key);
    expect(() => verify(other.secret, first as any)).toThrow();

    const log = await deliveries(key, hook.id);
    expect(log.items).toHaveLength(3);
    expect(log.items[0]).toEqual({
      id: expect.stringMatching(/^whd_/),
      event_id: byType.get('contact.deleted').id,
      event_type: 'contact.deleted',
      status: 'succeeded',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      attempt_history: [
        { attempted_at: expect.any(String), duration_ms: expect.any(Number), status_code: 200, error: null },
      ],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(log.items.map((item: any) => item.event_type)).toEqual([
      'contact.deleted',
      'contact.updated',
      'contact.created',
    ]);
  });

  it('goes to every enabled endpoint subscribed to the type when recorded, and nowhere else', async () => {
    const { key } = await h.createOrg();
    const all = await endpoint(key, ['*']);
    const createdOnly = await endpoint(key, ['contact.created']);
    const deletedOnly = await endpoint(key, ['contact.deleted', 'message.received']);
    const disabled = await endpoint(key, ['*']);
    await h.api('PATCH', `/v1/webhook-endpoints/${disabled.id}`, { key, body: { enabled: false } });
    const stranger = await h.createOrg();
    const strangers = await endpoint(stranger.key, ['*']);

    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Grace' } });
    await h.deliveries.drain();
    expect(receiver.at(all.path)).toHaveLength(1);
    expect(receiver.at(createdOnly.path)).toHaveLength(1);
    expect(receiver.at(deletedOnly.path)).toHaveLength(0);
    expect(receiver.at(disabled.path)).toHaveLength(0);
    expect(receiver.at(strangers.path)).toHaveLength(0);
    // The same event (one webhook-id) to both endpoints.
    expect(receiver.at(all.path)[0]?.headers['webhook-id']).toBe(
      receiver.at(createdOnly.path)[0]?.headers['webhook-id'],
    );
    // Subscribing later does not bring back earlier events.
    await h.api('PATCH', `/v1/webhook-endpoints/${disabled.id}`, { key, body: { enabled: true } });
    await h.deliveries.drain();
    expect(receiver.at(disabled.path)).toHaveLength(0);
    expect((await deliveries(key, disabled.id)).items).toEqual([]);
  });

  it('emits nothing for a change that is refused or rolled back', async () => {
    const { key, org } = await h.createOrg();
    const hook = await endpoint(key);
    await h.api('POST', '/v1/contacts', { key, body: { email: 'taken@example.com' } });
    const duplicate = await h.api('POST', '/v1/contacts', { key, body: { email: 'TAKEN@example.com' } });
    expect(duplicate.status).toBe(409);
    expect((await h.api('POST', '/v1/contacts', { key, body: { first_name: 12 } })).status).toBe(422);
    // A transaction that records events and then fails leaves no trace.
    await expect(
      h.database.db.transaction().execute(async (trx) => {
        await recordEvents(trx, org.id, [{ type: 'contact.deleted', data: { id: 'ct_rolled_back' } }]);
        throw new Error('the change fails after recording its events');
      }),
    ).rejects.toThrow('the change fails');
    await h.deliveries.drain();
    const bodies = receiver.at(hook.path).map((request) => verify(hook.secret, request));
    expect(bodies.map((event) => event.type)).toEqual(['contact.created']);
    const stored = await h.database.db
      .selectFrom('webhook_events')
      .select(['type'])
      .where('org_id', '=', org.id)
      .execute();
    expect(stored.map((row) => row.type)).toEqual(['contact.created']);
  });

  it('records many events in one call, and nothing when no endpoint is subscribed', async () => {
    const { key, org } = await h.createOrg();
    const quiet = await h.database.db
      .transaction()
      .execute((trx) => recordEvents(trx, org.id, [{ type: 'contact.deleted', data: { id: 'ct_1' } }]));
    expect(quiet).toBe(0);
    const hook = await endpoint(key, ['contact.deleted']);
    const queued = await h.database.db.transaction().execute((trx) =>
      recordEvents(
        trx,
        org.id,
        Array.from({ length: 50 }, (_, i) => ({ type: 'contact.deleted' as const, data: { id: `ct_${i}` } })),
      ),
    );
    expect(queued).toBe(50);
    const [events] = await Promise.all([
      h.database.db
        .selectFrom('webhook_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('org_id', '=', org.id)
        .executeTakeFirstOrThrow(),
      h.deliveries.drain(),
    ]);
    expect(events.n).toBe(50);
    await h.deliveries.drain();
    const ids = receiver.at(hook.path).map((request) => verify(hook.secret, request).data.id);
    expect(new Set(ids).size).toBe(50);
  });
});

describe('the test ping', () => {
  it('answers 202 with the delivery and sends a ping to that endpoint alone', async () => {
    const { key } = await h.createOrg();
    const target = await endpoint(key, ['contact.created']);
    const bystander = await endpoint(key, ['*']);
    const answer = await h.api('POST', `/v1/webhook-endpoints/${target.id}/test`, { key });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ event_type: 'ping', status: 'pending', attempts: 0 });
    await h.deliveries.drain();
    const [ping] = receiver.at(target.path);
    expect(verify(target.secret, ping as any)).toEqual({
      id: answer.body.event_id,
      type: 'ping',
      created_at: expect.any(String),
      data: { endpoint_id: target.id },
    });
    expect(receiver.at(bystander.path)).toHaveLength(0);
    await h.api('PATCH', `/v1/webhook-endpoints/${target.id}`, { key, body: { enabled: false } });
    const refused = await h.api('POST', `/v1/webhook-endpoints/${target.id}/test`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.code).toBe('webhook_endpoint_disabled');
  });
});

describe('secret rotation', () => {
  it('signs with both secrets for 24 hours, then with the new one only', async () => {
    const { key, org } = await h.createOrg();
    const hook = await endpoint(key);
    // Delivered before the rotation by the same worker: the secrets it opened then are not the ones it signs with
    // after (a worker keeps endpoints' opened secrets by what is stored).
    await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key });
    await h.deliveries.drain();
    const [before] = receiver.at(hook.path);
    expect(before?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verify(hook.secret, before as any).type).toBe('ping');
    const rotated = (await h.api('POST', `/v1/webhook-endpoints/${hook.id}/rotate-secret`, { key })).body;
    await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key });
    await h.deliveries.drain();
    const [, during] = receiver.at(hook.path);
    expect(during?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verify(rotated.secret, during as any).type).toBe('ping');
    expect(verify(hook.secret, during as any).type).toBe('ping');

    // 24 hours later (the overlap's end, moved to the past).
    const ends = await h.database.db
      .selectFrom('webhook_endpoints')
      .select(sql<number>`extract(epoch from previous_secret_expires_at - updated_at)::int`.as('overlap'))
      .where('org_id', '=', org.id)
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(ends.overlap).toBe(24 * 3600);
    await h.database.db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: sql`now() - interval '1 second'` })
      .where('org_id', '=', org.id)
      .where('id', '=', hook.id)
      .execute();
    await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key });
    await h.deliveries.drain();
    const after = receiver.at(hook.path)[2];
    expect(after?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verify(rotated.secret, after as any).type).toBe('ping');
    expect(() => verify(hook.secret, after as any)).toThrow();
  });
});

describe('the deliveries log', () => {
  it('pages newest first, filters by status, and rejects a foreign cursor', async () => {
    const { key } = await h.createOrg();
    const hook = await endpoint(key, ['contact.created']);
    for (let i = 0; i < 5; i++) await h.api('POST', '/v1/contacts', { key, body: { first_name: `C${i}` } });
    receiver.answer(hook.path, (request) => ({
      status: JSON.parse(request.body).data.first_name === 'C2' ? 500 : 200,
    }));
    await h.deliveries.drain();
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await deliveries(key, hook.id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    const eventIds = seen.map((item) => item.event_id);
    expect(eventIds).toEqual([...eventIds].sort().reverse());
    const pending = await deliveries(key, hook.id, '?status=pending');
    expect(pending.items).toHaveLength(1);
    expect(pending.items[0]).toMatchObject({ attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
    expect((await deliveries(key, hook.id, '?status=succeeded&status=failed')).items).toHaveLength(4);
    expect((await h.api('GET', `/v1/webhook-endpoints/${hook.id}/deliveries?status=lost`, { key })).status).toBe(422);
    const first = await deliveries(key, hook.id, '?limit=2');
    const foreign = await h.api(
      'GET',
      `/v1/webhook-endpoints/${hook.id}/deliveries?status=failed&cursor=${first.next_cursor}`,
      { key },
    );
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0].loc).toEqual(['query', 'cursor']);
  });

  it('retries a delivery now on request: a finished one gets exactly one more attempt', async () => {
    const { key } = await h.createOrg();
    const hook = await endpoint(key);
    const ping = (await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).body;
    await h.deliveries.drain();
    const retried = await h.api('POST', `/v1/webhook-endpoints/${hook.id}/deliveries/${ping.id}/retry`, { key });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: ping.id, status: 'pending', attempts: 1 });
    receiver.answer(hook.path, { status: 503 });
    await h.deliveries.drain();
    const requests = receiver.at(hook.path);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.headers['webhook-id']).toBe(requests[0]?.headers['webhook-id']);
    const read = (await deliveries(key, hook.id)).items[0];
    // One more attempt only: it failed, and is not scheduled again.
    expect(read).toMatchObject({ status: 'failed', attempts: 2, last_status_code: 503, next_attempt_at: null });
    expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/deliveries/whd_nope/retry`, { key })).status).toBe(
      404,
    );
  });
});

describe('several workers', () => {
  it('share the queue without attempting any delivery twice', async () => {
    const { key, org } = await h.createOrg();
    const hook = await endpoint(key, ['contact.deleted']);
    await h.database.db.transaction().execute((trx) =>
      recordEvents(
        trx,
        org.id,
        Array.from({ length: 60 }, (_, i) => ({ type: 'contact.deleted' as const, data: { id: `ct_${i}` } })),
      ),
    );
    receiver.answer(hook.path, { status: 200, delayMs: 5 });
    const workers = [0, 1, 2].map(() =>
      createWebhookDeliverer({
        db: h.database.db,
        log: h.app.log,
        keyring: h.wiring.keyring,
        allowHosts: ['127.0.0.1'],
        options: { batchSize: 7, perEndpointConcurrency: 7 },
      }),
    );
    // Until none is pending: a claim takes nothing of an endpoint whose leases another worker holds (D364).
    const pending = async () =>
      (await deliveries(key, hook.id, '?limit=100&status=pending')).items.length > 0 || undefined;
    const drain = async (worker: (typeof workers)[number]) => {
      let total = 0;
      for (;;) {
        const handled = await worker.runOnce();
        total += handled;
        if (handled === 0 && !(await pending())) return total;
        // Not every few milliseconds: on PGlite the claims of the workers that wait would hold the one event loop.
        if (handled === 0) await paceLoop(50);
      }
    };
    const handled = await Promise.all(workers.map(drain));
    await Promise.all(workers.map((worker) => worker.stop()));
    expect(handled.reduce((sum, count) => sum + count, 0)).toBe(60);
    const ids = receiver.at(hook.path).map((request) => request.headers['webhook-id']);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
    const log = await deliveries(key, hook.id, '?limit=100&status=succeeded');
    expect(log.items).toHaveLength(60);
  });
});

describe('retention', () => {
  it('prunes deliveries finished 30 days ago and their events; keeps pending and recent ones', async () => {
    const { key, org } = await h.createOrg();
    const hook = await endpoint(key);
    for (let i = 0; i < 3; i++) await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key });
    await h.deliveries.drain();
    await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key }); // stays pending
    const [oldest, old] = (await deliveries(key, hook.id)).items.slice(1).reverse();
    // Two of the finished deliveries (and their events) as if 31 days had passed.
    for (const delivery of [oldest, old]) {
      await h.database.db
        .updateTable('webhook_deliveries')
        .set({ updated_at: sql`now() - interval '31 days'` })
        .where('org_id', '=', org.id)
        .where('id', '=', delivery.id)
        .execute();
      await h.database.db
        .updateTable('webhook_events')
        .set({ created_at: sql`now() - interval '31 days'` })
        .where('org_id', '=', org.id)
        .where('id', '=', delivery.event_id)
        .execute();
    }
    const removed = await pruneHistory(h.database.db, new Date(), RETENTION_DEFAULTS);
    expect(removed).toMatchObject({ webhookDeliveries: 2, webhookEvents: 2 });
    const left = (await deliveries(key, hook.id)).items;
    expect(left.map((item: any) => item.status)).toEqual(['pending', 'succeeded']);
    const events = await h.database.db.selectFrom('webhook_events').select('id').where('org_id', '=', org.id).execute();
    expect(events.map((row) => row.id).sort()).toEqual(left.map((item: any) => item.event_id).sort());
  });
});

describe('the poll of an idle queue (D354)', () => {
  it('reports idle with nothing due, claims when work arrives, and is idle while its own attempts are in flight', async () => {
    await h.deliveries.drain();
    expect(await h.deliveries.task.run()).toBe('idle');

    const { key } = await h.createOrg();
    const hook = await endpoint(key, ['contact.created']);
    receiver.answer(hook.path, { status: 200, delayMs: 300 });
    await h.api('POST', '/v1/contacts', { key, body: { phone: '+15550109876' } });
    // Work arrived: the poll claims it and is not idle.
    expect(await h.deliveries.task.run()).toBeUndefined();
    // Its attempt in flight will claim again when recorded (D298): the next poll, claiming nothing, may slow down.
    expect(await h.deliveries.task.run()).toBe('idle');
    await waitUntil(async () => (await deliveries(key, hook.id)).items[0]?.status === 'succeeded', {
      message: 'the attempt recorded',
    });
  });
});

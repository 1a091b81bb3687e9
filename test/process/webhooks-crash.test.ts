// A worker killed with SIGKILL in the middle of webhook deliveries loses none: the leases of its claims run out and
// two restarted workers, sharing one PostgreSQL, deliver every event (at least once; receivers deduplicate by
// `webhook-id`). The receiver is a real HTTP server that verifies each request with `standardwebhooks`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrashRig, startCrashRig } from '../helpers/crash-rig.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const CONTACTS = 60;

describe.skipIf(!onPostgres)('a worker killed mid-delivery', () => {
  let receiver: WebhookReceiver;
  let rig: CrashRig;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    rig = await startCrashRig({
      env: {
        WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_LEASE_MS: '1000',
        WEBHOOK_CONCURRENCY: '6',
        WEBHOOK_ENDPOINT_CONCURRENCY: '6',
      },
    });
  });
  afterAll(async () => {
    await rig?.close();
    await receiver?.close();
  });

  it('delivers every event after the kill', async () => {
    const { call } = rig;
    const { key } = await rig.organization('Crash test');
    const endpoint = (
      await call('POST', '/v1/webhook-endpoints', { url: `${receiver.baseUrl}/crm`, events: ['contact.created'] }, key)
    ).body;
    expect(endpoint.secret).toMatch(/^whsec_/);
    const contacts: string[] = [];
    for (let i = 0; i < CONTACTS; i++) {
      const created = await call('POST', '/v1/contacts', { first_name: `Contact ${i}` }, key);
      expect(created.status).toBe(201);
      contacts.push(created.body.id);
    }
    // A slow receiver, so that the kill lands while attempts are in flight.
    receiver.answer('/crm', { status: 200, delayMs: 300 });

    const first = await rig.startWorker();
    await receiver.waitFor('/crm', 12, 60_000);
    await first.stop('SIGKILL');
    const beforeKill = receiver.at('/crm').length;
    expect(beforeKill).toBeLessThan(CONTACTS);

    receiver.answer('/crm', { status: 200, delayMs: 20 });
    await Promise.all([rig.startWorker(), rig.startWorker()]);

    const delivered = new Set<string>();
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      for (const request of receiver.at('/crm')) delivered.add(verify(endpoint.secret, request).data.id);
      if (delivered.size === CONTACTS) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect([...delivered].sort()).toEqual([...contacts].sort());

    // The log agrees: every delivery succeeded; the ones cut off by the kill took another attempt.
    let log: any = { items: [] };
    for (let i = 0; i < 100; i++) {
      log = (await call('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=200`, undefined, key)).body;
      if (log.items.every((item: any) => item.status === 'succeeded')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(log.items).toHaveLength(CONTACTS);
    expect(log.items.every((item: any) => item.status === 'succeeded')).toBe(true);
    // Deduplicated by webhook-id, the receiver saw each event once. The raw count is higher: the attempts the kill
    // cut off (received, never answered within the dead worker's lifetime) were made again (at least once).
    const ids = receiver.at('/crm').map((request) => request.headers['webhook-id']);
    expect(new Set(ids).size).toBe(CONTACTS);
    expect(ids.length).toBeGreaterThan(CONTACTS);
  });

  it('loses nothing when killed between the answers and the record of their group (D297)', async () => {
    const { call } = rig;
    const { key } = await rig.organization('Crash between answer and record');
    const endpoint = (
      await call(
        'POST',
        '/v1/webhook-endpoints',
        { url: `${receiver.baseUrl}/groups`, events: ['contact.created'] },
        key,
      )
    ).body;
    const total = 300;
    for (let start = 0; start < total; start += 100) {
      const items = Array.from({ length: 100 }, (_, i) => ({ phone: `+1555${String(7_000_000 + start + i)}` }));
      expect((await call('POST', '/v1/contacts/batch-upsert', { match_on: 'phone', items }, key)).status).toBe(200);
    }
    // Answers soon: at any moment some of what the worker holds is answered and waiting for its group's record.
    receiver.answer('/groups', { status: 200, delayMs: 150 });

    const first = await rig.startWorker();
    await receiver.waitFor('/groups', 30, 60_000);
    await first.stop('SIGKILL');
    expect(new Set(receiver.at('/groups').map((request) => request.headers['webhook-id'])).size).toBeLessThan(total);

    await Promise.all([rig.startWorker(), rig.startWorker()]);
    const received = () => new Set(receiver.at('/groups').map((request) => verify(endpoint.secret, request).id));
    const deadline = Date.now() + 90_000;
    while (received().size < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(received().size).toBe(total);

    // The log: nothing pending or failed once the survivors have recorded; each delivery's attempts no more than
    // the requests its event received (an attempt whose record the kill lost was made again).
    const list = async (query: string) =>
      (await call('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?limit=100${query}`, undefined, key)).body;
    for (let i = 0; i < 100 && (await list('&status=pending')).items.length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await list('&status=pending')).items).toEqual([]);
    expect((await list('&status=failed')).items).toEqual([]);
    const requests = new Map<string, number>();
    for (const request of receiver.at('/groups')) {
      const id = String(request.headers['webhook-id']);
      requests.set(id, (requests.get(id) ?? 0) + 1);
    }
    let page = await list('');
    let seen = 0;
    for (;;) {
      for (const item of page.items) {
        expect(item.status).toBe('succeeded');
        expect(item.attempts).toBeGreaterThanOrEqual(1);
        expect(item.attempts).toBeLessThanOrEqual(requests.get(item.event_id) ?? 0);
        seen++;
      }
      if (!page.next_cursor) break;
      page = await list(`&cursor=${page.next_cursor}`);
    }
    expect(seen).toBe(total);
  });
});

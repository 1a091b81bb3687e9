// Attempts recorded in groups (D297) by the statement that also claims the next ones (D298): a group that mixes
// successes and failures keeps the deliveries log exact (one request, one attempt, each with its own outcome), and
// the claim that refills the pool as a group is recorded still holds each endpoint to its in-flight allowance.
import { createServer, type IncomingMessage } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookDeliverer } from '../../../src/worker/webhook-deliveries.ts';
import { startWorker } from '../../../src/worker/worker.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { paceLoop, slowAnswer, waitUntil } from '../../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [h, receiver] = await Promise.all([
    // A failed attempt waits a minute for its retry, so that the log shows the first attempt's outcome.
    startHarness({ unlimited: true, webhooks: { retryScheduleMs: [60_000], perEndpointConcurrency: 6 } }),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

let paths = 0;
async function endpoint(key: string, base = receiver.baseUrl) {
  const path = `/groups/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${base}${path}`, events: ['contact.created'] },
  });
  expect(created.status).toBe(201);
  return { ...created.body, path } as { id: string; secret: string; path: string };
}
const deliveries = async (key: string, endpointId: string) =>
  (await h.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`, { key })).body.items;

async function createContacts(key: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await h.api('POST', '/v1/contacts', { key, body: { first_name: `Group ${i}` } });
    expect(created.status).toBe(201);
    ids.push(created.body.id);
  }
  return ids;
}

describe('outcomes recorded in groups', () => {
  it('a group with failures keeps the log exact: one request, one attempt, each with its own outcome', async () => {
    const { key } = await h.createOrg();
    const healthy = await endpoint(key);
    const broken = await endpoint(key);
    const flaky = await endpoint(key);
    receiver.answer(healthy.path, { status: 200, delayMs: 20 });
    receiver.answer(broken.path, { status: 500, delayMs: 20 });
    // Fails every other event, so that one endpoint's group holds both outcomes.
    receiver.answer(flaky.path, (request) =>
      Number(/Group (\d+)/.exec(request.body)?.[1]) % 2 === 0 ? { status: 200, delayMs: 20 } : { status: 502 },
    );
    const contacts = await createContacts(key, 6);

    // One claim of the 18 deliveries; their answers come back together and are recorded in groups.
    expect(await h.deliveries.runOnce()).toBe(18);

    for (const hook of [healthy, broken, flaky]) {
      const requests = receiver.at(hook.path);
      expect(requests).toHaveLength(6);
      expect(new Set(requests.map((request) => verify(hook.secret, request).data.id))).toEqual(new Set(contacts));
    }
    for (const item of await deliveries(key, healthy.id)) {
      expect(item).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 200, last_error: null });
      expect(item.attempt_history).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
    }
    for (const item of await deliveries(key, broken.id)) {
      expect(item).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
      expect(item.attempt_history).toEqual([expect.objectContaining({ status_code: 500, error: 'HTTP 500' })]);
      expect(Date.parse(item.next_attempt_at)).toBeGreaterThan(Date.now() + 30_000);
    }
    const flakyLog = await deliveries(key, flaky.id);
    expect(flakyLog.map((item: any) => item.status).sort()).toEqual([
      'pending',
      'pending',
      'pending',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    for (const item of flakyLog) {
      expect(item.attempts).toBe(1);
      expect(item.attempt_history).toHaveLength(1);
      expect(item.attempt_history[0].status_code).toBe(item.last_status_code);
    }
    // Nothing is left to attempt now: the failures wait for their retry.
    expect(await h.deliveries.runOnce()).toBe(0);
  });
});

/** Until the receiver has had `count` requests and the endpoint's log shows every delivery succeeded. */
async function untilAllDelivered(key: string, endpointId: string, received: string[], count: number) {
  await waitUntil(() => received.length >= count || undefined, { message: 'every event', timeoutMs: 60_000 });
  await waitUntil(
    async () => (await deliveries(key, endpointId)).every((item: any) => item.status === 'succeeded') || undefined,
    { message: 'every delivery recorded', timeoutMs: 20_000 },
  );
}

/** A receiver that answers each request after `delayMs` and counts the requests open at once. */
async function countingReceiver(delayMs: number) {
  let open = 0;
  let most = 0;
  const received: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    open++;
    most = Math.max(most, open);
    received.push(String(request.headers['webhook-id']));
    request.resume();
    slowAnswer(delayMs, () => {
      open--;
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    received,
    most: () => most,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the claim that refills the pool as a group is recorded', () => {
  it('holds an endpoint to its in-flight allowance while delivering every event once', async () => {
    const { port, received, most, close } = await countingReceiver(5);
    try {
      const { key } = await h.createOrg();
      const hook = await endpoint(key, `http://127.0.0.1:${port}`);
      const contacts = 60;
      await createContacts(key, contacts);

      const deliverer = createWebhookDeliverer({
        db: h.database.db,
        log: h.app.log,
        keyring: h.wiring.keyring,
        allowHosts: ['127.0.0.1'],
        options: { concurrency: 16, perEndpointConcurrency: 3, batchSize: 16, pollMs: 20 },
      });
      const worker = startWorker([deliverer.task], h.app.log);
      try {
        await untilAllDelivered(key, hook.id, received, contacts);
      } finally {
        await worker.stop();
        await deliverer.stop();
      }
      expect(most()).toBeLessThanOrEqual(3);
      expect(received).toHaveLength(contacts);
      expect(new Set(received).size).toBe(contacts);
    } finally {
      await close();
    }
  });

  it('leases an endpoint ahead for one worker while another leaves it alone, at most its allowance in flight', async () => {
    // D364: a worker's claim leases up to twice the allowance of an endpoint's lane, so that the next attempt starts
    // as one is answered; a second worker takes none of an endpoint whose leases the first holds.
    const { port, received, most, close } = await countingReceiver(20);
    const deliverer = () =>
      createWebhookDeliverer({
        db: h.database.db,
        log: h.app.log,
        keyring: h.wiring.keyring,
        allowHosts: ['127.0.0.1'],
        options: { concurrency: 16, perEndpointConcurrency: 3, batchSize: 16, pollMs: 20 },
      });
    const first = deliverer();
    const second = deliverer();
    const workers: ReturnType<typeof startWorker>[] = [];
    try {
      const { key } = await h.createOrg();
      const hook = await endpoint(key, `http://127.0.0.1:${port}`);
      const contacts = 60;
      await createContacts(key, contacts);
      workers.push(startWorker([first.task], h.app.log));
      // The leases held at once, and by how many workers (a lease token starts with its worker's id).
      let leasedMost = 0;
      let holdersMost = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await sql<{ leased: number; holders: number }>`
            select count(*)::int as leased, count(distinct left(lease_token, 36))::int as holders
            from webhook_deliveries
            where endpoint_id = ${hook.id} and status = 'pending' and lease_token is not null
              and next_attempt_at > now()`.execute(h.database.db);
          leasedMost = Math.max(leasedMost, rows[0]?.leased ?? 0);
          holdersMost = Math.max(holdersMost, rows[0]?.holders ?? 0);
          await paceLoop(5);
        }
      })();
      // The second worker once the first holds the endpoint.
      await waitUntil(() => received.length > 0 || undefined, { message: 'a first delivery' });
      workers.push(startWorker([second.task], h.app.log));
      try {
        await untilAllDelivered(key, hook.id, received, contacts);
      } finally {
        sampling = false;
        await sampler;
      }
      expect(most()).toBeLessThanOrEqual(3);
      expect(leasedMost).toBeGreaterThan(3);
      expect(leasedMost).toBeLessThanOrEqual(6);
      expect(holdersMost).toBe(1);
      expect(received).toHaveLength(contacts);
      expect(new Set(received).size).toBe(contacts);
      const log = await deliveries(key, hook.id);
      expect(log.every((item: any) => item.attempts === 1)).toBe(true);
    } finally {
      for (const worker of workers) await worker.stop();
      await Promise.all([first.stop(), second.stop()]);
      await close();
    }
  });
});

// Deliveries against a receiver as integrators run it (D97, D228): a default Node `http` server (its
// keep-alive timeout is 5 s). Kept-alive connections are closed by us before the server's timeout, a reset is a failed
// attempt (never sent again unseen: D228), every attempt stays in the deliveries log, and
// conversational events (`message.*`) never queue behind an endpoint's backlog of bulk ones.
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../../src/db/migrate.ts';
import { createWebhookDeliverer } from '../../../src/worker/webhook-deliveries.ts';
import { startWorker } from '../../../src/worker/worker.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { approvedTemplate } from '../../helpers/sends.ts';
import { waitUntil } from '../../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  [h, receiver] = await Promise.all([
    // A failed attempt is retried at once, so that a test can watch a failure and its recovery.
    startHarness({ unlimited: true, webhooks: { retryScheduleMs: [0, 0] } }),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

let paths = 0;
async function endpoint(key: string, base = receiver.baseUrl, events = ['*']) {
  const path = `/connections/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', { key, body: { url: `${base}${path}`, events } });
  expect(created.status).toBe(201);
  return { ...created.body, path } as { id: string; secret: string; path: string };
}
const deliveries = async (key: string, endpointId: string) =>
  (await h.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key })).body.items;

/**
 * A TCP hop in front of the receiver that can forget its idle connections without telling the client, as a load
 * balancer or NAT does after its idle timeout, and as a server does when its keep-alive timeout fires while our
 * request is on the wire: the client's next write on such a connection gets a reset.
 */
async function startForgetfulHop(target: number) {
  const connections = new Set<{ client: Socket; upstream: Socket; forgotten: boolean }>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    const pair = { client, upstream, forgotten: false };
    connections.add(pair);
    client.on('data', (chunk) => {
      if (pair.forgotten) {
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const drop = () => {
      connections.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    open: () => connections.size,
    forgetAll: () => {
      for (const pair of connections) pair.forgotten = true;
    },
    close: async () => {
      for (const pair of connections) pair.client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('kept-alive connections to a default Node http server', () => {
  it('a reset on a reused connection is a failed attempt, retried on schedule and in the log (D228)', async () => {
    const hop = await startForgetfulHop(Number(new URL(receiver.baseUrl).port));
    try {
      const { key } = await h.createOrg();
      const hook = await endpoint(key, hop.baseUrl);
      expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
      expect(await h.deliveries.runOnce()).toBe(1);
      expect(hop.open()).toBe(1);
      // The kept-alive connection is gone on the far side; the client still holds it.
      hop.forgetAll();
      expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
      await h.deliveries.drain();

      const received = await receiver.waitFor(hook.path, 2);
      for (const request of received) expect(verify(hook.secret, request).type).toBe('ping');
      const [latest] = await deliveries(key, hook.id);
      expect(latest).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 200, last_error: null });
      expect(latest.attempt_history).toEqual([
        expect.objectContaining({ status_code: null, error: expect.stringMatching(/^connection failed: /) }),
        expect.objectContaining({ status_code: 200, error: null }),
      ]);
    } finally {
      await hop.close();
    }
  });

  it('an endpoint that reads each request and then drops the connection receives exactly the attempts logged (D228)', async () => {
    // Answers the first request of each connection (so it is kept alive) and drops the connection after reading any
    // later one: the request arrived, no answer did.
    let requests = 0;
    const dropping = createHttpServer((request, response) => {
      requests++;
      const socket = request.socket as Socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      request.resume();
      request.on('end', () => {
        if (socket.served === 1) response.end('ok');
        else socket.destroy();
      });
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const { key } = await h.createOrg();
      const hook = await endpoint(key, `http://127.0.0.1:${(dropping.address() as { port: number }).port}`);
      for (let ping = 0; ping < 3; ping++) {
        expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
        await h.deliveries.drain();
      }
      const logged = await deliveries(key, hook.id);
      const attempts = logged.reduce((sum: number, delivery: { attempts: number }) => sum + delivery.attempts, 0);
      expect(logged.some((delivery: { attempts: number }) => delivery.attempts > 1)).toBe(true);
      expect(requests).toBe(attempts);
      for (const delivery of logged) expect(delivery.attempt_history).toHaveLength(delivery.attempts);
    } finally {
      dropping.closeAllConnections();
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
    }
  });

  it('closes an idle connection itself before the server would (its keep-alive timeout is 5 s)', async () => {
    const { key } = await h.createOrg();
    const hook = await endpoint(key);
    const before = receiver.connections.length;
    expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
    expect(await h.deliveries.runOnce()).toBe(1);
    const [connection] = receiver.connections.slice(before);
    expect(connection).toBeDefined();
    // Wait for the connection to end, whoever ends it: the client (FIN first) or the server's keep-alive timeout.
    await waitUntil(() => connection?.closed, { message: 'the idle connection to close', timeoutMs: 20_000 });
    expect(connection?.closedBy).toBe('client');
  });
});

describe('the deliveries log', () => {
  it('keeps each attempt: a failure that a retry recovered stays visible', async () => {
    const { key } = await h.createOrg();
    const hook = await endpoint(key);
    let calls = 0;
    receiver.answer(hook.path, () => (++calls === 1 ? { status: 503 } : { status: 200 }));
    expect((await h.api('POST', `/v1/webhook-endpoints/${hook.id}/test`, { key })).status).toBe(202);
    await h.deliveries.drain();
    const [delivery] = await deliveries(key, hook.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 200, last_error: null });
    expect(delivery.attempt_history).toEqual([
      { attempted_at: expect.any(String), duration_ms: expect.any(Number), status_code: 503, error: 'HTTP 503' },
      { attempted_at: expect.any(String), duration_ms: expect.any(Number), status_code: 200, error: null },
    ]);
    const [first, second] = delivery.attempt_history;
    expect(Date.parse(first.attempted_at)).toBeLessThanOrEqual(Date.parse(second.attempted_at));
  });
});

/** Runs the deliveries task as the worker runs it (its own deliverer, so the harness's stays usable) around `check`. */
async function withDeliveryWorker(check: () => Promise<void>) {
  const deliverer = createWebhookDeliverer({
    db: h.database.db,
    log: h.app.log,
    keyring: h.wiring.keyring,
    allowHosts: ['127.0.0.1'],
  });
  const worker = startWorker([deliverer.task], h.app.log);
  try {
    await check();
  } finally {
    await worker.stop();
    await deliverer.stop();
  }
}

/** The event types an endpoint received before the first `type`, once it has arrived. */
const typesBefore = (hook: { path: string; secret: string }, type: string) =>
  waitUntil(
    () => {
      const types = receiver.at(hook.path).map((request) => verify(hook.secret, request).type as string);
      const at = types.indexOf(type);
      return at === -1 ? undefined : types.slice(0, at);
    },
    { message: type, timeoutMs: 20_000 },
  );

/** A backlog of 200 `contact.created` at an endpoint (an import), each answered in 20 ms. */
async function contactBacklog(key: string, hook: { path: string }, prefix: string) {
  receiver.answer(hook.path, { status: 200, delayMs: 20 });
  for (const start of [0, 100]) {
    const items = Array.from({ length: 100 }, (_, index) => ({ phone: `${prefix}${start + index + 1000}` }));
    const batch = await h.api('POST', '/v1/contacts/batch-upsert', { key, body: { match_on: 'phone', items } });
    expect(batch.status).toBe(200);
  }
}

describe('conversational events and a bulk backlog at one endpoint', () => {
  it('a message.received is delivered before the backlog of contact.created ahead of it drains', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const hook = await endpoint(key);
    // A backlog of bulk events (an import), then an inbound message.
    await contactBacklog(key, hook, '+1555030');
    const inbound = await h.admin('POST', '/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from: '+15550399999',
      text: 'Hello there',
    });
    expect(inbound.status).toBe(200);

    await withDeliveryWorker(async () => {
      const received = await typesBefore(hook, 'message.received');
      // Ahead of it only what was already in flight or claimed beside it: far from the 201 bulk events queued first.
      expect(received.length).toBeLessThan(40);
      await receiver.waitFor(hook.path, 202);
    });
  });

  it('a broadcast.finished is delivered before the backlog of contact.created ahead of it drains (D229)', async () => {
    const { org, key } = await h.createOrg();
    await h.createAccount(org.id);
    const template = await approvedTemplate(h, key);
    const hook = await endpoint(key);
    await contactBacklog(key, hook, '+1555040');
    // A send to one of them: its recipient's move and its end are events of other types, queued after the backlog.
    const send = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [{ phone: '+15550401000', variables: { 'body.1': 'x' } }] },
    });
    expect(send.status).toBe(202);
    await h.fanout.drain();
    expect((await h.api('GET', `/v1/broadcasts/${send.body.id}`, { key })).body.status).toBe('completed');

    await withDeliveryWorker(async () => {
      const before = await typesBefore(hook, 'broadcast.finished');
      // Ahead of it only what was in flight or claimed beside it, not the 200 contact events queued first.
      expect(before.filter((type) => type === 'contact.created').length).toBeLessThan(40);
      // Every event arrives once: the lanes change the order, not what is delivered.
      const all = await receiver.waitFor(hook.path, 202);
      const events = all.map((request) => verify(hook.secret, request));
      expect(events.map((event) => event.type)).toContain('broadcast.recipient.updated');
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    });
  });
});

describe('migration 0036 (D229)', () => {
  it('down puts pending deliveries back in two lanes and the rule with them; up gives each type its lane', async () => {
    const { org, key } = await h.createOrg();
    await endpoint(key, 'http://127.0.0.1:9');
    expect((await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Ana' } })).status).toBe(201);
    const lanes = async () =>
      (
        await h.database.db
          .selectFrom('webhook_deliveries')
          .select(['event_type', 'lane'])
          .where('org_id', '=', org.id)
          .where('status', '=', 'pending')
          .orderBy('event_type')
          .execute()
      ).map((row) => [row.event_type, row.lane]);
    expect(await lanes()).toEqual([['contact.created', 1]]);
    const migration = migrations['0036-delivery-type-lanes'];
    if (!migration?.down) throw new Error('migration 0036 has no down');
    try {
      await migration.down(h.database.db);
      expect(
        await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Bo', phone: '+15550405001' } }),
      ).toMatchObject({ status: 201 });
      const contact = (await h.api('GET', '/v1/contacts?limit=1', { key })).body.items[0];
      expect((await h.api('DELETE', `/v1/contacts/${contact.id}`, { key })).status).toBe(204);
      expect(await lanes()).toEqual([
        ['contact.created', 1],
        ['contact.created', 1],
        ['contact.deleted', 1],
      ]);
    } finally {
      await migration.up(h.database.db);
    }
    expect(await lanes()).toEqual([
      ['contact.created', 1],
      ['contact.created', 1],
      ['contact.deleted', 3],
    ]);
  });
});

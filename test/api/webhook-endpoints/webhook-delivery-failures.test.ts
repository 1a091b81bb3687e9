// What happens when an endpoint does not answer 2xx (decisions §11): the retry schedule, 410 and five days of
// failures disabling the endpoint, the timeout, no redirects, the address policy at connect time, and fairness:
// a hanging endpoint of one organization does not hold back another organization's deliveries.
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, WEBHOOK_RETRY_SCHEDULE_MS } from '../../../src/config.ts';
import { createWebhookDeliverer, type WebhookDelivererOptions } from '../../../src/worker/webhook-deliveries.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
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

const stoppers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(stoppers.map((stop) => stop()));
});

/** A deliverer of its own on the harness's database, with test options. */
function deliverer(options: Partial<WebhookDelivererOptions>, allowHosts = ['127.0.0.1']) {
  const outcomes: string[] = [];
  const instance = createWebhookDeliverer({
    db: h.database.db,
    log: h.app.log,
    keyring: h.wiring.keyring,
    allowHosts,
    options,
    onOutcome: (outcome) => outcomes.push(outcome),
  });
  stoppers.push(() => instance.stop());
  return { ...instance, outcomes };
}

let paths = 0;
const endpoints: { key: string; id: string }[] = [];
// Each test's endpoints go away after it, so that no delivery of one test is due during another.
afterEach(async () => {
  for (const { key, id } of endpoints.splice(0)) await h.api('DELETE', `/v1/webhook-endpoints/${id}`, { key });
});
async function setup(events: string[] = ['*']) {
  const { key, org } = await h.createOrg();
  const path = `/failing/${++paths}`;
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: `${receiver.baseUrl}${path}`, events },
  });
  expect(created.status).toBe(201);
  endpoints.push({ key, id: created.body.id });
  return { key, org, path, endpoint: created.body as { id: string; secret: string } };
}
const log = async (key: string, endpointId: string) =>
  (await h.api('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key })).body.items as any[];
const read = async (key: string, endpointId: string) =>
  (await h.api('GET', `/v1/webhook-endpoints/${endpointId}`, { key })).body;
const ping = (key: string, endpointId: string) => h.api('POST', `/v1/webhook-endpoints/${endpointId}/test`, { key });
/** When the endpoint's current run of failures began (the database's time). */
async function failingSince(endpointId: string): Promise<Date> {
  const row = await h.database.db
    .selectFrom('webhook_endpoints')
    .select('failing_since')
    .where('id', '=', endpointId)
    .executeTakeFirstOrThrow();
  expect(row.failing_since).not.toBeNull();
  return row.failing_since as Date;
}
/** Waits until the database's clock is past the 800 ms failing window that began at `since`. */
const windowOver = (since: Date) =>
  waitUntil(
    async () => {
      const { rows } = await sql<{
        over: boolean;
      }>`select now() > ${since}::timestamptz + interval '900 milliseconds' as over`.execute(h.database.db);
      return rows[0]?.over;
    },
    { message: 'the failing window to pass' },
  );
const gap = (delivery: any) => Date.parse(delivery.next_attempt_at) - Date.parse(delivery.updated_at);

describe('the retry schedule', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h unless WEBHOOK_RETRY_SCHEDULE_MS replaces it', () => {
    expect(WEBHOOK_RETRY_SCHEDULE_MS).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(loadConfig({}).webhooks.retryScheduleMs).toEqual(WEBHOOK_RETRY_SCHEDULE_MS);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '100, 200,0' }).webhooks.retryScheduleMs).toEqual([100, 200, 0]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '100,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS/);
    expect(loadConfig({ WEBHOOK_ALLOW_HOSTS: ' Hooks.Local ,127.0.0.1' }).webhookAllowHosts).toEqual([
      'hooks.local',
      '127.0.0.1',
    ]);
  });

  it('schedules the first retry 5 s after a failure by default', async () => {
    const { key, path, endpoint } = await setup();
    receiver.answer(path, { status: 500 });
    await ping(key, endpoint.id);
    await h.deliveries.drain();
    const [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
    expect(gap(delivery)).toBeGreaterThanOrEqual(4_900);
    expect(gap(delivery)).toBeLessThanOrEqual(5_100);
  });

  it('retries a 500 and a timeout along the schedule, then fails the delivery', async () => {
    const worker = deliverer({ retryScheduleMs: [300, 600], timeoutMs: 400 });
    const { key, path, endpoint } = await setup();
    let calls = 0;
    receiver.answer(path, () => (++calls === 1 ? { status: 500 } : 'hang'));
    await ping(key, endpoint.id);
    expect(await worker.runOnce()).toBe(1);
    let [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
    expect(gap(delivery)).toBeGreaterThanOrEqual(250);
    expect(gap(delivery)).toBeLessThanOrEqual(350);
    expect(await worker.runOnce()).toBe(0); // not due yet
    expect(await waitUntil(() => worker.runOnce(), { message: 'the first retry to come due' })).toBe(1);
    [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 2, last_status_code: null });
    expect(delivery.last_error).toMatch(/^timeout/);
    expect(gap(delivery)).toBeGreaterThanOrEqual(550);
    expect(await waitUntil(() => worker.runOnce(), { message: 'the second retry to come due' })).toBe(1);
    [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, next_attempt_at: null });
    expect(worker.outcomes).toEqual(['retry', 'retry', 'failed']);
    expect(receiver.at(path)).toHaveLength(3);
    // Every attempt carried the same webhook-id.
    expect(new Set(receiver.at(path).map((request) => request.headers['webhook-id'])).size).toBe(1);
    // The endpoint is still enabled: three failures within minutes are not five days.
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it('does not follow redirects', async () => {
    const { key, path, endpoint } = await setup();
    receiver.answer(path, { status: 307, headers: { location: `${receiver.baseUrl}/elsewhere` } });
    await ping(key, endpoint.id);
    await h.deliveries.drain();
    expect(receiver.at('/elsewhere')).toHaveLength(0);
    const [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', last_status_code: 307 });
    expect(delivery.last_error).toMatch(/redirect/);
  });
});

describe('disabling an endpoint', () => {
  it('410 Gone disables it; its pending deliveries fail and no new event is queued for it', async () => {
    const { key, path, endpoint } = await setup();
    receiver.answer(path, (request) => (JSON.parse(request.body).type === 'ping' ? { status: 410 } : 'hang'));
    // A pending contact event that is not due yet (as if waiting for a retry), and the ping that answers 410.
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'Later' } });
    await h.database.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: new Date(Date.now() + 3_600_000) })
      .where('endpoint_id', '=', endpoint.id)
      .execute();
    await ping(key, endpoint.id);
    await h.deliveries.drain();
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    const deliveries = await log(key, endpoint.id);
    expect(deliveries.map((d) => [d.event_type, d.status, d.last_status_code, d.last_error])).toEqual([
      ['ping', 'failed', 410, 'HTTP 410'],
      ['contact.created', 'failed', null, 'endpoint_disabled'],
    ]);
    await h.api('POST', '/v1/contacts', { key, body: { first_name: 'After' } });
    expect(await log(key, endpoint.id)).toHaveLength(2);
    // Manual retry of a disabled endpoint's delivery is refused until it is enabled again.
    const retry = `/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveries[0].id}/retry`;
    expect((await h.api('POST', retry, { key })).status).toBe(409);
    await h.api('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: { enabled: true } });
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: true, disabled_reason: null });
    receiver.answer(path, { status: 200 });
    expect((await h.api('POST', retry, { key })).status).toBe(202);
    await h.deliveries.drain();
    expect((await log(key, endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('disables an endpoint whose attempts have all failed for the whole window (5 days; shortened here)', async () => {
    const worker = deliverer({ retryScheduleMs: [0, 0, 0, 0], failingDisableAfterMs: 800 });
    const { key, path, endpoint } = await setup();
    receiver.answer(path, { status: 500 });
    await ping(key, endpoint.id);
    await worker.runOnce();
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: true });
    const firstFailure = await failingSince(endpoint.id);
    // A success inside the window starts it again: a failure once the first window is over does not disable.
    receiver.answer(path, { status: 200 });
    await ping(key, endpoint.id);
    await worker.runOnce();
    receiver.answer(path, { status: 500 });
    await windowOver(firstFailure);
    await ping(key, endpoint.id);
    await worker.runOnce();
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: true });
    await windowOver(await failingSince(endpoint.id));
    await worker.runOnce();
    expect(await read(key, endpoint.id)).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  });
});

describe('the address policy at connect time', () => {
  it('refuses to connect to a private address that was allowed when saved but is not allowed now', async () => {
    const strict = deliverer({ retryScheduleMs: [60_000] }, []);
    const { key, path, endpoint } = await setup();
    await ping(key, endpoint.id);
    expect(await strict.runOnce()).toBe(1);
    expect(receiver.at(path)).toHaveLength(0);
    const [delivery] = await log(key, endpoint.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
    expect(delivery.last_error).toMatch(/^address refused/);
  });
});

describe('fairness', () => {
  it('a hanging endpoint of one organization holds a few slots only; another organization is delivered meanwhile', async () => {
    const worker = deliverer({
      timeoutMs: 8_000,
      concurrency: 8,
      perEndpointConcurrency: 2,
      retryScheduleMs: [60_000],
    });
    const slow = await setup();
    receiver.answer(slow.path, 'hang');
    for (let i = 0; i < 12; i++) await ping(slow.key, slow.endpoint.id);
    await worker.task.run();
    await receiver.waitFor(slow.path, 2);
    const fast = await setup();
    for (let i = 0; i < 3; i++) await ping(fast.key, fast.endpoint.id);
    // The pool refills as soon as it has room: no waiting for the hanging attempts.
    await worker.task.run();
    await receiver.waitFor(fast.path, 3, 6_000);
    // When the other organization was served, the hanging endpoint still held only its two attempts, none finished.
    expect(receiver.at(slow.path)).toHaveLength(2);
    expect((await log(slow.key, slow.endpoint.id)).every((d) => d.attempts === 0)).toBe(true);
    for (const request of receiver.at(fast.path)) expect(verify(fast.endpoint.secret, request).type).toBe('ping');
  });
});

describe('fairness with the fan-out', () => {
  it('a hanging endpoint never holds back the fan-out: the worker finishes a broadcast while its events hang', async () => {
    const { key, template } = await sender(h);
    const path = `/failing/${++paths}`;
    const created = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: `${receiver.baseUrl}${path}`, events: ['broadcast.recipient.updated', 'broadcast.finished'] },
    });
    expect(created.status).toBe(201);
    endpoints.push({ key, id: created.body.id });
    receiver.answer(path, 'hang');
    // The real worker tasks of the wiring, fan-out and deliveries side by side, on their own timers.
    const worker = h.wiring.startWorker();
    stoppers.push(() => worker.stop());
    const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(40)) },
    });
    expect(sent.status).toBe(202);
    let broadcast = sent.body;
    broadcast = await waitUntil(
      async () => {
        const current = (await h.api('GET', `/v1/broadcasts/${sent.body.id}`, { key })).body;
        return current.status === 'completed' && current;
      },
      { message: 'the broadcast to complete' },
    ).catch(() => broadcast);
    expect(broadcast).toMatchObject({ status: 'completed', sent: 40, pending: 0 });
    // ... while the endpoint's deliveries were being attempted and none of them has finished.
    await receiver.waitFor(path, 1);
    const deliveries = await log(key, created.body.id);
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.status === 'pending')).toBe(true);
  });
});

describe('manual retry during an attempt', () => {
  it('answers 202 and leaves the attempt in flight alone: no second request', async () => {
    const worker = deliverer({ timeoutMs: 1_500, retryScheduleMs: [60_000] });
    const { key, path, endpoint } = await setup();
    receiver.answer(path, 'hang');
    const delivery = (await ping(key, endpoint.id)).body;
    const attempt = worker.runOnce();
    await receiver.waitFor(path, 1);
    const retried = await h.api('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`, {
      key,
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ status: 'pending', attempts: 0 });
    // Another worker finds nothing due: the delivery is still held by the first one.
    const other = deliverer({ timeoutMs: 1_500, retryScheduleMs: [60_000] });
    expect(await other.runOnce()).toBe(0);
    expect(await attempt).toBe(1);
    // The attempt timed out and was recorded under its lease; the retry did not start a second one meanwhile.
    expect(receiver.at(path)).toHaveLength(1);
    const [after] = await log(key, endpoint.id);
    expect(after).toMatchObject({ status: 'pending', attempts: 1 });
    expect(after.last_error).toMatch(/^timeout/);
  });
});

describe('metrics', () => {
  it('count deliveries by outcome and expose the pending depth', async () => {
    const { key, endpoint } = await setup();
    await ping(key, endpoint.id);
    await h.deliveries.drain();
    await h.deliveries.task.run();
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/webhook_deliveries_total\{outcome="succeeded"\} [1-9]/);
    expect(metrics.body).toMatch(/webhook_deliveries_pending \d+/);
  });
});

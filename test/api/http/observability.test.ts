// Request ids, logs that never carry keys, and Prometheus metrics.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createMemoryRateLimitStore } from '../../../src/http/rate-limit.ts';
import { wire } from '../../../src/wiring.ts';
import { ADMIN_TOKEN, type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('request ids', () => {
  it('are returned as X-Request-Id on every response, success or error', async () => {
    const { key } = await h.createOrg();
    const ok = await h.api('GET', '/v1/me', { key });
    const denied = await h.api('GET', '/v1/me');
    expect(ok.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(denied.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(ok.headers['x-request-id']).not.toBe(denied.headers['x-request-id']);
  });

  it('keep a safe incoming X-Request-Id and replace an unsafe one', async () => {
    const kept = await h.api('GET', '/v1/me', { headers: { 'x-request-id': 'abc-123.trace' } });
    expect(kept.headers['x-request-id']).toBe('abc-123.trace');
    const replaced = await h.api('GET', '/v1/me', { headers: { 'x-request-id': 'bad id with spaces\n' } });
    expect(replaced.headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('logs', () => {
  it('are JSON lines with the request id and never contain an API key or the admin token', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const app = await buildApp(
      wire({
        database: h.database,
        rateLimitStore: createMemoryRateLimitStore(),
        adminToken: ADMIN_TOKEN,
        log: logger,
      }),
    );
    try {
      const { key } = await h.createOrg();
      const response = await app.inject({ url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
      const created = await app.inject({
        method: 'POST',
        url: `/admin/v1/organizations/${response.json().id}/api-keys`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const newKey = created.json().key as string;
      await app.inject({ url: '/v1/me?api_key=whatever', headers: { authorization: `Bearer ${newKey}` } });
      const text = lines.join('\n');
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(text).toContain(response.headers['x-request-id'] as string);
      expect(text).not.toContain(key);
      expect(text).not.toContain(newKey);
      expect(text).not.toContain(ADMIN_TOKEN);
    } finally {
      await app.close();
    }
  });
});

describe('metrics', () => {
  it('count requests by route pattern and status, time them, and show the database pool', async () => {
    const { key } = await h.createOrg();
    await h.api('GET', '/v1/me', { key });
    await h.api('GET', '/v1/me');
    const response = await h.app.inject('/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/me",status="200"\} [1-9]/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/v1\/me",status="401"\} [1-9]/);
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/me",status="200"\}/,
    );
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/v1\/me",status="200"\} [1-9]/);
    expect(text).toMatch(/db_pool_connections\{state="total"\} [1-9]/);
    expect(text).toMatch(/db_pool_connections\{state="in_use"\} \d/);
    expect(text).toContain('rate_limit_rejections_total');
  });

  it('expose the depth of the fan-out queue, read at each scrape', async () => {
    const depth = async () =>
      Number(/^fanout_recipients_pending (\d+)$/m.exec((await h.app.inject('/metrics')).body)?.[1] ?? Number.NaN);
    await h.fanout.drain();
    expect(await depth()).toBe(0);
    const { key, template } = await sender(h);
    const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(3)) },
    });
    expect(sent.status).toBe(202);
    expect(await depth()).toBe(3);
    await h.fanout.drain();
    expect(await depth()).toBe(0);
    expect((await h.app.inject('/metrics')).body).toContain('webhook_deliveries_pending');
  });

  it('label unknown routes as unmatched rather than by raw URL', async () => {
    const { key } = await h.createOrg();
    await h.api('GET', '/v1/contacts-that-do-not-exist/123', { key });
    const text = (await h.app.inject('/metrics')).body;
    expect(text).not.toContain('contacts-that-do-not-exist');
  });
});

describe('health', () => {
  it('answers 200 with the database kind once migrations have run', async () => {
    const response = await h.app.inject('/healthz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: h.database.kind });
  });
});

describe('unexpected faults', () => {
  it('are 500 internal_error with nothing of the cause in the body', async () => {
    const broken = await startHarness({ unlimited: true });
    const { key } = await broken.createOrg();
    await broken.database.db.schema.dropTable('api_keys').execute();
    const response = await broken.api('GET', '/v1/me', { key });
    expect(response.status).toBe(500);
    expect(response.text).toBe('{"detail":"internal_error"}');
    await broken.close();
  });
});

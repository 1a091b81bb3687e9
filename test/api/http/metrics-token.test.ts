// /metrics behind METRICS_TOKEN, and the organization id on the log lines of an authenticated request (D13, D27).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.ts';
import { createMemoryRateLimitStore } from '../../../src/http/rate-limit.ts';
import { wire } from '../../../src/wiring.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('METRICS_TOKEN', () => {
  it('makes /metrics answer only the bearer of the token', async () => {
    const app = await buildApp(
      wire({
        database: h.database,
        rateLimitStore: createMemoryRateLimitStore(),
        metricsToken: 'scrape-secret',
      }),
    );
    try {
      const none = await app.inject('/metrics');
      expect(none.statusCode).toBe(401);
      expect(none.json()).toEqual({ detail: 'invalid_metrics_token' });
      expect(none.headers['www-authenticate']).toBe('Bearer');
      const wrong = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-secreT' } });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.body).not.toContain('http_requests_total');
      const right = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer scrape-secret' } });
      expect(right.statusCode).toBe(200);
      expect(right.body).toContain('http_requests_total');
    } finally {
      await app.close();
    }
  });

  it('leaves /metrics open when not set', async () => {
    const open = await h.app.inject('/metrics');
    expect(open.statusCode).toBe(200);
    expect(open.body).toContain('http_requests_total');
  });
});

describe('request logs', () => {
  it('carry the organization id once the key is accepted, "request completed" included', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = await buildApp(
      wire({
        database: h.database,
        rateLimitStore: createMemoryRateLimitStore(),
        log: pino({ level: 'info' }, sink),
      }),
    );
    try {
      const { org, key } = await h.createOrg();
      const ok = await app.inject({ url: '/v1/me', headers: { authorization: `Bearer ${key}` } });
      const denied = await app.inject({ url: '/v1/me', headers: { authorization: 'Bearer oak_unknown' } });
      const of = (id: unknown) => lines.filter((line) => line.reqId === id);
      const completed = of(ok.headers['x-request-id']).find((line) => line.msg === 'request completed');
      expect(completed?.org_id).toBe(org.id);
      const refused = of(denied.headers['x-request-id']);
      expect(refused.length).toBeGreaterThan(0);
      for (const line of refused) expect(line.org_id).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

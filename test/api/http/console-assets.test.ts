// The console's assets at /app (decisions §17): the built app, deep links answering the app's page, long-cached
// hashed files, the security headers on every answer, and /app/api never answered by the page.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIST } from '../../../src/http/console.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const expectSecurityHeaders = (headers: Record<string, unknown>) => {
  const csp = String(headers['content-security-policy']);
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['referrer-policy']).toBe('same-origin');
};

describe('the console at /app', () => {
  it('answers the app page at /app and at every deep link under it, with the security headers', async () => {
    for (const url of ['/app', '/app/', '/app/inbox', '/app/contacts/ct_123?tab=fields', '/app/sign-in/abc']) {
      const response = await h.app.inject(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.body).toContain('<div id="root"></div>');
      expectSecurityHeaders(response.headers);
      // A fresh nonce per answer, in the policy's style-src and in the page's csp-nonce meta (for React Aria).
      const nonce = /'nonce-([^']+)'/.exec(String(response.headers['content-security-policy']))?.[1];
      expect(response.body).toContain(`<meta property="csp-nonce" nonce="${nonce}"`);
      expect(String(response.headers['content-security-policy'])).toMatch(/script-src 'self';/);
    }
  });

  it('serves the built files with a long cache and no inline script in the page', async () => {
    const page = (await h.app.inject('/app')).body;
    const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/app\/assets\//);
      expect(body!.trim()).toBe('');
    }
    const file = readdirSync(`${CONSOLE_DIST}assets`).find((name) => name.endsWith('.js'))!;
    const asset = await h.app.inject(`/app/assets/${file}`);
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toContain('immutable');
    expectSecurityHeaders(asset.headers);
  });

  it('gives every answer of the page its own nonce', async () => {
    const [first, second] = await Promise.all([h.app.inject('/app'), h.app.inject('/app')]);
    expect(first.headers['content-security-policy']).not.toBe(second.headers['content-security-policy']);
  });

  it('answers 404 for a missing asset, and the console API (never the page) under /app/api', async () => {
    expect((await h.app.inject('/app/assets/nothing-here.js')).statusCode).toBe(404);
    const api = await h.app.inject('/app/api/no-such-operation');
    expect([401, 404]).toContain(api.statusCode);
    expect(api.headers['content-type']).toMatch(/^application\/json/);
  });

  it('keeps the pages and files out of the OpenAPI document', async () => {
    const document = (await h.app.inject('/v1/openapi.json')).json();
    const pages = Object.keys(document.paths).filter((path) => path === '/app' || /^\/app\/(?!api\/)/.test(path));
    expect(pages).toEqual([]);
  });
});

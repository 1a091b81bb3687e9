// The OpenAPI 3.1 document: valid, public, complete for every /v1 route, and a docs page that serves it.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without a key', async () => {
    const response = await h.api('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBe('20');
    const document = response.body;
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents, for every /v1 operation, the auth, rate-limit and fault errors', async () => {
    const document = (await h.api('GET', '/v1/openapi.json')).body;
    const operations = Object.entries(document.paths as Record<string, Record<string, { responses: object }>>).flatMap(
      ([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
    expect(operations.length).toBeGreaterThan(0);
    for (const { path, method, operation } of operations) {
      expect(/^\/(v1|app\/api)\//.test(path), `${method} ${path}`).toBe(true);
      for (const status of ['401', '403', '429', '500']) {
        expect(Object.keys(operation.responses), `${method} ${path} documents ${status}`).toContain(status);
      }
    }
    expect(document.components.schemas.Me.properties).toHaveProperty('trial');
  });

  it('hides the operator API, webhooks and internals', async () => {
    const document = (await h.api('GET', '/v1/openapi.json')).body;
    // The public API and the console's own API (decisions §17) only.
    for (const path of Object.keys(document.paths)) expect(path).toMatch(/^\/(v1|app\/api)\//);
  });
});

describe('GET /docs', () => {
  it('serves a readable page', async () => {
    const page = await h.app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('swagger');
    // The page is titled with the product's name, not the viewer's ("Swagger UI").
    expect(page.body).toContain('<title>CRM and Messaging API reference</title>');
  });
});

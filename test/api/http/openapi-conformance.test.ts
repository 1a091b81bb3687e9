// The replay check (test/helpers/conformance.ts) passes true exchanges and catches each kind of disagreement
// between the server and the OpenAPI document; every harness runs it over the suite's own traffic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConformanceChecker, type RecordedResponse } from '../../helpers/conformance.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let check: (exchange: RecordedResponse) => string | undefined;
let key: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  check = await createConformanceChecker((await h.api('GET', '/v1/openapi.json')).body);
  key = (await h.createOrg()).key;
});
afterAll(() => h.close());

async function recorded(method: string, url: string, body?: unknown): Promise<RecordedResponse> {
  await h.api(method, url, { key, ...(body === undefined ? {} : { body }) });
  return structuredClone(h.recorded.at(-1) as RecordedResponse);
}

describe('the replay check', () => {
  it('passes real exchanges, comma-separated and repeated array parameters included', async () => {
    for (const exchange of [
      await recorded('GET', '/v1/me'),
      await recorded('GET', '/v1/contacts?origin=API,WEB&country=MX&country=US'),
      await recorded('POST', '/v1/contacts', { first_name: 'Ana' }),
      await recorded('POST', '/v1/contacts', { first_name: 7 }),
    ]) {
      expect(exchange.status).toBeLessThan(500);
      expect(check(exchange)).toBeUndefined();
    }
  });

  it('catches a response body, status or header the document does not have', async () => {
    const me = await recorded('GET', '/v1/me');
    expect(check({ ...me, body: { ...(me.body as object), plan: 42 } })).toMatch(/body does not match/);
    expect(check({ ...me, status: 418 })).toMatch(/status not documented/);
    const { 'x-request-id': _dropped, ...headers } = me.responseHeaders ?? {};
    expect(check({ ...me, responseHeaders: headers })).toMatch(/X-Request-Id missing/);
    expect(check({ ...me, responseHeaders: { ...me.responseHeaders, 'x-ratelimit-limit': 'many' } })).toMatch(
      /headers do not match/,
    );
  });

  it('catches a request the document refuses that was accepted, and a refusal of one it accepts', async () => {
    const list = await recorded('GET', '/v1/contacts');
    expect(check({ ...list, url: '/v1/contacts?limit=500' })).toMatch(/accepted a request the document refuses/);
    const created = await recorded('POST', '/v1/contacts', { first_name: 'Bea' });
    expect(check({ ...created, requestBody: { nickname: 'B' } })).toMatch(/accepted a request the document refuses/);
    const refused = await recorded('GET', '/v1/contacts?limit=0');
    expect(refused.status).toBe(422);
    expect(check({ ...refused, url: '/v1/contacts?limit=5' })).toMatch(/refused .* a request the document accepts/);
  });
});

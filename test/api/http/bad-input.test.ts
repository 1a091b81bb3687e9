// Bad input never reaches the database as a 5xx (D7, D9): U+0000 in a body field, a query value or a path id, a
// JSON body nested tens of thousands of levels deep, and the errors the framework raises before a route all answer
// in the contract's `{detail}` shapes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  key = (await h.createOrg()).key;
});
afterAll(() => h.close());

describe('U+0000', () => {
  it('in a body field is a 422 naming the field, and nothing is written', async () => {
    const response = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'A\u0000B', city: 'Lima' } });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'first_name'], type: 'value_error' }),
    ]);
    const list = await h.api('GET', '/v1/contacts', { key });
    expect(list.body.items).toEqual([]);
  });

  it('deep in a body (an array item, a map key) is a 422 at that place', async () => {
    const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Lead' } });
    expect(stage.status).toBe(201);
    const reorder = await h.api('POST', '/v1/funnel-stages/reorder', {
      key,
      body: {
        items: [
          { stage_id: stage.body.id, order_idx: 0 },
          { stage_id: 'x\u0000', order_idx: 1 },
        ],
      },
    });
    expect(reorder.status).toBe(422);
    expect(reorder.body.detail[0].loc).toEqual(['body', 'items', 1, 'stage_id']);
    const keyed = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'A', properties: { 'k\u0000': 1 } } });
    expect(keyed.status).toBe(422);
    expect(keyed.body.detail[0].loc).toEqual(['body', 'properties', 'k\u0000']);
  });

  it('in a query value is a 422 naming the parameter', async () => {
    for (const url of ['/v1/contacts?q=a%00b', '/v1/contacts?country=US%00', '/v1/templates?name=x%00']) {
      const response = await h.api('GET', url, { key });
      expect(response.status, url).toBe(422);
      expect(response.body.detail[0].loc[0], url).toBe('query');
      expect(response.body.detail[0].type, url).toBe('value_error');
    }
  });

  it('in a path id is a 404', async () => {
    for (const [method, url] of [
      ['GET', '/v1/contacts/ct_%00'],
      ['PATCH', '/v1/contacts/%00'],
      ['DELETE', '/v1/contacts/%00'],
      ['GET', '/v1/templates/%00'],
      ['GET', '/v1/broadcasts/%00/recipients'],
    ] as const) {
      const response = await h.api(method, url, { key, ...(method === 'PATCH' ? { body: { city: 'x' } } : {}) });
      expect(response.status, url).toBe(404);
      expect(response.body, url).toEqual({ detail: 'not_found' });
    }
  });
});

describe('deeply nested JSON', () => {
  it('is a 422 in the contract shape, whatever the depth', async () => {
    for (const depth of [100, 50_000]) {
      for (const raw of ['['.repeat(depth) + ']'.repeat(depth), `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`]) {
        const response = await h.api('POST', '/v1/contacts', {
          key,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status, `depth ${depth}`).toBe(422);
        expect(response.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
        expect(response.text.length).toBeLessThan(2000);
      }
    }
  });

  it('inside a field that takes any JSON is refused without echoing it', async () => {
    const deep = JSON.parse(`${'['.repeat(30)}${']'.repeat(30)}`);
    const response = await h.api('POST', '/v1/contacts', { key, body: { first_name: deep } });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'first_name'], type: 'string_type' });
    expect(response.body.detail[0].input).toBeUndefined();
  });

  it('a huge value is not echoed back in full', async () => {
    const response = await h.api('POST', '/v1/contacts', { key, body: { first_name: 'x'.repeat(200_000) } });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'first_name'], type: 'string_too_long' });
    expect(response.text.length).toBeLessThan(5000);
  });
});

describe('framework errors in the contract shape', () => {
  it('invalid percent-encoding in a path is a 400 {detail}', async () => {
    const response = await h.api('GET', '/v1/contacts/%E0%A4%A', { key });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: 'bad_request' });
  });

  it('a path parameter over the length limit is a 414 {detail}', async () => {
    const response = await h.api('GET', `/v1/contacts/${'a'.repeat(500)}`, { key });
    expect(response.status).toBe(414);
    expect(response.body).toEqual({ detail: 'uri_too_long' });
  });

  it('413, 415 and 405 answer {detail}', async () => {
    const big = await h.api('POST', '/v1/contacts', {
      key,
      rawBody: JSON.stringify({ first_name: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ detail: 'payload_too_large' });
    const xml = await h.api('POST', '/v1/contacts', {
      key,
      rawBody: '<contact/>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(xml.status).toBe(415);
    expect(xml.body).toEqual({ detail: 'unsupported_media_type' });
    const put = await h.api('PUT', '/v1/contacts', { key, body: {} });
    expect(put.status).toBe(405);
    expect(put.body).toEqual({ detail: 'method_not_allowed' });
  });
});

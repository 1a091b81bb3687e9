// The FastAPI-style 422 mapping, on a small app with the service's own validation and error handling.
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBodyParsers } from '../../../src/http/body-parser.ts';
import { ApiError, registerErrorHandling } from '../../../src/http/errors.ts';
import { Nullable, StringEnum } from '../../../src/http/schemas.ts';
import { registerValidation } from '../../../src/http/validation.ts';

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({ bodyLimit: 1024 * 1024 });
  registerValidation(app);
  registerBodyParsers(app);
  registerErrorHandling(app);
  app.post(
    '/things',
    {
      schema: {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 5 }),
            phone: Type.Optional(Nullable(Type.String({ pattern: '^\\+[1-9]\\d{1,14}$' }))),
            count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
            kind: Type.Optional(StringEnum(['A', 'B', 'C'] as const)),
            tags: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 2 })),
            nested: Type.Optional(Type.Object({ flag: Type.Boolean() }, { additionalProperties: false })),
            map: Type.Optional(Type.Record(Type.String(), Type.Object({ v: Type.String() }))),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => request.body,
  );
  app.get(
    '/things',
    {
      schema: {
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          country: Type.Optional(Type.Array(Type.String())),
          sort: Type.Optional(StringEnum(['recent', 'name'] as const)),
        }),
      },
    },
    async (request) => request.query,
  );
  app.get('/boom', async () => {
    throw new Error('select * from secret_table where password = 1');
  });
  app.get('/structured', async () => {
    throw new ApiError(409, { code: 'duplicate_contact', field: 'email' });
  });
  await app.ready();
});
afterAll(() => app.close());

const post = (payload: unknown, contentType = 'application/json') =>
  app.inject({
    method: 'POST',
    url: '/things',
    headers: { 'content-type': contentType },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

describe('body validation (never coerced)', () => {
  it('reports a missing field with loc, msg, type and input', async () => {
    const response = await post({});
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      detail: [{ loc: ['body', 'name'], msg: 'Field required', type: 'missing', input: {} }],
    });
  });

  it('does not coerce a number into a string', async () => {
    const response = await post({ name: 12345 });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual([
      { loc: ['body', 'name'], msg: 'Input should be a valid string', type: 'string_type', input: 12345 },
    ]);
  });

  it('does not coerce a string into an integer, nor a string into a boolean', async () => {
    const response = await post({ name: 'a', count: '3', nested: { flag: 'true' } });
    const detail = response.json().detail;
    expect(detail).toContainEqual({
      loc: ['body', 'count'],
      msg: 'Input should be a valid integer',
      type: 'int_type',
      input: '3',
    });
    expect(detail).toContainEqual({
      loc: ['body', 'nested', 'flag'],
      msg: 'Input should be a valid boolean',
      type: 'bool_type',
      input: 'true',
    });
  });

  it('reports pattern, length, range, enum and list size with ctx', async () => {
    const response = await post({ name: 'toolong', phone: '555', count: 11, kind: 'Z', tags: [] });
    const detail = response.json().detail as { loc: unknown[]; type: string; ctx?: unknown }[];
    const byField = Object.fromEntries(detail.map((issue) => [issue.loc.join('.'), issue]));
    expect(byField['body.name']).toMatchObject({ type: 'string_too_long', ctx: { max_length: 5 } });
    expect(byField['body.phone']).toMatchObject({
      type: 'string_pattern_mismatch',
      msg: "String should match pattern '^\\+[1-9]\\d{1,14}$'",
      ctx: { pattern: '^\\+[1-9]\\d{1,14}$' },
    });
    expect(byField['body.count']).toMatchObject({ type: 'less_than_equal', ctx: { le: 10 } });
    expect(byField['body.kind']).toMatchObject({ type: 'enum', msg: "Input should be 'A', 'B' or 'C'" });
    expect(byField['body.tags']).toMatchObject({ type: 'too_short', ctx: { min_length: 1 } });
    expect(detail).toHaveLength(5);
  });

  it('accepts null for a nullable field and reports only the non-null branch otherwise', async () => {
    expect((await post({ name: 'a', phone: null })).statusCode).toBe(200);
    const detail = (await post({ name: 'a', phone: 5 })).json().detail;
    expect(detail).toEqual([
      { loc: ['body', 'phone'], msg: 'Input should be a valid string', type: 'string_type', input: 5 },
    ]);
  });

  it('refuses unknown fields', async () => {
    const detail = (await post({ name: 'a', surprise: true })).json().detail;
    expect(detail).toEqual([
      { loc: ['body', 'surprise'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden', input: true },
    ]);
  });

  it('gives integer list indexes and string map keys in loc', async () => {
    const detail = (await post({ name: 'a', tags: ['x', 7], map: { '0': { v: 1 } } })).json().detail;
    expect(detail).toContainEqual(expect.objectContaining({ loc: ['body', 'tags', 1], type: 'string_type' }));
    expect(detail).toContainEqual(expect.objectContaining({ loc: ['body', 'map', '0', 'v'], type: 'string_type' }));
  });

  it('answers malformed JSON with json_invalid', async () => {
    const response = await post('{"name": ');
    expect(response.statusCode).toBe(422);
    const [issue] = response.json().detail;
    expect(issue).toMatchObject({ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' });
    expect(issue.ctx.error).toEqual(expect.any(String));
  });

  it('answers a missing body where one is required with Field required at ["body"]', async () => {
    const response = await app.inject({ method: 'POST', url: '/things' });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  });

  it('refuses prototype poisoning', async () => {
    const response = await post('{"name":"a","__proto__":{"admin":true}}');
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0].type).toBe('json_invalid');
  });

  it('reads a JSON body sent with curl’s default form content type', async () => {
    const response = await post({ name: 'ok' }, 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ name: 'ok' });
  });

  it('answers a non-JSON body with 415', async () => {
    const response = await post('name=ok', 'application/x-www-form-urlencoded');
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ detail: 'unsupported_media_type' });
  });

  it('answers a body over 1 MiB with 413', async () => {
    const response = await post({ name: 'x'.repeat(1024 * 1024 + 10) });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ detail: 'payload_too_large' });
  });
});

describe('query validation (parsed from strings)', () => {
  it('parses integers and applies defaults', async () => {
    expect((await app.inject('/things?limit=7')).json()).toEqual({ limit: 7 });
    expect((await app.inject('/things')).json()).toEqual({ limit: 50 });
  });

  it('reports an unparsable integer and an out-of-range one under "query"', async () => {
    const bad = (await app.inject('/things?limit=abc')).json().detail;
    expect(bad).toEqual([
      {
        loc: ['query', 'limit'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        type: 'int_parsing',
        input: 'abc',
      },
    ]);
    const big = (await app.inject('/things?limit=201')).json().detail;
    expect(big[0]).toMatchObject({ loc: ['query', 'limit'], type: 'less_than_equal', ctx: { le: 200 } });
  });

  it('refuses an unknown enum value', async () => {
    const response = await app.inject('/things?sort=FOO');
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['query', 'sort'], type: 'enum' });
  });

  it('reads repeated keys as an array', async () => {
    expect((await app.inject('/things?country=US&country=MX')).json().country).toEqual(['US', 'MX']);
  });
});

describe('other failures', () => {
  it('hides the cause of a 500', async () => {
    const response = await app.inject('/boom');
    expect(response.statusCode).toBe(500);
    expect(response.body).toBe('{"detail":"internal_error"}');
  });

  it('writes structured details as they are', async () => {
    const response = await app.inject('/structured');
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ detail: { code: 'duplicate_contact', field: 'email' } });
  });

  it('answers an unknown path with 404 and a known path with another method with 405 and Allow', async () => {
    expect((await app.inject('/nothing')).json()).toEqual({ detail: 'not_found' });
    const response = await app.inject({ method: 'DELETE', url: '/things' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.json()).toEqual({ detail: 'method_not_allowed' });
  });
});

import Fastify from 'fastify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ApiError, registerErrorHandling } from '../../../src/http/errors.ts';
import { decodeCursor, encodeCursor } from '../../../src/http/pagination.ts';
import { registerQueryArrays } from '../../../src/http/query-arrays.ts';
import { registerValidation } from '../../../src/http/validation.ts';

describe('cursors', () => {
  it('round-trip the position for the same list and filter', () => {
    const cursor = encodeCursor('contacts:recent', { q: 'ana' }, ['2026-01-01T00:00:00Z', 'ct_1']);
    expect(decodeCursor(cursor, 'contacts:recent', { q: 'ana' })).toEqual(['2026-01-01T00:00:00Z', 'ct_1']);
  });

  it.each([
    ['garbage', 'not-a-cursor!!'],
    ['valid base64 of non-JSON', Buffer.from('hello').toString('base64url')],
    ['JSON without a position', Buffer.from('{"f":"x"}').toString('base64url')],
  ])('refuse %s with a 422 at ["query","cursor"]', (_label, cursor) => {
    try {
      decodeCursor(cursor, 'contacts:recent', {});
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(422);
      expect((error as ApiError).detail).toEqual([expect.objectContaining({ loc: ['query', 'cursor'] })]);
    }
  });

  it('refuse a cursor made for another list or another filter', () => {
    const cursor = encodeCursor('contacts:recent', { q: 'ana' }, [1]);
    expect(() => decodeCursor(cursor, 'contacts:name', { q: 'ana' })).toThrow(ApiError);
    expect(() => decodeCursor(cursor, 'contacts:recent', { q: 'bob' })).toThrow(ApiError);
  });
});

describe('array query parameters', () => {
  it('accept repeated keys, one comma-separated value, or a single value', async () => {
    const app = Fastify();
    registerValidation(app);
    registerErrorHandling(app);
    registerQueryArrays(app);
    app.get(
      '/list',
      {
        schema: {
          querystring: Type.Object({
            country: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Z]{2}$' }))),
            limit: Type.Optional(Type.Integer()),
          }),
        },
      },
      async (request) => request.query,
    );
    await app.ready();
    expect((await app.inject('/list?country=US&country=MX')).json().country).toEqual(['US', 'MX']);
    expect((await app.inject('/list?country=US,MX')).json().country).toEqual(['US', 'MX']);
    expect((await app.inject('/list?country=US,MX&country=BR')).json().country).toEqual(['US', 'MX', 'BR']);
    expect((await app.inject('/list?country=US')).json().country).toEqual(['US']);
    const bad = await app.inject('/list?country=US,mx');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['query', 'country', 1], type: 'string_pattern_mismatch' });
    await app.close();
  });
});

import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory, lazyValidator, serializerSchema } from '../../../src/http/lazy-compile.ts';
import { DateTime, Nullable } from '../../../src/http/schemas.ts';
import { ContactSchema } from '../../../src/modules/contacts/contacts.schemas.ts';

describe('lazy compilation (decisions D162)', () => {
  it('compiles a validator once, at its first call, and carries its errors and the parent for defaults', () => {
    const ajv = new Ajv({ useDefaults: true, allErrors: true });
    let compiled = 0;
    const validate = lazyValidator(() => {
      compiled++;
      return ajv.compile({
        type: 'object',
        properties: { limit: { type: 'integer', default: 50 } },
        required: [],
      }) as never;
    });
    expect(compiled).toBe(0);
    expect(validate.schemaEnv).toBeTruthy();
    const parent: { query: unknown } = { query: {} };
    expect(validate(parent.query, { parentData: parent, parentDataProperty: 'query' })).toBe(true);
    expect(parent.query).toEqual({ limit: 50 });
    expect(validate({ limit: 'x' })).toBe(false);
    expect(validate.errors).toEqual([expect.objectContaining({ instancePath: '/limit', keyword: 'type' })]);
    expect(validate({ limit: 3 })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(compiled).toBe(1);
  });

  it('builds a serializer at its first response, the same output as fast-json-stringify', () => {
    const compiler = lazySerializerFactory()({}, {});
    const serialize = compiler({
      schema: { type: 'object', properties: { id: { type: 'string' } } },
      method: 'GET',
      url: '/x',
      httpStatus: '200',
    });
    expect(serialize({ id: 'a', secret: 'not in the schema' })).toBe('{"id":"a"}');
  });

  describe('nullable fields as a list of types for the serializer (decisions D216)', () => {
    const serializerFor = (schema: unknown) =>
      lazySerializerFactory()({}, {})({ schema, method: 'GET', url: '/x', httpStatus: '200' });
    // fast-json-stringify on the schema as written (its anyOf branches picked by Ajv).
    const withoutRewrite = (schema: unknown) =>
      (SerializerSelector as unknown as () => (s: unknown, o: unknown) => (r: unknown) => (d: unknown) => string)()(
        {},
        {},
      )({ schema, method: 'GET', url: '/x', httpStatus: '200' });

    it('rewrites anyOf [T, null] of one plain type, leaves the route schema and other unions alone', () => {
      const schema = Type.Object({
        name: Nullable(Type.String({ maxLength: 5, description: 'd' })),
        at: Nullable(DateTime),
        count: Nullable(Type.Integer()),
        either: Type.Union([Type.String(), Type.Integer()]),
        tags: Nullable(Type.Array(Type.String())),
        nested: Type.Array(Type.Object({ flag: Nullable(Type.Boolean()) })),
      });
      const before = JSON.stringify(schema);
      const rewritten = serializerSchema(schema) as { properties: Record<string, Record<string, unknown>> };
      expect(JSON.stringify(schema)).toBe(before);
      expect(rewritten.properties.name).toEqual({ type: ['string', 'null'], maxLength: 5, description: 'd' });
      expect(rewritten.properties.at).toMatchObject({ type: ['string', 'null'], format: 'date-time' });
      expect(rewritten.properties.count).toEqual({ type: ['integer', 'null'] });
      expect(rewritten.properties.either).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
      expect(rewritten.properties.tags).toEqual({ type: ['array', 'null'], items: { type: 'string' } });
      expect(
        (rewritten.properties.nested as { items: { properties: Record<string, unknown> } }).items.properties.flag,
      ).toEqual({ type: ['boolean', 'null'] });
      // Shared sub-schemas are rewritten once.
      expect(serializerSchema(schema)).toBe(rewritten);
    });

    it('serializes a contact as the anyOf schema did: nulls, values, dates and property values', () => {
      // The schema's own example, some of its values null, with property values and Dates.
      const contact = {
        ...((ContactSchema as { examples?: Record<string, unknown>[] }).examples?.[0] ?? {}),
        last_name: null,
        phone: null,
        city: null,
        properties: {
          tier: {
            property_id: 'pr_1',
            kind: 'TEXT',
            value_text: 'gold',
            value_number: null,
            value_bool: null,
            value_date: null,
            value_json: null,
          },
          score: {
            property_id: null,
            kind: 'NUMBER',
            value_text: null,
            value_number: 12.5,
            value_bool: false,
            value_date: '2026-01-02',
            value_json: { a: [1] },
          },
        },
        opted_out_at: new Date('2026-01-15T09:30:00.123Z'),
        updated_at: new Date('2026-01-16T09:30:00.000Z'),
      };
      const rewritten = serializerFor(ContactSchema)(contact);
      expect(JSON.parse(rewritten)).toEqual(JSON.parse(JSON.stringify(contact)));
      // The same text as fast-json-stringify gives for the schema with its anyOf (compiled without the rewrite).
      expect(rewritten).toBe(withoutRewrite(ContactSchema)(contact));
    });
  });
});

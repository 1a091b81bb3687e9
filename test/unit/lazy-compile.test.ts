import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { lazySerializerFactory, lazyValidator } from '../../src/http/lazy-compile.ts';

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
});

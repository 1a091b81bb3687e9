// Property-based fuzzing driven by the OpenAPI document (D144): for every /v1 operation, fast-check generates
// requests from the documented schemas (path ids, query parameters, bodies) and mutates them (wrong types, unknown
// and missing fields, U+0000, huge and deep values, random JSON and raw text). Every answer must be below 500 and
// every error in the contract's shape. Used by test/fuzz/openapi-fuzz.test.ts (short) and scripts/fuzz.ts (long).
import fc from 'fast-check';
import type { Harness } from '../helpers/harness.ts';
import {
  fillPath,
  type JsonSchema,
  type Operation,
  operationsOf,
  type Parameter,
} from '../helpers/openapi-operations.ts';
import { createOwnedResources, type OwnedResources } from '../helpers/owned-resources.ts';

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '%',
  '%zz',
  '../../etc/passwd',
  "' or 1=1 --",
  '\ud800',
  '😀',
  'ÿ',
  '9'.repeat(40),
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  'a,b,,c',
  'x'.repeat(5000),
];

const nastyString = fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }));

const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  nastyString,
  fc.constantFrom(1e308, -1e308, 2 ** 63, -(2 ** 63), 0.1, Number.MAX_SAFE_INTEGER + 2),
);

function branches(schema: JsonSchema): JsonSchema[] {
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
}

/** Values that the schema describes (roughly valid): the starting point of mutations. */
export function arbitraryFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 1 });
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const options = branches(schema);
  if (options.length > 0) return fc.oneof(...options.map((branch) => arbitraryFor(branch, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryFor(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      if (Object.keys(properties).length === 0)
        return fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 });
      return fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, property]) => [name, arbitraryFor(property, depth + 1)]),
        ),
        { requiredKeys: (schema.required ?? []).filter((name) => name in properties) },
      );
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  const max = Math.min(schema.maxLength ?? 30, 30);
  const min = Math.min(schema.minLength ?? 0, max);
  switch (schema.format) {
    case 'date-time':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
  }
  if (schema.pattern) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length <= (schema.maxLength ?? 1e9));
    } catch {
      // A pattern fast-check cannot generate from: plain strings.
    }
  }
  return fc.string({ minLength: min, maxLength: max });
}

type Mutation = 'none' | 'wrongField' | 'dropField' | 'unknownField' | 'nastyField' | 'wholeJson' | 'deep' | 'raw';

/** A body from the schema, mutated one way or another. */
function bodyArbitrary(schema: JsonSchema): fc.Arbitrary<{ json?: unknown; raw?: string }> {
  return fc
    .tuple(
      arbitraryFor(schema),
      fc.constantFrom<Mutation>(
        'none',
        'none',
        'wrongField',
        'dropField',
        'unknownField',
        'nastyField',
        'wholeJson',
        'deep',
        'raw',
      ),
      anyJson,
      nastyString,
      fc.nat(),
      fc.integer({ min: 10, max: 20_000 }),
    )
    .map(([valid, mutation, json, text, pick, depth]) => {
      const object =
        valid !== null && typeof valid === 'object' && !Array.isArray(valid) ? { ...(valid as object) } : {};
      const keys = Object.keys(schema.properties ?? {});
      const key = keys.length > 0 ? (keys[pick % keys.length] as string) : 'field';
      switch (mutation) {
        case 'wrongField':
          return { json: { ...object, [key]: json } };
        case 'dropField':
          delete (object as Record<string, unknown>)[key];
          return { json: object };
        case 'unknownField':
          return { json: { ...object, [`x_${text.slice(0, 10)}`]: json } };
        case 'nastyField':
          return { json: { ...object, [key]: text } };
        case 'wholeJson':
          return { json };
        case 'deep':
          return { raw: `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}` };
        case 'raw':
          return { raw: text };
        default:
          return { json: valid };
      }
    });
}

// A lone surrogate cannot be percent-encoded as UTF-8; it goes out as U+FFFD, as a browser would send it.
const encode = (value: string) => encodeURIComponent(value.toWellFormed());

function queryArbitrary(parameters: Parameter[]): fc.Arbitrary<string> {
  if (parameters.length === 0) return fc.constant('');
  const one = (parameter: Parameter) =>
    fc
      .oneof(
        arbitraryFor(parameter.schema).map((value) => (Array.isArray(value) ? value : [value])),
        fc.array(nastyString, { minLength: 1, maxLength: 3 }),
      )
      .map((values) =>
        values
          .filter((value) => value !== undefined)
          .map((value) => `${encode(parameter.name)}=${encode(String(value))}`)
          .join('&'),
      );
  return fc
    .subarray(parameters, { minLength: 0 })
    .chain(
      (chosen): fc.Arbitrary<string[]> =>
        chosen.length === 0 ? fc.constant([]) : fc.tuple(...chosen.map(one)).map((parts) => [...parts]),
    )
    .map((parts) => (parts.length > 0 ? `?${parts.filter(Boolean).join('&')}` : ''));
}

function pathArbitrary(operation: Operation, owned: OwnedResources): fc.Arbitrary<string> {
  if (operation.pathParams.length === 0) return fc.constant(operation.path);
  const ids = operation.pathParams.map((name) =>
    fc.oneof(fc.constant(owned.ids[name] ?? 'missing'), nastyString, fc.string({ maxLength: 120 })),
  );
  return fc.tuple(...ids).map((values) => {
    const byName = Object.fromEntries(operation.pathParams.map((name, index) => [name, String(values[index])]));
    return fillPath(operation, (name) => byName[name] ?? '');
  });
}

export interface FuzzRequest {
  method: string;
  url: string;
  body?: { json?: unknown; raw?: string } | undefined;
}

export function requestArbitrary(operation: Operation, owned: OwnedResources): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      pathArbitrary(operation, owned),
      queryArbitrary(operation.query),
      operation.body ? bodyArbitrary(operation.body) : fc.constant(undefined),
    )
    .map(([path, query, body]) => ({ method: operation.method, url: `${path}${query}`, body }));
}

/** The contract's error shapes: `{detail: string}`, `{detail: {code, …}}` or `{detail: [{loc, msg, type, …}]}`. */
export function isContractError(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== 'detail') return false;
  const detail = (body as { detail: unknown }).detail;
  if (typeof detail === 'string') return detail.length > 0;
  if (Array.isArray(detail)) {
    return (
      detail.length > 0 &&
      detail.every(
        (issue) =>
          issue !== null &&
          typeof issue === 'object' &&
          Array.isArray(issue.loc) &&
          ['body', 'query', 'path', 'header'].includes(issue.loc[0]) &&
          typeof issue.msg === 'string' &&
          typeof issue.type === 'string',
      )
    );
  }
  return detail !== null && typeof detail === 'object' && typeof (detail as { code?: unknown }).code === 'string';
}

export interface FuzzSetup {
  operations: Operation[];
  owned: OwnedResources;
}

export async function prepareFuzz(h: Harness): Promise<FuzzSetup> {
  const operations = operationsOf(h.app.swagger());
  return { operations, owned: await createOwnedResources(h) };
}

/** Sends one request; throws (a property failure) on a 5xx or an error outside the contract's shape. */
export async function sendAndCheck(h: Harness, key: string, request: FuzzRequest): Promise<void> {
  const headers: Record<string, string> = {};
  if (request.body?.raw !== undefined) headers['content-type'] = 'application/json';
  const response = await h.api(request.method, request.url, {
    key,
    headers,
    ...(request.body?.raw !== undefined ? { rawBody: request.body.raw } : {}),
    ...(request.body && 'json' in request.body && request.body.raw === undefined ? { body: request.body.json } : {}),
  });
  const label = `${request.method} ${request.url.slice(0, 300)} → ${response.status} ${response.text.slice(0, 300)}`;
  if (response.status >= 500) throw new Error(`5xx: ${label}`);
  if (response.status >= 400 && !isContractError(response.body)) throw new Error(`not the contract's shape: ${label}`);
}

/** Runs `runs` generated requests per operation; resolves with the number of requests sent. */
export async function fuzzOperations(h: Harness, setup: FuzzSetup, runs: number, seed?: number): Promise<number> {
  let sent = 0;
  for (const operation of setup.operations) {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(operation, setup.owned), async (request) => {
        sent++;
        await sendAndCheck(h, setup.owned.key, request);
      }),
      { numRuns: runs, ...(seed !== undefined ? { seed } : {}), endOnFailure: true },
    );
  }
  return sent;
}

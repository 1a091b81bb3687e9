// Finishes the OpenAPI document that @fastify/swagger builds from the route schemas, so that generators get what the
// API really does (decisions D14–D17): titled schemas become named components referenced with
// `$ref`; every response declares its headers, its `detail` codes and an example; operations with a body list 413
// and 415; array query parameters say that a comma-separated value works too (decisions §2).
import { DETAIL_CODES, ErrorBody, OPEN_ENUM, ValidationIssueSchema } from './schemas.ts';
import { scopeOf } from './scopes.ts';
import { CHECKED_IN_ORDER } from './validation.ts';

// biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON walked generically.
type Json = any;

const REF = '#/components/schemas/';
const isObject = (value: unknown): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/** Response headers (contract: every /v1 response carries the rate-limit headers and a request id). */
export const RESPONSE_HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed per one-second window (absent only while the rate-limit store is unreachable).',
    schema: { type: 'integer', examples: [20] },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', examples: [19] },
  },
  'X-RateLimit-Reset': {
    description: 'Unix second at which the window ends.',
    schema: { type: 'integer', examples: [1768469400] },
  },
  'X-Request-Id': {
    description: 'Identifier of this request, also on its log lines.',
    required: true,
    schema: { type: 'string', examples: ['req-01JH5ZK3Q8W4Y2N7R6T9V0B1C2'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', examples: [1] },
  },
  'Idempotent-Replayed': {
    description: '`true` when the answer is the broadcast of an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Codes written as a bare string in `detail`; the others are objects with a `code`. */
const STRING_CODES = new Set([
  'missing_bearer_token',
  'invalid_api_key',
  'api_key_expired',
  'api_key_required',
  'scale_plan_required',
  'trial_expired',
  'subscription_required',
  'not_found',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal_error',
  'bad_request',
  'uri_too_long',
  'service_unavailable',
]);

const bodyErrors: Record<string, { description: string; code: string }> = {
  '413': { description: 'Body over 1 MiB.', code: 'payload_too_large' },
  '415': { description: 'Body is not JSON.', code: 'unsupported_media_type' },
};

// ---------------------------------------------------------------------------------------------- components

const comparable = (schema: Json) =>
  JSON.stringify(schema, (key, value) =>
    key === 'description' || key === 'examples' || key === 'example' || key.startsWith('x-') ? undefined : value,
  );

/** An open enum (`OpenEnum`) as generators read it: the known values, or any other string. */
function openEnum({ [OPEN_ENUM]: values, type: _type, ...rest }: Record<string, Json>): Record<string, Json> {
  return {
    anyOf: [
      { type: 'string', enum: values },
      { type: 'string', description: 'A value added later.' },
    ],
    ...rest,
  };
}

/** Replaces every titled schema below `node` with a `$ref` to a component of that name; writes open enums out. */
function hoist(given: Json, components: Record<string, Json>): Json {
  if (Array.isArray(given)) return given.map((item) => hoist(item, components));
  if (!isObject(given)) return given;
  const node = Array.isArray(given[OPEN_ENUM]) ? openEnum(given) : given;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = ['examples', 'example', 'default', 'const', 'enum'].includes(key) ? value : hoist(value, components);
  }
  if (typeof out.title !== 'string' || out.$ref !== undefined) return out;
  const name = out.title;
  const known = components[name];
  if (!known) {
    const { [DETAIL_CODES]: _codes, 'x-response-description': _description, ...component } = out;
    components[name] = component;
  } else {
    if (comparable(known) !== comparable(out)) throw new Error(`Two different schemas are named ${name}`);
    if (known.examples === undefined && out.examples !== undefined) known.examples = out.examples;
  }
  const ref: Json = { $ref: `${REF}${name}` };
  if (out.description !== undefined && out.description !== components[name].description) {
    ref.description = out.description;
  }
  return ref;
}

// ---------------------------------------------------------------------------------------------- examples

function resolve(schema: Json, components: Record<string, Json>): Json {
  let current = schema;
  for (let depth = 0; isObject(current) && typeof current.$ref === 'string' && depth < 10; depth++) {
    current = components[current.$ref.slice(REF.length)];
  }
  return current;
}

/** An example of a schema: its own `examples`, else one built from its parts (every property of an object). */
export function exampleOf(schema: Json, components: Record<string, Json>, depth = 0): Json {
  const target = resolve(schema, components);
  if (!isObject(target) || depth > 12) return null;
  if (Array.isArray(target.examples) && target.examples.length > 0) return target.examples[0];
  if (target.example !== undefined) return target.example;
  if (target.const !== undefined) return target.const;
  if (target.default !== undefined) return target.default;
  if (Array.isArray(target.enum)) return target.enum[0];
  const variants = target.anyOf ?? target.oneOf;
  if (Array.isArray(variants)) {
    const chosen = variants.find((variant: Json) => resolve(variant, components)?.type !== 'null') ?? variants[0];
    return exampleOf(chosen, components, depth + 1);
  }
  const type = Array.isArray(target.type) ? target.type.find((t: string) => t !== 'null') : target.type;
  switch (type) {
    case 'object': {
      const result: Record<string, Json> = {};
      for (const [name, property] of Object.entries(target.properties ?? {})) {
        result[name] = exampleOf(property, components, depth + 1);
      }
      return result;
    }
    case 'array': {
      const item = exampleOf(target.items ?? {}, components, depth + 1);
      return Array.from({ length: Math.max(1, target.minItems ?? 1) }, () => item);
    }
    case 'string':
      if (target.format === 'date-time') return '2026-01-15T09:30:00.000Z';
      if (target.format === 'date') return '2026-01-15';
      if (target.format === 'email') return 'ana@example.com';
      return 'string';
    case 'integer':
    case 'number':
      return target.minimum ?? 0;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function errorExample(code: string): Json {
  if (code === 'validation_error')
    return { detail: [(ValidationIssueSchema as { examples?: unknown[] }).examples?.[0]] };
  if (code === 'insufficient_scope') return { detail: { code, required: 'contacts:write' } };
  return { detail: STRING_CODES.has(code) ? code : { code } };
}

// ---------------------------------------------------------------------------------------------- parameters

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The schema of one comma-separated value of an array parameter's items (decisions §2). */
function commaSeparated(items: Json, components: Record<string, Json>): Json {
  const target = resolve(items, components);
  const known = Array.isArray(target?.enum)
    ? target.enum
    : target?.anyOf?.find((variant: Json) => Array.isArray(variant.enum))?.enum;
  const one = known
    ? `(?:${known.map((value: string) => escapeRegExp(value)).join('|')})`
    : typeof target?.pattern === 'string'
      ? `(?:${target.pattern.replace(/^\^/, '').replace(/\$$/, '')})`
      : '[^,]*';
  return {
    type: 'string',
    pattern: `^${one}(?:,${one})+$`,
    description: 'Several values in one, separated by commas.',
  };
}

function finishParameter(parameter: Json, components: Record<string, Json>): void {
  if (parameter.in !== 'query' || parameter.schema?.type !== 'array') return;
  parameter.style = 'form';
  parameter.explode = true;
  parameter.description = [
    parameter.description ?? parameter.schema.description,
    `Repeat the parameter (\`?${parameter.name}=A&${parameter.name}=B\`) or separate values by commas (\`?${parameter.name}=A,B\`).`,
  ]
    .filter(Boolean)
    .join(' ');
  parameter.schema.items = { anyOf: [parameter.schema.items, commaSeparated(parameter.schema.items, components)] };
}

// ---------------------------------------------------------------------------------------------- responses

function finishResponse(status: string, response: Json, operationId: string, components: Record<string, Json>) {
  const media = response.content?.['application/json'];
  const codes: string[] | undefined = media?.schema?.[DETAIL_CODES];
  if (media?.schema) {
    delete media.schema[DETAIL_CODES];
    media.schema = hoist(media.schema, components);
    if (isObject(media.schema) && media.schema.$ref && media.schema.description) delete media.schema.description;
  }
  if (codes) {
    response['x-detail-codes'] = codes;
    response.description = `${response.description} \`detail\` codes: ${codes.map((code) => `\`${code}\``).join(', ')}.`;
    delete media.example;
    media.examples = Object.fromEntries(codes.map((code) => [code, { summary: code, value: errorExample(code) }]));
  } else if (media && media.example === undefined && media.examples === undefined) {
    media.example = exampleOf(media.schema, components);
  }
  const headers: Record<string, Json> = {};
  for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id']) {
    headers[name] = headerRef(name);
  }
  if (status === '429') headers['Retry-After'] = headerRef('Retry-After');
  if (status === '503') {
    headers['Retry-After'] = {
      description: 'Seconds to wait before trying again, when known.',
      schema: { type: 'integer' },
    };
  }
  if (operationId === 'sendTemplate' && status === '202')
    headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
  response.headers = { ...response.headers, ...headers };
}

function bodyErrorResponse(status: string): Json {
  const { description, code } = bodyErrors[status] as { description: string; code: string };
  return { description, content: { 'application/json': { schema: { $ref: `${REF}Error`, [DETAIL_CODES]: [code] } } } };
}

// ---------------------------------------------------------------------------------------------- the document

/**
 * The webhooks section is not a route's schema, so @fastify/swagger does not convert it: write TypeBox's records
 * (`patternProperties: {"^.*$": …}`) as the `additionalProperties` it writes for routes, so both name one component.
 */
function asSwaggerWrites(node: Json): Json {
  if (Array.isArray(node)) return node.map(asSwaggerWrites);
  if (!isObject(node)) return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) out[key] = asSwaggerWrites(value);
  const patterns = out.patternProperties;
  if (isObject(patterns) && Object.keys(patterns).length === 1 && '^.*$' in patterns) {
    out.additionalProperties = patterns['^.*$'];
    delete out.patternProperties;
  }
  return out;
}

export function finishDocument(document: Json): Json {
  const components: Record<string, Json> = {};
  hoist(clone(ErrorBody), components);

  for (const operations of Object.values<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(operations)) {
      if (!isObject(operation) || !operation.responses) continue;
      operation.description ??= operation.summary;
      // decisions §18: the scope from the one table, as the operation's security requirement (OpenAPI 3.1 lets a
      // bearer scheme list the roles it needs) and in words.
      const scope = scopeOf(operation.operationId);
      if (scope) {
        operation.security = [{ apiKey: [scope] }];
        operation.description = `${operation.description}\n\nNeeds the \`${scope}\` scope.`;
      }
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema) parameter.schema = hoist(parameter.schema, components);
        finishParameter(parameter, components);
      }
      const body = operation.requestBody?.content?.['application/json'];
      if (body?.schema) {
        if (body.schema['x-optional-body']) {
          operation.requestBody.required = false;
          delete body.schema['x-optional-body'];
        }
        delete body.schema[CHECKED_IN_ORDER];
        body.schema = hoist(body.schema, components);
        if (body.example === undefined && body.examples === undefined)
          body.example = exampleOf(body.schema, components);
        for (const status of Object.keys(bodyErrors)) operation.responses[status] ??= bodyErrorResponse(status);
      }
      const sorted = Object.keys(operation.responses).sort();
      operation.responses = Object.fromEntries(sorted.map((status) => [status, operation.responses[status]]));
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        finishResponse(status, response, operation.operationId, components);
      }
    }
  }
  // The `webhooks` section (decisions §11): event bodies reference the same named components as the paths.
  for (const webhook of Object.values<Json>(document.webhooks ?? {})) {
    for (const operation of Object.values<Json>(webhook)) {
      const body = operation?.requestBody?.content?.['application/json'];
      if (!body?.schema) continue;
      body.schema = hoist(asSwaggerWrites(clone(body.schema)), components);
      if (body.example === undefined) body.example = exampleOf(body.schema, components);
    }
  }
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    headers: RESPONSE_HEADERS,
  };
  return document;
}

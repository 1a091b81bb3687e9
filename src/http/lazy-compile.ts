// Validators and serializers compiled at a route's first use, not at start (D162).
// Fastify compiles every route's schemas when the app gets ready: ≈ 150 Ajv validators and fast-json-stringify
// serializers, seconds of a first start (a CPU profile: 40 % of `buildApp`) and heap kept for routes a process may
// never serve (a worker-only role, a read-heavy API). Compiling on first use gives the same functions: a bad schema
// still fails, on the first request of its route (the suite's requests cover each route).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';

type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/** A validator that compiles on its first call; Fastify reads `errors` and `schemaEnv` off it, as off Ajv's. */
export function lazyValidator(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const validate: Validate = (data, context) => {
    compiled ??= compile();
    const result = context === undefined ? compiled(data) : compiled(data, context);
    validate.errors = compiled.errors;
    return result;
  };
  // Fastify passes the parent (so that Ajv's defaults and coercion can replace the root value) only to functions
  // carrying `schemaEnv`, as Ajv's do.
  validate.schemaEnv = true;
  return validate;
}

export function lazyValidatorCompiler(compiler: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
  return (route) => lazyValidator(() => compiler(route) as Validate) as ReturnType<FastifySchemaCompiler<unknown>>;
}

type Serialize = (data: unknown) => string;
type SerializerCompiler = (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;

/** Fastify's own serializer factory (fast-json-stringify), each route's function built at its first response. */
export function lazySerializerFactory(): (externalSchemas: unknown, options: unknown) => SerializerCompiler {
  const factory = (SerializerSelector as unknown as () => (schemas: unknown, options: unknown) => SerializerCompiler)();
  return (externalSchemas, options) => {
    const compiler = factory(externalSchemas, options);
    return (route) => {
      let compiled: Serialize | undefined;
      return (data) => {
        compiled ??= compiler({ ...route, schema: serializerSchema(route.schema) });
        return compiled(data);
      };
    };
  };
}

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** Keywords whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'examples', 'example', 'default', 'required']);
/** Keywords that make a branch more than "a value of one type" to fast-json-stringify. */
const BRANCHING = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref', 'const', 'enum'];
const SINGLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);

/**
 * `anyOf: [T, null]` (TypeBox's `Nullable`) as `type: [T's type, "null"]`, for the serializer only (D216).
 * fast-json-stringify picks an `anyOf` branch by running an Ajv validator on the value, which for a null fails the
 * first branch and allocates its errors: a page of 50 contacts ran ≈ 1,000 such checks and a third of the API's
 * allocations were the serializer's. A list of types is a `typeof` test. The OpenAPI document and the request
 * validators keep the schemas as written (their `anyOf`, their error messages).
 */
function nullableAsTypeList(schema: Schema): Schema | undefined {
  const branches = schema.anyOf;
  if (!Array.isArray(branches) || branches.length !== 2) return undefined;
  const nullAt = branches.findIndex((b) => isSchema(b) && b.type === 'null' && Object.keys(b).length === 1);
  const other = branches[1 - nullAt];
  if (nullAt < 0 || !isSchema(other) || typeof other.type !== 'string' || !SINGLE_TYPES.has(other.type)) {
    return undefined;
  }
  if (BRANCHING.some((keyword) => keyword in other)) return undefined;
  const { anyOf: _branches, ...siblings } = schema;
  return { ...siblings, ...other, type: [other.type, 'null'] };
}

const rewritten = new WeakMap<object, unknown>();

/** A copy of a response schema as the serializer should see it (the route's own schema object is left alone). */
export function serializerSchema(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const done = rewritten.get(schema);
  if (done !== undefined) return done;
  let result: unknown;
  if (Array.isArray(schema)) {
    result = schema.map(serializerSchema);
  } else {
    const source = nullableAsTypeList(schema as Schema) ?? (schema as Schema);
    const copy: Schema = {};
    for (const [key, value] of Object.entries(source)) {
      copy[key] = DATA_KEYWORDS.has(key) ? value : serializerSchema(value);
    }
    result = copy;
  }
  rewritten.set(schema, result);
  return result;
}

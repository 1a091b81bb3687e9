// Validators and serializers compiled at a route's first use, not at start (issue 20 points 2 and 4, decisions
// D162). Fastify compiles every route's schemas when the app gets ready: ≈ 150 Ajv validators and fast-json-stringify
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
        compiled ??= compiler(route);
        return compiled(data);
      };
    };
  };
}

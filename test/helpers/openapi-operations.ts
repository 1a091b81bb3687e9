// The /v1 operations of the OpenAPI document, for suites that run one case against every route (auth, isolation,
// bad input, fuzzing): new routes join them without anyone remembering to add them.

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JsonSchema;
}

export interface Operation {
  method: string;
  /** The path as documented, `{name}` for parameters. */
  path: string;
  operationId: string;
  pathParams: string[];
  query: Parameter[];
  body: JsonSchema | undefined;
}

interface Document {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        parameters?: Parameter[];
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
      }
    >
  >;
}

/** A schema with a `$ref` to `#/components/schemas/…` replaced by what it names (one level, as bodies use it). */
function resolve(document: Document, schema: JsonSchema | undefined): JsonSchema | undefined {
  const ref = (schema as { $ref?: string } | undefined)?.$ref;
  if (!ref?.startsWith('#/components/schemas/')) return schema;
  const components = (document as { components?: { schemas?: Record<string, JsonSchema> } }).components;
  return components?.schemas?.[ref.slice('#/components/schemas/'.length)];
}

/** The /v1 operations (the console's own routes under /app/api take a session and have suites of their own). */
export function operationsOf(document: unknown): Operation[] {
  return Object.entries((document as Document).paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId ?? `${method} ${path}`,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string),
        query: (operation.parameters ?? []).filter((parameter) => parameter.in === 'query'),
        body: resolve(document as Document, operation.requestBody?.content?.['application/json']?.schema),
      })),
    );
}

/** The path with each parameter replaced by the value `ids` gives for its name. */
export function fillPath(operation: Operation, ids: (name: string) => string): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => encodeURIComponent(ids(name).toWellFormed()));
}

/** One value of a JSON type other than the schema's (for "wrong type" cases). */
export function wrongTypeFor(schema: JsonSchema): unknown {
  const types = new Set(
    [schema.type, ...(schema.anyOf ?? []).map((branch) => branch.type), ...(schema.oneOf ?? []).map((b) => b.type)]
      .flat()
      .filter(Boolean),
  );
  const candidates: [string, unknown][] = [
    ['object', { wrong: true }],
    ['array', ['wrong']],
    ['boolean', true],
    ['string', 'wrong'],
    ['number', 12.5],
  ];
  for (const [type, value] of candidates) {
    if (types.size === 0) return undefined; // any JSON is accepted: no wrong type exists
    if (!types.has(type) && !(type === 'number' && types.has('integer'))) return value;
  }
  return undefined;
}

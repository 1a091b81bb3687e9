// Schema validation with two Ajv instances: bodies are never coerced between JSON types (a number is not a string),
// while query, path and header values are parsed from their strings. Ajv's errors become FastAPI-style issues.
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import countries from 'i18n-iso-countries';
import { ApiError } from './api-error.ts';
import { lazyValidatorCompiler } from './lazy-compile.ts';
import { COUNTRY_FORMAT, type ValidationIssue } from './schemas.ts';

const baseOptions: Options = {
  allErrors: true,
  verbose: true,
  strict: false,
  useDefaults: true,
  removeAdditional: false,
};

/** D135: the ISO 3166-1 alpha-2 codes in use, from a maintained list (i18n-iso-countries). */
const ALPHA2 = new Set(Object.keys(countries.getAlpha2Codes()));

export function makeAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({ ...baseOptions, coerceTypes });
  // ajv-formats ships a CommonJS default export.
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  addCountryFormat(ajv);
  return ajv;
}

/** Registers the country format on an Ajv instance (the API's, and the tests' that check answers against the document). */
export function addCountryFormat(ajv: { addFormat(name: string, format: (value: string) => boolean): unknown }): void {
  // A value of the wrong shape is the pattern's to refuse: one reason per field, not two.
  ajv.addFormat(COUNTRY_FORMAT, (value: string) => !/^[A-Z]{2}$/.test(value) || ALPHA2.has(value));
}

/**
 * A route's body schema marked so (see src/http/ordered-body.ts) is checked by its service at the place the decisions'
 * ordered checks give the body: the route's validator lets every body through.
 */
export const CHECKED_IN_ORDER = 'x-checked-in-order';

export function registerValidation(app: FastifyInstance): void {
  const strict = makeAjv(false);
  const parsing = makeAjv('array');
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    if (httpPart === 'body' && (schema as Record<string, unknown>)[CHECKED_IN_ORDER]) return () => true;
    const validate = (httpPart === 'body' ? strict : parsing).compile(schema as object);
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
  app.setValidatorCompiler(lazyValidatorCompiler(compiler));
  app.addHook('preValidation', refuseNul);
}

// PostgreSQL cannot store U+0000 in text or jsonb: such a value would fail in the database as a 500. It is refused
// before validation: a 422 at its place in a body or query, a 404 in a path (no id contains it).
const NUL = '\u0000';
const NUL_ISSUE = { msg: 'String should not contain the NUL character (U+0000)', type: 'value_error' } as const;
const MAX_NUL_ISSUES = 10;

/** Whether any string or key within `root` holds a NUL: no path is built for the requests (nearly all) without one. */
function containsNul(root: unknown): boolean {
  if (typeof root === 'string') return root.includes(NUL);
  if (root === null || typeof root !== 'object') return false;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.includes(NUL)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        if (key.includes(NUL)) return true;
        stack.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

function nulPaths(root: unknown): (string | number)[][] {
  if (!containsNul(root)) return [];
  const found: (string | number)[][] = [];
  const stack: [unknown, (string | number)[]][] = [[root, []]];
  while (stack.length > 0 && found.length < MAX_NUL_ISSUES) {
    const [value, path] = stack.pop() as [unknown, (string | number)[]];
    if (typeof value === 'string') {
      if (value.includes(NUL)) found.push(path);
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) stack.push([value[index], [...path, index]]);
    } else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
      for (const [key, item] of Object.entries(value).reverse()) {
        if (key.includes(NUL)) found.push([...path, key]);
        else stack.push([item, [...path, key]]);
      }
    }
  }
  return found;
}

async function refuseNul(request: FastifyRequest): Promise<void> {
  if (nulPaths(request.params).length > 0) throw new ApiError(404, 'not_found');
  const issues: ValidationIssue[] = [
    ...nulPaths(request.query).map((path) => ({ loc: ['query', ...path.slice(0, 1)], ...NUL_ISSUE })),
    ...nulPaths(request.body).map((path) => ({ loc: ['body', ...path], ...NUL_ISSUE })),
  ];
  if (issues.length > 0) throw new ApiError(422, issues);
}

const PARTS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const TYPE_NAMES: Record<string, [string, string, string]> = {
  // json type -> [issue type for a body value, issue type for a parsed string, message]
  string: ['string_type', 'string_type', 'Input should be a valid string'],
  integer: ['int_type', 'int_parsing', 'Input should be a valid integer'],
  number: ['float_type', 'float_parsing', 'Input should be a valid number'],
  boolean: ['bool_type', 'bool_parsing', 'Input should be a valid boolean'],
  object: ['dict_type', 'dict_type', 'Input should be a valid dictionary or object'],
  array: ['list_type', 'list_type', 'Input should be a valid list'],
  null: ['none_required', 'none_required', 'Input should be None'],
};

function quoteList(values: unknown[]): string {
  const quoted = values.map((value) => `'${String(value)}'`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

function pathSegments(instancePath: string, root: unknown): (string | number)[] {
  if (instancePath === '') return [];
  const segments: (string | number)[] = [];
  let node: unknown = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const isIndex = Array.isArray(node) && /^\d+$/.test(key);
    segments.push(isIndex ? Number(key) : key);
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return segments;
}

function describe(error: ErrorObject, isBody: boolean): Omit<ValidationIssue, 'loc'> & { extraKey?: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { type: 'missing', msg: 'Field required', extraKey: String(params.missingProperty) };
    case 'additionalProperties':
      return {
        type: 'extra_forbidden',
        msg: 'Extra inputs are not permitted',
        extraKey: String(params.additionalProperty),
      };
    case 'type': {
      const expected = String(params.type).split(',')[0] ?? 'string';
      const names = TYPE_NAMES[expected] ?? ['type_error', 'type_error', `Input should be of type ${expected}`];
      const parsing = !isBody && expected !== 'string';
      return {
        type: parsing ? names[1] : names[0],
        msg: parsing && expected === 'integer' ? `${names[2]}, unable to parse string as an integer` : names[2],
      };
    }
    case 'pattern':
      return {
        type: 'string_pattern_mismatch',
        msg: `String should match pattern '${params.pattern}'`,
        ctx: { pattern: params.pattern },
      };
    case 'minLength':
      return {
        type: 'string_too_short',
        msg: `String should have at least ${params.limit} character${params.limit === 1 ? '' : 's'}`,
        ctx: { min_length: params.limit },
      };
    case 'maxLength':
      return {
        type: 'string_too_long',
        msg: `String should have at most ${params.limit} character${params.limit === 1 ? '' : 's'}`,
        ctx: { max_length: params.limit },
      };
    case 'minimum':
      return {
        type: 'greater_than_equal',
        msg: `Input should be greater than or equal to ${params.limit}`,
        ctx: { ge: params.limit },
      };
    case 'maximum':
      return {
        type: 'less_than_equal',
        msg: `Input should be less than or equal to ${params.limit}`,
        ctx: { le: params.limit },
      };
    case 'exclusiveMinimum':
      return { type: 'greater_than', msg: `Input should be greater than ${params.limit}`, ctx: { gt: params.limit } };
    case 'exclusiveMaximum':
      return { type: 'less_than', msg: `Input should be less than ${params.limit}`, ctx: { lt: params.limit } };
    case 'minItems':
      return {
        type: 'too_short',
        msg: `List should have at least ${params.limit} item${params.limit === 1 ? '' : 's'}`,
        ctx: { field_type: 'List', min_length: params.limit },
      };
    case 'maxItems':
      return {
        type: 'too_long',
        msg: `List should have at most ${params.limit} item${params.limit === 1 ? '' : 's'}`,
        ctx: { field_type: 'List', max_length: params.limit },
      };
    case 'minProperties':
      return {
        type: 'too_short',
        msg: `Object should have at least ${params.limit} field${params.limit === 1 ? '' : 's'}`,
        ctx: { field_type: 'Object', min_length: params.limit },
      };
    case 'maxProperties':
      return {
        type: 'too_long',
        msg: `Object should have at most ${params.limit} field${params.limit === 1 ? '' : 's'}`,
        ctx: { field_type: 'Object', max_length: params.limit },
      };
    case 'enum':
    case 'const': {
      const values = error.keyword === 'enum' ? (params.allowedValues as unknown[]) : [params.allowedValue];
      const expected = quoteList(values);
      return { type: 'enum', msg: `Input should be ${expected}`, ctx: { expected } };
    }
    case 'format': {
      const format = String(params.format);
      if (format === 'date')
        return { type: 'date_from_datetime_parsing', msg: 'Input should be a valid date in the format YYYY-MM-DD' };
      if (format === 'date-time')
        return { type: 'datetime_from_date_parsing', msg: 'Input should be a valid datetime' };
      if (format === COUNTRY_FORMAT)
        return { type: 'value_error', msg: 'Input should be an ISO 3166-1 alpha-2 country code (e.g. MX, US)' };
      if (format === 'email') return { type: 'value_error', msg: 'value is not a valid email address' };
      if (format === 'uri' || format === 'url') return { type: 'url_parsing', msg: 'Input should be a valid URL' };
      return { type: 'value_error', msg: `Input should match format '${format}'` };
    }
    case 'uniqueItems':
      return { type: 'value_error', msg: 'List items should be unique' };
    default:
      return { type: 'value_error', msg: error.message ?? 'Invalid value' };
  }
}

/** Turns Ajv errors into the contract's 422 array: one issue per failing location, the most useful first. */
export function validationIssues(
  errors: ErrorObject[] | unknown[],
  context: string | undefined,
  request: FastifyRequest,
): ValidationIssue[] {
  const part = PARTS[context ?? 'body'] ?? 'body';
  const root =
    context === 'querystring'
      ? request.query
      : context === 'params'
        ? request.params
        : context === 'headers'
          ? request.headers
          : request.body;
  return issuesAt(errors, part, root);
}

export function issuesAt(errors: ErrorObject[] | unknown[], part: string, root: unknown): ValidationIssue[] {
  const isBody = part === 'body';
  const ajvErrors = errors as ErrorObject[];
  // A nullable field fails both branches of its anyOf; the issue worth reporting is the non-null branch's.
  const withOtherIssue = new Set(
    ajvErrors.filter((e) => !(e.keyword === 'type' && e.params.type === 'null')).map((e) => e.instancePath),
  );
  // Likewise a value of one branch's type (a list where one object or a list is accepted) is reported by that
  // branch's own issue (`too_long`), not by the other branch's type mismatch.
  const withBranchIssue = new Set(
    ajvErrors.filter((e) => e.keyword !== 'type' && e.keyword !== 'anyOf').map((e) => e.instancePath),
  );
  const isBranchType = (e: ErrorObject) =>
    e.keyword === 'type' && e.schemaPath.includes('/anyOf/') && withBranchIssue.has(e.instancePath);
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of ajvErrors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    if (error.keyword === 'type' && error.params.type === 'null' && withOtherIssue.has(error.instancePath)) continue;
    if (isBranchType(error)) continue;
    const described = describe(error, isBody);
    const loc: (string | number)[] = [part, ...pathSegments(error.instancePath, root)];
    let input: unknown = error.data;
    if (described.extraKey !== undefined) {
      loc.push(described.extraKey);
      input =
        described.type === 'missing'
          ? error.data
          : (error.data as Record<string, unknown> | undefined)?.[described.extraKey];
    }
    // No body at all where one is required: FastAPI's "Field required" at ["body"].
    if (isBody && error.instancePath === '' && error.keyword === 'type' && (root === undefined || root === null)) {
      described.type = 'missing';
      described.msg = 'Field required';
      input = undefined;
    }
    const key = `${loc.join('\u0000')}|${described.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const issue: ValidationIssue = { loc, msg: described.msg, type: described.type };
    if (input !== undefined && echoable(input)) issue.input = input;
    if (described.ctx) issue.ctx = described.ctx;
    issues.push(issue);
  }
  return issues;
}

const MAX_ECHO_DEPTH = 4;
const MAX_ECHO_NODES = 100;
const MAX_ECHO_CHARS = 1000;

/** A 422 echoes the offending input only when it is small and shallow: never a huge or deeply nested value. */
function echoable(input: unknown): boolean {
  let nodes = 0;
  let chars = 0;
  const stack: [unknown, number][] = [[input, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (++nodes > MAX_ECHO_NODES || depth > MAX_ECHO_DEPTH) return false;
    if (typeof value === 'string') chars += value.length;
    else if (value !== null && typeof value === 'object') {
      for (const [name, item] of Object.entries(value)) {
        chars += name.length;
        stack.push([item, depth + 1]);
      }
    }
    if (chars > MAX_ECHO_CHARS) return false;
  }
  return true;
}

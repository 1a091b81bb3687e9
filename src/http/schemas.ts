// Shapes every route shares: nullable fields, string enums, the one phone schema, the error body and the error
// responses of each route. A schema with a `title` becomes a named component of the OpenAPI document
// (src/http/openapi-document.ts), referenced with `$ref` wherever it is used.
import { type Static, type TSchema, type TString, Type } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A string enum as JSON Schema `enum` (readable in OpenAPI and in 422 messages). Closed: for what clients send. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** The keyword that marks an open enum for the OpenAPI document (`x-open-enum`: the known values). */
export const OPEN_ENUM = 'x-open-enum';

/**
 * A string enum of a response, open to values added later: the contract lets every enum grow ("new values in string
 * or enum fields. Clients must ignore unknown fields and tolerate unknown string values"). At run time it is a plain
 * string (the serializer stays as fast as before); the document shows `anyOf` of the known enum and any string,
 * which openapi-typescript and most generators turn into "known literals or string" (decisions D15).
 */
export const OpenEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number] | (string & {})>({ type: 'string', [OPEN_ENUM]: [...values], ...options });

export const DateTime = Type.Unsafe<string | Date>({
  type: 'string',
  format: 'date-time',
  examples: ['2026-01-15T09:30:00.000Z'],
});
/** A timestamp a client sends. */
export const DateTimeInput = Type.String({ format: 'date-time', examples: ['2026-01-15T09:30:00.000Z'] });

/** E.164, the one phone pattern of the API (contract: phones are E.164). */
export const PHONE_PATTERN = '^\\+[1-9]\\d{1,14}$';
export const Phone = Type.String({
  pattern: PHONE_PATTERN,
  description: 'E.164, e.g. `+15551234567`.',
  examples: ['+15551234567'],
});

export const ValidationIssueSchema = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
      description: 'Where: `body`, `query`, `path` or `header`, then the field path.',
    }),
    msg: Type.String(),
    type: Type.String({ description: 'A stable issue type, e.g. `missing`, `extra_forbidden`, `string_type`.' }),
    input: Type.Optional(Type.Unknown()),
    ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  {
    additionalProperties: false,
    title: 'ValidationIssue',
    description: 'One field-level validation issue.',
    examples: [{ loc: ['body', 'email'], msg: 'value is not a valid email address', type: 'value_error' }],
  },
);
/** One item of a 422's `detail` array, as the document shows it. */
export type ValidationIssue = Static<typeof ValidationIssueSchema>;

export const ErrorDetailObject = Type.Object(
  { code: Type.String({ description: 'A stable error code.' }) },
  {
    additionalProperties: true,
    title: 'ErrorDetailObject',
    description: 'A structured error: a stable `code` and the fields that explain it.',
  },
);

export const ErrorBody = Type.Object(
  {
    detail: Type.Union([
      Type.String({ description: 'A stable error code, e.g. `not_found`.' }),
      ErrorDetailObject,
      Type.Array(ValidationIssueSchema, { description: 'Field-level validation issues (422).' }),
    ]),
  },
  {
    additionalProperties: false,
    title: 'Error',
    description: 'Every error: `detail` is a code, an object with a `code`, or (422) an array of issues.',
  },
);

/** The `detail` codes a status can carry on every /v1 operation; routes add their own. */
const commonCodes: Record<number, string[]> = {
  400: ['bad_request'],
  401: ['missing_bearer_token', 'invalid_api_key', 'api_key_expired'],
  403: ['api_key_required', 'insufficient_scope', 'scale_plan_required', 'trial_expired', 'subscription_required'],
  404: ['not_found'],
  413: ['payload_too_large'],
  414: ['uri_too_long'],
  415: ['unsupported_media_type'],
  422: ['validation_error'],
  429: ['rate_limited'],
  500: ['internal_error'],
  // D24, D129, D132: the database away, or busy (its pool or the organization's concurrency limit).
  503: ['service_unavailable', 'service_busy'],
};

const errorDescriptions: Record<number, string> = {
  400: 'Request addressed wrongly.',
  401: 'Key missing, unknown, revoked or expired.',
  402: 'Not enough messaging balance.',
  403: 'Valid credential, not allowed (`insufficient_scope` names the `required` scope).',
  404: 'Not found in this organization.',
  409: 'Conflict with the current state.',
  413: 'Body over 1 MiB.',
  415: 'Body is not JSON.',
  422: 'Validation failed: an array of `{loc, msg, type, input?, ctx?}` (`validation_error`), or `{code, …}` for a rule.',
  429: 'Over the rate limit; `Retry-After` says when to try again.',
  500: 'Unexpected fault.',
  503: 'A service behind the API did not answer; nothing was stored, try again.',
};

/** The keyword that carries a response's `detail` codes to the OpenAPI document (`x-detail-codes`). */
export const DETAIL_CODES = 'x-detail-codes';

export function errorResponse(status: number, description?: string, codes: string[] = [], common = commonCodes) {
  const all = [...new Set([...(common[status] ?? []), ...codes])];
  return Type.Object(ErrorBody.properties, {
    additionalProperties: false,
    title: 'Error',
    description: description ?? errorDescriptions[status] ?? 'Error.',
    ...(all.length > 0 ? { [DETAIL_CODES]: all } : {}),
  });
}

/** Per status: the route's own `detail` codes, and optionally a description replacing the default wording. */
export type RouteErrors = Record<number, string[] | { codes?: string[]; description: string }>;

/**
 * The error responses of a /v1 route: every route can answer 401, 403, 429 and 500 (and 413 and 415 with a body,
 * added by the document); routes name the others with the `detail` codes each can carry.
 */
export function v1Errors(errors: RouteErrors | number[] = {}) {
  if (Array.isArray(errors)) return v1Errors(Object.fromEntries(errors.map((status) => [status, []])));
  return routeErrors(errors, commonCodes, {});
}

function routeErrors(errors: RouteErrors, common: Record<number, string[]>, descriptions: Record<number, string>) {
  const statuses = [...new Set([401, 403, 429, 500, ...Object.keys(errors).map(Number)])].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => {
      const own = errors[status];
      const codes = Array.isArray(own) ? own : (own?.codes ?? []);
      const description = (Array.isArray(own) ? undefined : own?.description) ?? descriptions[status];
      return [status, errorResponse(status, description, codes, common)];
    }),
  );
}

/** The `detail` codes a status can carry on every console operation (/app/api, decisions §17). */
const consoleCodes: Record<number, string[]> = {
  ...commonCodes,
  401: ['session_required'],
  403: ['csrf_failed', 'forbidden_for_role'],
};

const consoleDescriptions: Record<number, string> = {
  401: 'No live console session (signed out, or ended after 12 hours idle or 7 days).',
  403: 'A change without the CSRF header and a same-origin `Origin`, or not allowed for the user’s role.',
};

/** The error responses of a console route: like `v1Errors`, with a session instead of a key. */
export const consoleErrors = (errors: RouteErrors = {}) => routeErrors(errors, consoleCodes, consoleDescriptions);

/** A success response schema with the response's own description (instead of "Default Response"). */
export const described = <T extends TSchema>(description: string, schema: T): T =>
  ({ ...schema, 'x-response-description': description }) as T;

/** The 204 of a delete. */
export const NoContent = (description: string) => Type.Unsafe<null>({ type: 'null', description });

/** Path parameters of one id, typed by its name (`{contact_id: string}`). */
export const IdParam = <const N extends string>(name: N) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 64 }) } as { [K in N]: TString }, {
    additionalProperties: false,
  });

/** D135: a string format checked against the ISO 3166-1 alpha-2 list (registered in validation.ts). */
export const COUNTRY_FORMAT = 'iso-3166-1-alpha-2';

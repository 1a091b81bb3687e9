// Shapes every route shares: nullable fields, string enums, the error body and the error responses of each route.
import { type TSchema, Type } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A string enum as JSON Schema `enum` (readable in OpenAPI and in 422 messages). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const DateTime = Type.String({ format: 'date-time' });

export const ValidationIssueSchema = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
    input: Type.Optional(Type.Unknown()),
    ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

export const ErrorBody = Type.Object(
  {
    detail: Type.Union([
      Type.String({ description: 'A stable error code, e.g. `not_found`.' }),
      Type.Object({ code: Type.String() }, { additionalProperties: true, description: 'A structured error.' }),
      Type.Array(ValidationIssueSchema, { description: 'Field-level validation issues.' }),
    ]),
  },
  { additionalProperties: false },
);

const errorDescriptions: Record<number, string> = {
  400: 'Request addressed wrongly (`invalid_channel`, `channel_id_required`).',
  401: 'Key missing, unknown or revoked: `missing_bearer_token`, `invalid_api_key`.',
  402: 'Not enough messaging balance: `messaging_insufficient_balance`.',
  403: 'Valid credential, not allowed: `api_key_required`, `scale_plan_required`, `trial_expired`, `subscription_required`.',
  404: 'Not found in this organization: `not_found`.',
  409: 'Conflict with the current state.',
  413: 'Body over 1 MiB: `payload_too_large`.',
  415: 'Body is not JSON: `unsupported_media_type`.',
  422: 'Validation failed: an array of `{loc, msg, type, input?, ctx?}`, or `{code, ...}` for a rule.',
  429: 'Over the rate limit: `rate_limited`, with `Retry-After: 1`.',
  500: 'Unexpected fault: `internal_error`.',
};

export function errorResponse(status: number, description?: string) {
  return Type.Object(ErrorBody.properties, {
    additionalProperties: false,
    description: description ?? errorDescriptions[status] ?? 'Error',
  });
}

/**
 * The error responses of a /v1 route: every route can answer 401, 403, 429 and 500; routes name the others.
 * Optional descriptions override the default wording for a status.
 */
export function v1Errors(statuses: number[] = [], descriptions: Record<number, string> = {}) {
  const all = [...new Set([401, 403, 429, 500, ...statuses])].sort((a, b) => a - b);
  return Object.fromEntries(all.map((status) => [status, errorResponse(status, descriptions[status])]));
}

/** Standard headers documented on every /v1 response. */
export const rateLimitHeaders = {
  'X-RateLimit-Limit': { schema: { type: 'integer' }, description: 'Requests allowed per one-second window.' },
  'X-RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Requests left in the current window.' },
  'X-RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix second at which the window ends.' },
  'X-Request-Id': { schema: { type: 'string' }, description: 'Identifier of this request, also in the logs.' },
};

export const IdParam = (name: string) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

// Errors as typed classes carrying the contract's codes (public-api.md, Errors; decisions §3). Every refusal of the
// API is an ApiError with the HTTP `status`, the contract's `code` and the whole `detail`; a subclass per status lets
// callers catch what they handle (`instanceof RateLimitError`) and read `code` for the rest.

/** One item of a 422 validation body (decisions §3). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** `detail` as the contract has it: a string code, an object with a stable `code`, or (422) a list of issues. */
export type ErrorDetail = string | ({ code: string } & Record<string, unknown>) | ValidationIssue[];

/** The code of a detail: the string itself, the object's `code`, or `validation_error` for a list of issues. */
export function codeOf(detail: ErrorDetail | undefined, status: number): string {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return 'validation_error';
  if (detail && typeof detail.code === 'string') return detail.code;
  return `http_${status}`;
}

export interface ApiErrorInit {
  status: number;
  detail: ErrorDetail;
  headers?: Headers;
}

export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The contract's code: `invalid_api_key`, `duplicate_contact`, `missing_variables`, `validation_error`, … */
  readonly code: string;
  /** The whole `detail` of the body, with the extra keys a code carries (`index`, `tokens`, `remaining`, …). */
  readonly detail: ErrorDetail;
  /** `X-Request-Id` of the response, to quote when asking for help. */
  readonly requestId: string | undefined;
  readonly headers: Headers;

  constructor(init: ApiErrorInit) {
    const code = codeOf(init.detail, init.status);
    super(`${init.status} ${code}`);
    this.status = init.status;
    this.code = code;
    this.detail = init.detail;
    this.headers = init.headers ?? new Headers();
    this.requestId = this.headers.get('x-request-id') ?? undefined;
  }
}

/** 400: the request is addressed wrongly (`invalid_channel`, `channel_id_required`). */
export class BadRequestError extends ApiError {
  override readonly name = 'BadRequestError';
}
/** 401: `missing_bearer_token`, `invalid_api_key` or `api_key_expired` (ApiKeyExpiredError). */
export class AuthenticationError extends ApiError {
  override readonly name: string = 'AuthenticationError';
}
/** 401 `api_key_expired`: the key's `expires_at` has passed (decisions §18); a new key is needed. */
export class ApiKeyExpiredError extends AuthenticationError {
  override readonly name = 'ApiKeyExpiredError';
}
/** 402: `messaging_insufficient_balance`. */
export class PaymentRequiredError extends ApiError {
  override readonly name = 'PaymentRequiredError';
}
/**
 * 403: `api_key_required`, `insufficient_scope` (InsufficientScopeError), `scale_plan_required`, `trial_expired`,
 * `subscription_required`.
 */
export class PermissionDeniedError extends ApiError {
  override readonly name: string = 'PermissionDeniedError';
}
/** 403 `insufficient_scope`: the key lacks the operation's scope, named by `required` (decisions §18). */
export class InsufficientScopeError extends PermissionDeniedError {
  override readonly name = 'InsufficientScopeError';
  /** The scope the operation needs, e.g. `contacts:write`. */
  get required(): string | undefined {
    const detail = this.detail;
    return typeof detail === 'object' && !Array.isArray(detail) && typeof detail.required === 'string'
      ? detail.required
      : undefined;
  }
}
/** 404: `not_found`, or `contact_not_found` with the recipient's `index`. */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
}
/** 409: `duplicate_contact`, `messaging_limit_exceeded`, `template_not_sendable`, `idempotency_key_in_flight`, … */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
}
/** 413 (body over 1 MiB) and 415 (not JSON). */
export class PayloadError extends ApiError {
  override readonly name = 'PayloadError';
}
/** 422: a list of issues (`issues`), or an object with a `code` such as `missing_variables`. */
export class ValidationError extends ApiError {
  override readonly name = 'ValidationError';
  /** The issues of a validation list; empty when the 422 carries an object with a `code`. */
  get issues(): ValidationIssue[] {
    return Array.isArray(this.detail) ? this.detail : [];
  }
}
/** 429 `rate_limited`, after the client's own retries ran out. */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  /** Seconds the server asked to wait (`Retry-After`). */
  get retryAfterSeconds(): number | undefined {
    const value = this.headers.get('retry-after');
    return value === null || !/^\d+$/.test(value) ? undefined : Number(value);
  }
}
/** 5xx: `internal_error` or a server that is shutting down. */
export class InternalServerError extends ApiError {
  override readonly name = 'InternalServerError';
}

/** The request never got an HTTP answer (network failure, DNS, aborted). */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const byStatus: Record<number, new (init: ApiErrorInit) => ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadError,
  415: PayloadError,
  422: ValidationError,
  429: RateLimitError,
};

/** Codes with a class of their own, more precise than their status's. */
const byCode: Record<string, new (init: ApiErrorInit) => ApiError> = {
  api_key_expired: ApiKeyExpiredError,
  insufficient_scope: InsufficientScopeError,
};

/** The typed error for a refused response. */
export function errorFor(status: number, detail: ErrorDetail, headers: Headers): ApiError {
  const ErrorClass =
    byCode[codeOf(detail, status)] ?? byStatus[status] ?? (status >= 500 ? InternalServerError : ApiError);
  return new ErrorClass({ status, detail, headers });
}

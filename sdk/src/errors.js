// Errors as typed classes carrying the contract's codes (public-api.md, Errors; decisions §3). Every refusal of the
// API is an ApiError with the HTTP `status`, the contract's `code` and the whole `detail`; a subclass per status lets
// callers catch what they handle (`instanceof RateLimitError`) and read `code` for the rest.
/** The code of a detail: the string itself, the object's `code`, or `validation_error` for a list of issues. */
export function codeOf(detail, status) {
    if (typeof detail === 'string')
        return detail;
    if (Array.isArray(detail))
        return 'validation_error';
    if (detail && typeof detail.code === 'string')
        return detail.code;
    return `http_${status}`;
}
export class ApiError extends Error {
    name = 'ApiError';
    /** The HTTP status. */
    status;
    /** The contract's code: `invalid_api_key`, `duplicate_contact`, `missing_variables`, `validation_error`, … */
    code;
    /** The whole `detail` of the body, with the extra keys a code carries (`index`, `tokens`, `remaining`, …). */
    detail;
    /** `X-Request-Id` of the response, to quote when asking for help. */
    requestId;
    headers;
    constructor(init) {
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
    name = 'BadRequestError';
}
/** 401: `missing_bearer_token`, `invalid_api_key` or `api_key_expired` (ApiKeyExpiredError). */
export class AuthenticationError extends ApiError {
    name = 'AuthenticationError';
}
/** 401 `api_key_expired`: the key's `expires_at` has passed (decisions §18); a new key is needed. */
export class ApiKeyExpiredError extends AuthenticationError {
    name = 'ApiKeyExpiredError';
}
/** 402: `messaging_insufficient_balance`. */
export class PaymentRequiredError extends ApiError {
    name = 'PaymentRequiredError';
}
/**
 * 403: `api_key_required`, `insufficient_scope` (InsufficientScopeError), `scale_plan_required`, `trial_expired`,
 * `subscription_required`.
 */
export class PermissionDeniedError extends ApiError {
    name = 'PermissionDeniedError';
}
/** 403 `insufficient_scope`: the key lacks the operation's scope, named by `required` (decisions §18). */
export class InsufficientScopeError extends PermissionDeniedError {
    name = 'InsufficientScopeError';
    /** The scope the operation needs, e.g. `contacts:write`. */
    get required() {
        const detail = this.detail;
        return typeof detail === 'object' && !Array.isArray(detail) && typeof detail.required === 'string'
            ? detail.required
            : undefined;
    }
}
/** 404: `not_found`, or `contact_not_found` with the recipient's `index`. */
export class NotFoundError extends ApiError {
    name = 'NotFoundError';
}
/** 409: `duplicate_contact`, `messaging_limit_exceeded`, `template_not_sendable`, `idempotency_key_in_flight`, … */
export class ConflictError extends ApiError {
    name = 'ConflictError';
}
/** 413 (body over 1 MiB) and 415 (not JSON). */
export class PayloadError extends ApiError {
    name = 'PayloadError';
}
/** 422: a list of issues (`issues`), or an object with a `code` such as `missing_variables`. */
export class ValidationError extends ApiError {
    name = 'ValidationError';
    /** The issues of a validation list; empty when the 422 carries an object with a `code`. */
    get issues() {
        return Array.isArray(this.detail) ? this.detail : [];
    }
}
/** 429 `rate_limited`, after the client's own retries ran out. */
export class RateLimitError extends ApiError {
    name = 'RateLimitError';
    /** Seconds the server asked to wait (`Retry-After`). */
    get retryAfterSeconds() {
        const value = this.headers.get('retry-after');
        return value === null || !/^\d+$/.test(value) ? undefined : Number(value);
    }
}
/** 5xx: `internal_error` or a server that is shutting down. */
export class InternalServerError extends ApiError {
    name = 'InternalServerError';
}
/** The request never got an HTTP answer (network failure, DNS, aborted). */
export class ConnectionError extends Error {
    name = 'ConnectionError';
    constructor(message, options) {
        super(message, options);
    }
}
const byStatus = {
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
const byCode = {
    api_key_expired: ApiKeyExpiredError,
    insufficient_scope: InsufficientScopeError,
};
/** The typed error for a refused response. */
export function errorFor(status, detail, headers) {
    const ErrorClass = byCode[codeOf(detail, status)] ?? byStatus[status] ?? (status >= 500 ? InternalServerError : ApiError);
    return new ErrorClass({ status, detail, headers });
}

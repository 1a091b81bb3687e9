// The one error type: `ApiError(status, detail)`, where `detail` is the contract's string code, a `{code, …}` object
// or a FastAPI-style array of validation issues. The handler in errors.ts turns it into the response.
import type { ValidationIssue } from './schemas.ts';

export type ErrorDetail = string | ({ code: string } & Record<string, unknown>) | ValidationIssue[];

export class ApiError extends Error {
  readonly status: number;
  readonly detail: ErrorDetail;
  readonly headers: Record<string, string>;
  constructor(status: number, detail: ErrorDetail, headers: Record<string, string> = {}) {
    super(typeof detail === 'string' ? detail : Array.isArray(detail) ? 'validation_error' : detail.code);
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export const notFound = (): ApiError => new ApiError(404, 'not_found');

/** A 422 in the validation-array shape, for rules that a schema cannot express. */
export function validationError(loc: (string | number)[], msg: string, type: string, extra?: Partial<ValidationIssue>) {
  return new ApiError(422, [{ loc, msg, type, ...extra }]);
}

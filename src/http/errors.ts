// One error type for the whole service, and the one handler that turns every failure into the contract's shapes.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ValidationIssue, validationIssues } from './validation.ts';

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

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function send(reply: FastifyReply, status: number, detail: ErrorDetail): FastifyReply {
  // Error bodies bypass the route's success serializer: they are written as they are.
  return reply.code(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send({ detail });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return send(reply, error.status, error.detail);
    }
    const fastifyError = error as FastifyError;
    if (fastifyError.validation) {
      return send(reply, 422, validationIssues(fastifyError.validation, fastifyError.validationContext, request));
    }
    switch (fastifyError.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return send(reply, 422, [
          {
            loc: ['body'],
            msg: 'JSON decode error',
            type: 'json_invalid',
            ctx: {
              error: fastifyError.message.replace(
                /^Body is not valid JSON but content-type is set to 'application\/json'$/,
                'Invalid JSON',
              ),
            },
          },
        ]);
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 413, 'payload_too_large');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(reply, 415, 'unsupported_media_type');
    }
    const status = fastifyError.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return send(reply, status, status === 404 ? 'not_found' : 'bad_request');
    }
    // contract: an unexpected fault is a 500 with no stack or SQL in it; the log keeps the details.
    request.log.error({ err: error }, 'unexpected error');
    return send(reply, 500, 'internal_error');
  });

  app.setNotFoundHandler(notFoundHandler(app));
}

/** 404 for an unknown path; 405 with `Allow` when the path exists under another method. */
export function notFoundHandler(app: FastifyInstance) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => method !== request.method && app.findRoute({ method, url: path }));
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return send(reply, 405, 'method_not_allowed');
    }
    return send(reply, 404, 'not_found');
  };
}

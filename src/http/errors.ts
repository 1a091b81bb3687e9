// One error type for the whole service, and the one handler that turns every failure into the contract's shapes.
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError, type ErrorDetail } from './api-error.ts';
import { errorResponse } from './schemas.ts';
import { validationIssues } from './validation.ts';

export { ApiError, type ErrorDetail, notFound, validationError } from './api-error.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** How long a client should wait before retrying a 503 (the database probe runs several times a second). */
export const RETRY_AFTER_SECONDS = 1;

export const serviceUnavailable = (): ApiError =>
  new ApiError(503, 'service_unavailable', { 'Retry-After': String(RETRY_AFTER_SECONDS) });

/**
 * Overload, not an outage (D129, D132): every connection, or every place of the organization's bulkhead, is
 * taken and the bounded wait for one ran out. The database stays marked reachable and /readyz stays green.
 */
export const serviceBusy = (): ApiError =>
  new ApiError(503, 'service_busy', { 'Retry-After': String(RETRY_AFTER_SECONDS) });

function send(reply: FastifyReply, status: number, detail: ErrorDetail): FastifyReply {
  // Error bodies bypass the route's success serializer: they are written as they are.
  return reply.code(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send({ detail });
}

export interface ErrorHandlingOptions {
  /** True for a failure that means "the database is unreachable now" (answered 503 with Retry-After). */
  unavailable?: (error: unknown) => boolean;
  /** True for a failure that means "every connection is busy" (answered 503 `service_busy` with Retry-After). */
  busy?: (error: unknown) => boolean;
}

export function registerErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions = {}): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (!(error instanceof ApiError) && options.busy?.(error)) {
      request.log.warn({ err: error }, 'database pool busy');
      error = serviceBusy();
    } else if (!(error instanceof ApiError) && options.unavailable?.(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      error = serviceUnavailable();
    }
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
      // A busy answer is a normal outcome under load, already logged as a warning where it is decided.
      if (error.status >= 500 && error.detail !== 'service_busy') request.log.error({ err: error }, 'request failed');
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
      case 'FST_ERR_BAD_URL':
        return send(reply, 400, 'bad_request');
      case 'FST_ERR_MAX_PARAM_LENGTH':
        return send(reply, 414, 'uri_too_long');
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
  app.addHook('onRoute', documentFrameworkErrors);
}

// Answers any /v1 route can give without its code knowing: a URL the router cannot decode (400), a path parameter
// over the router's length limit (414), a body too large or not JSON (413, 415), and the database away or busy (503).
const FRAMEWORK_ERRORS: [number, string, string, (route: RouteOptions) => boolean][] = [
  [400, 'bad_request', 'Malformed request (e.g. invalid percent-encoding in the path).', () => true],
  [413, 'payload_too_large', 'Body over 1 MiB.', (route) => Boolean(route.schema?.body)],
  [414, 'uri_too_long', 'A path parameter too long.', (route) => route.url.includes(':')],
  [415, 'unsupported_media_type', 'Body is not JSON.', (route) => Boolean(route.schema?.body)],
  [
    503,
    'service_unavailable',
    'The database is unreachable for now (`service_unavailable`), or every connection or every place of the ' +
      "organization's concurrency limit is busy (`service_busy`); `Retry-After` says when to try again.",
    () => true,
  ],
];

function documentFrameworkErrors(route: RouteOptions): void {
  const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
  if (!route.url.startsWith('/v1/') || !schema?.response || schema.hide) return;
  for (const [status, code, description, applies] of FRAMEWORK_ERRORS) {
    if (applies(route) && !schema.response[status])
      schema.response[status] = errorResponse(status, description, [code]);
  }
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

/**
 * Fastify's `frameworkErrors`: errors raised before routing (a path with invalid percent-encoding, a path parameter
 * over the length limit) go through the same handler as every other error, so they answer in the `{detail}` shape.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Raised before the onRequest hooks: every answer still carries its request id.
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') return send(reply, 400, 'bad_request');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, 414, 'uri_too_long');
  request.log.warn({ err: error }, 'framework error');
  return send(reply, error.statusCode && error.statusCode < 500 ? error.statusCode : 400, 'bad_request');
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'request_header_fields_too_large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout'],
  HPE_URI_TOO_LONG: [414, 'uri_too_long'],
};

/**
 * Fastify's `clientErrorHandler`: a request the HTTP parser refuses never reaches a route. The answer keeps the
 * `{detail}` shape and says `Connection: close`, since the socket is closed after it (a client that reused the
 * connection would otherwise meet a reset on its next request).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'bad_request'];
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nX-Request-Id: req_${randomBytes(12).toString('hex')}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  // end() flushes the answer first; a socket that does not close by itself is dropped.
  setTimeout(() => socket.destroy(), 1000).unref();
}

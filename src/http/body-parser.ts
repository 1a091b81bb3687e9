// JSON bodies: an empty body is "no body" (so a DELETE with a JSON content type works), prototype poisoning is
// refused, and malformed JSON is the contract's 422 `json_invalid`. A body sent without a JSON content type
// (curl's default form type) is still read as JSON when it parses, so a first `curl -d '{...}'` just works.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './errors.ts';

function parse(body: string): unknown {
  if (body.trim() === '') return undefined;
  try {
    return secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw new ApiError(422, [
      { loc: ['body'], msg: 'JSON decode error', type: 'json_invalid', ctx: { error: (error as Error).message } },
    ]);
  }
}

export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  const handler = (_request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void) => {
    try {
      done(null, parse(body));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, handler);
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    try {
      done(null, parse(body as string));
    } catch {
      done(new ApiError(415, 'unsupported_media_type'));
    }
    void request;
  });
}

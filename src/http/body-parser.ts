// JSON bodies: an empty body is "no body" (so a DELETE with a JSON content type works), prototype poisoning is
// refused, and malformed JSON is the contract's 422 `json_invalid`. A body sent without a JSON content type
// (curl's default form type) is still read as JSON when it parses, so a first `curl -d '{...}'` just works.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './errors.ts';

// No request of the contract nests anywhere near this deep; far deeper input could exhaust the stack of whatever
// walks it next (validation, serialisation of a 422), so it is refused before it is parsed.
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in a JSON text, counted without parsing it (strings skipped). */
function exceedsDepth(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index++; // backslash: skip the escaped character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > limit) return true;
    } else if (char === 0x5d || char === 0x7d) depth--;
  }
  return false;
}

function parse(body: string): unknown {
  if (body.trim() === '') return undefined;
  if (exceedsDepth(body, MAX_JSON_DEPTH)) {
    throw new ApiError(422, [
      {
        loc: ['body'],
        msg: 'JSON decode error',
        type: 'json_invalid',
        ctx: { error: `nesting deeper than ${MAX_JSON_DEPTH} levels` },
      },
    ]);
  }
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

// /webhooks/messaging (the path the platform is configured with): the platform's subscription handshake (GET) and
// its inbound callbacks (POST), handed to the inbound processor (D333).
// Not part of the public contract: hidden from the OpenAPI document, no API key (the signature is the credential).
import type { FastifyInstance } from 'fastify';
import { secretMatcher } from '../http/bearer.ts';
import { ApiError } from '../http/errors.ts';
import type { InboundProcessor } from './inbound.ts';

/** Batches of many statuses run larger than API bodies; the platform's own limit is a few MiB. */
export const INBOUND_BODY_LIMIT = 4 * 1024 * 1024;

export interface InboundRouteDeps {
  processor: InboundProcessor;
  /** WEBHOOK_VERIFY_TOKEN; without it every handshake is refused. */
  verifyToken: string | undefined;
}

/** Register inside its own plugin: it replaces the body parsers of that scope with a raw-bytes capture. */
export function inboundRoutes(app: FastifyInstance, deps: InboundRouteDeps): void {
  // The signature covers the exact bytes sent; parsing first and re-serialising would change them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: INBOUND_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );

  const verifyTokenMatches = secretMatcher(deps.verifyToken);
  app.get('/webhooks/messaging', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const token = query['hub.verify_token'];
    const challenge = query['hub.challenge'];
    const matches = verifyTokenMatches(typeof token === 'string' ? token : undefined);
    if (query['hub.mode'] !== 'subscribe' || !matches || typeof challenge !== 'string') {
      throw new ApiError(403, 'verification_failed');
    }
    return reply.code(200).type('text/plain; charset=utf-8').send(challenge);
  });

  app.post('/webhooks/messaging', { schema: { hide: true }, bodyLimit: INBOUND_BODY_LIMIT }, async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const header = request.headers['x-hub-signature-256'];
    const result = await deps.processor.process(raw, Array.isArray(header) ? header[0] : header);
    if (!result.ok) {
      if (result.reason === 'invalid_json') throw new ApiError(400, 'invalid_json');
      throw new ApiError(401, result.reason);
    }
    return reply.code(200).send({ status: 'ok' });
  });
}

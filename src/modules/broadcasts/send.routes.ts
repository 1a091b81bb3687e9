import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { checkedInOrder } from '../../http/ordered-body.ts';
import { v1Errors } from '../../http/schemas.ts';
import { BroadcastParams, BroadcastSchema, RetryBody } from './broadcasts.schemas.ts';
import type { RetryService } from './retry.ts';
import { RETRY_ERRORS, SEND_ERRORS, SendBody, SendHeaders, TemplateParams } from './send.schemas.ts';
import type { SendService } from './send.service.ts';

const description = `Queues an approved template for up to 100 recipients and answers 202 with the Broadcast.
Checks run in this order, and the first that fails answers; a refused request is refused whole (nothing queued, no
contact created, nothing charged). The \`Idempotency-Key\`, when given: \`idempotency_key_reused\` (422) for another body, \`idempotency_key_in_flight\`
(409) while the first request with it runs; the same key and body within 24 hours answer the original broadcast
(header \`Idempotent-Replayed: true\`). The template: \`template_not_sendable\` (409 not APPROVED, 422 never sendable).
The channel: \`invalid_channel\` / \`channel_id_required\` (400), a body that is not an object or a \`channel_id\`
outside the schema (422). The recipient count (1–100) and the rest of the body outside the schema, but for the
recipients' own fields: 422. Each recipient in turn: its fields outside the schema (422), \`contact_not_found\` (404),
\`contact_has_no_phone\` (422), \`duplicate_recipient\` (422), \`unknown_variables\` / \`unknown_url_suffixes\` (422, with
\`keys\`), \`missing_variables\` (422, with \`tokens\`), \`media_too_large\` / \`media_type_mismatch\` /
\`media_fetch_failed\` (422), each with \`index\`. Then the account: \`messaging_limit_exceeded\` (409, with
\`remaining\`), \`messaging_insufficient_balance\` (402).`;

const retryDescription = `decisions §13: queues a new broadcast (\`retry_of\` names the original) of the original's
\`failed\` recipients whose failure another try can fix (not \`not_on_network\`, not \`opted_out\`, contact not
\`unavailable\`; not \`handoff_unconfirmed\`, which may have reached the contact, unless \`error_codes\` names it; with
\`error_codes\`, only those errors), each with its contact, variables, URL suffixes and media of
the original request, from the original template and channel. A recipient is in at most one live retry (queued, in
flight or reached): \`nothing_to_retry\` (409) when none is left. Otherwise a send: \`template_not_sendable\` (409),
\`invalid_channel\` (400), \`messaging_limit_exceeded\` (409), \`messaging_insufficient_balance\` (402) and the
\`Idempotency-Key\` header as in \`POST /v1/templates/{template_id}/send\`.`;

export function sendRoutes(app: FastifyInstance, send: SendService, retry: RetryService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/broadcasts/:broadcast_id/retry',
    {
      schema: {
        tags: ['Broadcasts'],
        summary: 'Retry a broadcast’s failures',
        description: retryDescription,
        operationId: 'retryBroadcast',
        params: BroadcastParams,
        headers: SendHeaders,
        body: RetryBody,
        response: { 202: BroadcastSchema, ...v1Errors(RETRY_ERRORS) },
      },
      // The body is optional: a request without one asks for every retryable failure.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const { broadcast, replayed } = await retry.retry(
        orgId,
        request.params.broadcast_id,
        request.body ?? {},
        request.headers['idempotency-key'],
      );
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(broadcast);
    },
  );

  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/templates/:template_id/send',
    {
      schema: {
        tags: ['Broadcasts'],
        summary: 'Send a template to 1–100 recipients',
        description,
        operationId: 'sendTemplate',
        params: TemplateParams,
        headers: SendHeaders,
        // decisions §7: the template and the channel are checked before the body's recipients (D224).
        body: checkedInOrder(SendBody),
        response: { 202: BroadcastSchema, ...v1Errors(SEND_ERRORS) },
      },
    },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const { broadcast, replayed } = await send.send(
        orgId,
        request.params.template_id,
        request.body,
        request.headers['idempotency-key'],
      );
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(broadcast);
    },
  );
}

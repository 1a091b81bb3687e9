// decisions §16: a broadcast to an audience, and pausing and resuming broadcasts.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { checkedInOrder } from '../../http/ordered-body.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { AUDIENCE_ERRORS, AudienceBroadcastBody } from './audience.schemas.ts';
import type { AudienceService } from './audience.service.ts';
import { BroadcastParams, BroadcastSchema, CancelBody } from './broadcasts.schemas.ts';
import type { BroadcastsService } from './broadcasts.service.ts';
import { SendHeaders } from './send.schemas.ts';

const description = `decisions §16: sends an approved template to every contact the \`audience\` matches (the filters
of \`GET /v1/contacts\` as JSON; \`{}\` is every contact) that has a phone and is not \`unavailable\`, at once or at
\`send_at\` (up to ${30} days ahead). Answers 202 with the Broadcast: \`scheduled\` (waiting for \`send_at\`) or
\`preparing\` (its recipients being added; \`requested\` grows). The checks before the 202, in order:
\`template_not_sendable\` (409 not APPROVED, 422 never sendable), \`invalid_channel\` / \`channel_id_required\` (400),
the body (422: the audience's filters at \`["body","audience",…]\`, \`send_at\`, \`unknown_variables\`,
\`unknown_url_suffixes\`, \`missing_variables\` for a token no contact can fill), media (fetched once; 422),
\`messaging_insufficient_balance\` (402, the balance cannot pay one message). The rolling 24-hour limit paces the
hand-offs instead of refusing (\`held_until\`). At the start the audience is evaluated once, as a snapshot, in order of
the contacts' creation; a recipient whose placeholders its contact cannot fill is \`failed\` \`missing_variables\`,
an opted-out contact of a MARKETING template \`failed\` \`opted_out\`, both uncharged. \`Idempotency-Key\` as for sends.`;

export function audienceRoutes(parent: FastifyInstance, audience: AudienceService, broadcasts: BroadcastsService) {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Broadcasts'];

  app.post(
    '/broadcasts',
    {
      schema: {
        tags,
        summary: 'Send a template to an audience, now or at a time',
        description,
        operationId: 'createBroadcast',
        headers: SendHeaders,
        // decisions §16: the template and the channel are checked before the rest of the body (D224).
        body: checkedInOrder(AudienceBroadcastBody),
        response: { 202: BroadcastSchema, ...v1Errors(AUDIENCE_ERRORS) },
      },
    },
    async (request, reply) => {
      const { orgId } = authOf(request);
      const { broadcast, replayed } = await audience.create(orgId, request.body, request.headers['idempotency-key']);
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(broadcast);
    },
  );

  app.post(
    '/broadcasts/:broadcast_id/pause',
    {
      schema: {
        tags,
        summary: 'Pause a broadcast',
        description:
          'decisions §16: from `scheduled`, `preparing` or `in_progress`; hand-offs stop within a second ' +
          '(`status_reason: "requested"`), messages already handed off keep reporting. Takes no body.',
        operationId: 'pauseBroadcast',
        params: BroadcastParams,
        body: CancelBody,
        response: {
          200: described('The broadcast, now `paused`.', BroadcastSchema),
          ...v1Errors({ 404: [], 409: ['broadcast_not_pausable'], 422: [] }),
        },
      },
    },
    async (request) => broadcasts.pause(authOf(request).orgId, request.params.broadcast_id),
  );

  app.post(
    '/broadcasts/:broadcast_id/resume',
    {
      schema: {
        tags,
        summary: 'Resume a paused broadcast, or one stopped by the balance',
        description:
          'decisions §16: from `paused`; back to `scheduled` while `send_at` is ahead, otherwise on. The template ' +
          'must be APPROVED (409 `template_not_sendable`). D227: also from `stopped_low_balance` once the balance ' +
          'pays one message of it (else 402 `messaging_insufficient_balance`): its unsent remainder goes on, ' +
          '`in_progress` again. Takes no body.',
        operationId: 'resumeBroadcast',
        params: BroadcastParams,
        body: CancelBody,
        response: {
          200: described('The broadcast, no longer paused or stopped.', BroadcastSchema),
          ...v1Errors({
            402: ['messaging_insufficient_balance'],
            404: [],
            409: ['broadcast_not_resumable', 'template_not_sendable'],
            422: [],
          }),
        },
      },
    },
    async (request) => broadcasts.resume(authOf(request).orgId, request.params.broadcast_id),
  );
}

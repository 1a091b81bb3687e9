// decisions §15: answering a contact in a conversation.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { checkedInOrder } from '../../http/ordered-body.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { ConversationIdParams, MessageSchema } from './conversations.schemas.ts';
import { REPLY_ERRORS, ReplyBody, ReplyHeaders } from './replies.schemas.ts';
import type { RepliesService } from './replies.service.ts';

const description = `decisions §15: queues a reply to the conversation's contact, from the conversation's number, and
answers 202 with the Message (\`sending\`); the worker hands it to the platform at once, in the order the
conversation's replies were accepted. A text or media reply needs the customer-service window open (24 hours from
the contact's newest message) and is free; a template can be sent at any time, is charged at its category's price
and, outside the window, counts against the 24-hour limit. Checks run in this order and the first that fails
answers; a refused request queues and charges nothing. The conversation: \`not_found\` (404). The body (422, with
\`reply_to\` a message of this conversation, and \`file_id\` (D294) an unexpired upload of this organization, not
beside \`media_url\`; an upload of another kind is \`media_type_mismatch\`). The number: \`channel_unavailable\` (409). A text or media reply
outside the window: \`conversation_window_closed\` (409, with \`last_inbound_at\` and \`window_expires_at\`). The
media URL: \`media_too_large\` / \`media_type_mismatch\` / \`media_fetch_failed\` (422). A template as for one send
recipient: \`not_found\` (404), \`template_not_sendable\` (409 not APPROVED, 422 never sendable or of another
account), \`unknown_variables\` / \`unknown_url_suffixes\` (422, with \`keys\`), \`missing_variables\` (422, with
\`tokens\`), media codes (422); a MARKETING template to an opted-out contact: \`contact_opted_out\` (409); a template
outside the window: \`messaging_limit_exceeded\` (409, with \`remaining\`); a template: \`messaging_insufficient_balance\`
(402). The \`Idempotency-Key\` works as for sends: \`idempotency_key_reused\` (422), \`idempotency_key_in_flight\` (409),
a replay answers the original message with \`Idempotent-Replayed: true\`.`;

export function replyRoutes(parent: FastifyInstance, replies: RepliesService): void {
  parent.withTypeProvider<TypeBoxTypeProvider>().post(
    '/conversations/:conversation_id/messages',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'Reply in a conversation',
        description,
        operationId: 'replyToConversation',
        params: ConversationIdParams,
        headers: ReplyHeaders,
        // decisions §15: the conversation is checked before the body (D224).
        body: checkedInOrder(ReplyBody),
        response: { 202: described('The reply, queued.', MessageSchema), ...v1Errors(REPLY_ERRORS) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const { message, replayed } = await replies.reply(
        auth.orgId,
        request.params.conversation_id,
        request.body,
        request.headers['idempotency-key'],
        auth.user?.id ?? null,
      );
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(202).send(message);
    },
  );
}

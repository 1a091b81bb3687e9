import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import {
  ConversationIdParams,
  ConversationListQuery,
  ConversationPage,
  ConversationPatchBody,
  ConversationSchema,
  MessageListQuery,
  MessagePage,
} from './conversations.schemas.ts';
import type { ConversationsService } from './conversations.service.ts';

const tags = ['Conversations'];

/** D225: the read call takes no fields; a JSON body, when sent, is `{}` (anything in it is a 422). */
const MarkReadBody = Type.Object(
  {},
  {
    additionalProperties: false,
    title: 'MarkReadRequest',
    description: 'No fields: leave the body out, or send `{}`.',
    'x-optional-body': true,
    examples: [{}],
  },
);

export function conversationRoutes(parent: FastifyInstance, conversations: ConversationsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/conversations',
    {
      schema: {
        tags,
        summary: 'List conversations',
        description: 'One conversation per contact and connected number, most recent activity first. Read-only.',
        operationId: 'listConversations',
        querystring: ConversationListQuery,
        response: { 200: described('A page of conversations.', ConversationPage), ...v1Errors({ 422: [] }) },
      },
    },
    async (request) => conversations.list(authOf(request).orgId, request.query),
  );

  app.get(
    '/conversations/:conversation_id',
    {
      schema: {
        tags,
        summary: 'Read a conversation',
        description: 'One conversation of the organization; its messages are listed separately.',
        operationId: 'getConversation',
        params: ConversationIdParams,
        response: { 200: described('The conversation.', ConversationSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => conversations.get(authOf(request).orgId, request.params.conversation_id),
  );

  app.patch(
    '/conversations/:conversation_id',
    {
      schema: {
        tags,
        summary: 'Change a conversation',
        description:
          'decisions §19: status (`snoozed_until` only with `snoozed`: in the future, at most 90 days ahead; ' +
          'without it, until the contact’s next message), assignee (a user of the organization, or `{type: "ai"}` ' +
          'while the assistant is enabled), team, priority and labels (replacing the set). One ' +
          '`conversation.updated` event lists every field the request changed; a request that changes nothing ' +
          'answers 200, keeps `updated_at` and records no event. Resolving clears `waiting_since` and the snooze.',
        operationId: 'updateConversation',
        params: ConversationIdParams,
        body: ConversationPatchBody,
        response: {
          200: described('The conversation after the change.', ConversationSchema),
          ...v1Errors({ 404: [], 409: ['ai_disabled'], 422: [] }),
        },
      },
    },
    async (request) => conversations.update(authOf(request).orgId, request.params.conversation_id, request.body),
  );

  app.get(
    '/conversations/:conversation_id/messages',
    {
      schema: {
        tags,
        summary: 'List the messages of a conversation',
        description: 'Newest first. `sender` is `contact`, `agent`, `ai` or `system`.',
        operationId: 'listConversationMessages',
        params: ConversationIdParams,
        querystring: MessageListQuery,
        response: {
          200: described('A page of messages, newest first.', MessagePage),
          ...v1Errors({ 404: [], 422: [] }),
        },
      },
    },
    async (request) => conversations.messages(authOf(request).orgId, request.params.conversation_id, request.query),
  );

  app.post(
    '/conversations/:conversation_id/read',
    {
      schema: {
        tags,
        summary: 'Mark a conversation read',
        description:
          'decisions §15: `unread_count` becomes 0 and the platform is told that the contact’s newest message was ' +
          'read (its read receipt). Calling it again changes nothing. No body, or an empty JSON object (D225).',
        operationId: 'markConversationRead',
        params: ConversationIdParams,
        body: MarkReadBody,
        response: { 200: described('The conversation, read.', ConversationSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
      // The body is optional: none at all is the same request as `{}`.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {};
      },
    },
    async (request) => conversations.markRead(authOf(request).orgId, request.params.conversation_id),
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import {
  ConversationIdParams,
  ConversationListQuery,
  ConversationPage,
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

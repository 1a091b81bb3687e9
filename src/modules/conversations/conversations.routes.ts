import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
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
type IdParams = { conversation_id: string };

export function conversationRoutes(app: FastifyInstance, conversations: ConversationsService): void {
  app.get(
    '/conversations',
    {
      schema: {
        tags,
        summary: 'List conversations',
        description: 'One conversation per contact and connected number, most recent activity first. Read-only.',
        operationId: 'listConversations',
        querystring: ConversationListQuery,
        response: { 200: ConversationPage, ...v1Errors([422]) },
      },
    },
    async (request) => conversations.list(authOf(request).orgId, request.query as ConversationListQuery),
  );

  app.get(
    '/conversations/:conversation_id',
    {
      schema: {
        tags,
        summary: 'Read a conversation',
        operationId: 'getConversation',
        params: ConversationIdParams,
        response: { 200: ConversationSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => conversations.get(authOf(request).orgId, (request.params as IdParams).conversation_id),
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
        response: { 200: MessagePage, ...v1Errors([404, 422]) },
      },
    },
    async (request) =>
      conversations.messages(
        authOf(request).orgId,
        (request.params as IdParams).conversation_id,
        request.query as MessageListQuery,
      ),
  );
}

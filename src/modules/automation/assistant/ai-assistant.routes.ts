import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../http/auth.ts';
import { v1Errors } from '../../../http/schemas.ts';
import {
  AiAssistantInput,
  AiAssistantSchema,
  AiDraft,
  AssistantTestAnswer,
  AssistantTestInput,
  ConversationParams,
} from './ai-assistant.schemas.ts';
import type { AiAssistantService } from './ai-assistant.service.ts';

const tags = ['AI assistant'];
const disabled = { codes: ['ai_disabled'], description: 'The assistant is disabled.' };
const failed = {
  codes: ['ai_provider_error'],
  description: 'The model failed: an error, no answer within 30 seconds, or an answer that is not the JSON asked for.',
};

export function aiAssistantRoutes(parent: FastifyInstance, assistant: AiAssistantService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/ai-assistant',
    {
      schema: {
        tags,
        summary: 'Read the AI assistant’s settings',
        description: 'The provider’s `api_key` is never shown: `has_api_key` says whether one is stored.',
        operationId: 'getAiAssistant',
        response: { 200: AiAssistantSchema, ...v1Errors() },
      },
    },
    async (request) => assistant.get(authOf(request).orgId),
  );

  app.put(
    '/ai-assistant',
    {
      schema: {
        tags,
        summary: 'Replace the AI assistant’s settings',
        description:
          'A `provider.base_url` that is not `https://` to a public address (unless its host is in ' +
          '`WEBHOOK_ALLOW_HOSTS`) is a 422 on `["body","provider","base_url"]`; a number or team not of the ' +
          'organization is a 422 at its place. The `api_key` is sealed at rest.',
        operationId: 'putAiAssistant',
        body: AiAssistantInput,
        response: { 200: AiAssistantSchema, ...v1Errors([422]) },
      },
    },
    async (request) => assistant.put(authOf(request).orgId, request.body),
  );

  app.post(
    '/ai-assistant/test',
    {
      schema: {
        tags,
        summary: 'What the assistant would answer a contact’s message (sends nothing)',
        operationId: 'testAiAssistant',
        body: AssistantTestInput,
        response: { 200: AssistantTestAnswer, ...v1Errors({ 409: disabled, 422: [], 502: failed }) },
      },
    },
    async (request) => assistant.test(authOf(request).orgId, request.body.text),
  );

  app.post(
    '/conversations/:conversation_id/ai-draft',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'A suggested reply from the AI assistant (sends nothing)',
        description:
          'From the conversation’s recent messages (never a private note). A person edits it and sends it as ' +
          '`agent`. Empty `text` when the assistant would hand off.',
        operationId: 'draftConversationReply',
        params: ConversationParams,
        response: { 200: AiDraft, ...v1Errors({ 404: [], 409: disabled, 422: [], 502: failed }) },
      },
    },
    async (request) => assistant.draft(authOf(request).orgId, request.params.conversation_id),
  );
}

// decisions §19: `POST /v1/conversations/{conversation_id}/notes`, a private note among the conversation's messages.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { ConversationIdParams, MessageSchema } from './conversations.schemas.ts';
import type { ConversationsService } from './conversations.service.ts';

export const NoteBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 10_000 }),
    mention_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 100,
        description: 'Users of the organization the note mentions (another id: 422).',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'NoteInput',
    description: 'A private note: never sent to the contact.',
    examples: [{ text: 'Refund approved, @Ana please confirm', mention_ids: ['usr_01jd3q8w4y2n7r6t9v0b1c2d3e'] }],
  },
);
export type NoteBody = Static<typeof NoteBody>;

export function noteRoutes(parent: FastifyInstance, conversations: ConversationsService): void {
  parent.withTypeProvider<TypeBoxTypeProvider>().post(
    '/conversations/:conversation_id/notes',
    {
      schema: {
        tags: ['Conversations'],
        summary: 'Add a private note',
        description:
          'decisions §19: a Message with `type: "note"`, `private: true`, `sender: "agent"`, `status: null` and ' +
          '`author_id` (the console’s person; null for a key). It is listed among the conversation’s messages, ' +
          'never goes to the platform and counts for no unread, wait or reply time; it moves `last_activity_at` and ' +
          '`last_message`. Event `conversation.note_created` (the note with its `mention_ids`).',
        operationId: 'createConversationNote',
        params: ConversationIdParams,
        body: NoteBody,
        response: { 201: described('The note.', MessageSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const note = await conversations.addNote(auth.orgId, request.params.conversation_id, {
        text: request.body.text,
        mention_ids: request.body.mention_ids,
        authorId: auth.user?.id ?? null,
      });
      return reply.code(201).send(note);
    },
  );
}

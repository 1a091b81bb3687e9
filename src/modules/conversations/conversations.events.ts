// The events of conversations and their messages (decisions §11, §15, §19), declared by the feature that owns
// their data (D332).

import { Type } from 'typebox';
import type { EventDefinitions } from '../events/event-types.ts';
import { ConversationSchema, MessageSchema } from './conversations.schemas.ts';

export const ConversationUpdatedData = Type.Object(
  {
    conversation: ConversationSchema,
    changed: Type.Array(Type.String(), {
      description: 'The fields that changed: `status`, `snoozed_until`, `assignee`, `team_id`, `priority`, `labels`.',
    }),
    previous: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Each changed field’s value before the change.',
    }),
  },
  {
    additionalProperties: false,
    title: 'ConversationUpdatedData',
    description: 'decisions §19: a conversation after a change of its state, what changed and what it was.',
  },
);

export const NoteCreatedData = Type.Object(
  {
    ...MessageSchema.properties,
    mention_ids: Type.Array(Type.String(), { description: 'The users the note mentions.' }),
  },
  {
    additionalProperties: false,
    title: 'NoteCreatedData',
    description: 'decisions §19: a private note (a Message of `type: "note"`) with the users it mentions.',
  },
);

export const CONVERSATION_EVENTS = {
  'message.received': {
    data: MessageSchema,
    summary: 'A contact sent a message',
    description: 'Data: the inbound Message, with its `conversation_id`, `contact_id` and `channel_id`.',
  },
  'message.updated': {
    data: MessageSchema,
    summary: 'A reply moved',
    description:
      'decisions §15: Data: the outbound Message sent through `POST /v1/conversations/{conversation_id}/messages`, ' +
      'each time it moves to `sent`, `delivered`, `read` or `failed`.',
  },
  'conversation.updated': {
    data: ConversationUpdatedData,
    summary: 'A conversation’s state changed',
    description:
      'decisions §19: Data: `{conversation, changed, previous}`, exactly once for each change of status, snooze, ' +
      'assignee, team, priority or labels, whatever made it (a person, a key, a contact’s message, a snooze ' +
      'ending, auto-assignment).',
  },
  'conversation.note_created': {
    data: NoteCreatedData,
    summary: 'A private note was added',
    description: 'decisions §19: Data: the note (a Message with `type: "note"`, `private: true`) and `mention_ids`.',
  },
} as const satisfies EventDefinitions;

// The outbox knows these types through its catalog, merged here (D332); the wiring lists the definitions.
declare module '../events/event-types.ts' {
  interface EventCatalog extends Readonly<typeof CONVERSATION_EVENTS> {}
}

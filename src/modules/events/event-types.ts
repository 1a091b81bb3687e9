// The events an organization's webhook endpoints can receive (decisions §11): each type's name and the TypeBox
// schema of its `data`. These schemas document the OpenAPI `webhooks` section and type `recordEvents` calls.
import { type Static, type TSchema, Type } from 'typebox';
import { DateTime } from '../../http/schemas.ts';
import { BroadcastSchema, RecipientSchema } from '../broadcasts/broadcasts.schemas.ts';
import { ContactSchema } from '../contacts/contacts.schemas.ts';
import { ConversationSchema, MessageSchema } from '../conversations/conversations.schemas.ts';
import { TemplateSchema } from '../templates/templates.schemas.ts';

export const ContactDeletedData = Type.Object(
  { id: Type.String() },
  { additionalProperties: false, title: 'ContactDeletedData', description: 'The id of a deleted contact.' },
);

export const RecipientEventData = Type.Object(
  {
    broadcast_id: Type.String(),
    ...RecipientSchema.properties,
  },
  {
    additionalProperties: false,
    title: 'BroadcastRecipientEventData',
    description: 'A broadcast recipient as the recipients list shows it, with its broadcast’s id.',
    examples: [
      {
        broadcast_id: 'bc_01JH5ZM2A3B4C5D6E7F8G9H0J1',
        contact_id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3',
        phone: '+15551234567',
        status: 'delivered',
        error: null,
        error_message: null,
        platform_message_id: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI',
        delivered_at: '2026-01-15T09:30:04.000Z',
        read_at: null,
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);

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

export const PingData = Type.Object(
  { endpoint_id: Type.String() },
  { additionalProperties: false, title: 'PingData', description: 'The endpoint the test call was made for.' },
);

/** Every event type with the schema of its `data` and what causes it (the OpenAPI description). */
export const EVENT_DEFINITIONS = {
  'contact.created': {
    data: ContactSchema,
    summary: 'A contact was created',
    description: 'Data: the Contact, as `GET /v1/contacts/{contact_id}` returns it.',
  },
  'contact.updated': {
    data: ContactSchema,
    summary: 'A contact was updated',
    description: 'Data: the Contact after the change.',
  },
  'contact.deleted': {
    data: ContactDeletedData,
    summary: 'A contact was deleted',
    description: 'Data: `{id}` of the deleted contact.',
  },
  'template.status_updated': {
    data: TemplateSchema,
    summary: 'A template’s review status or category changed',
    description: 'Data: the Template after a review result or a category change.',
  },
  'broadcast.recipient.updated': {
    data: RecipientEventData,
    summary: 'A broadcast recipient moved',
    description:
      'Data: the Broadcast recipient with `broadcast_id`, each time it moves to `sent`, `delivered`, `read` or `failed`.',
  },
  'broadcast.started': {
    data: BroadcastSchema,
    summary: 'An audience broadcast started',
    description:
      'decisions §16: Data: the Broadcast when the worker starts it (at `send_at`, or at once), now `preparing`.',
  },
  'broadcast.finished': {
    data: BroadcastSchema,
    summary: 'A broadcast finished',
    description: 'Data: the Broadcast, when it becomes `completed`, `cancelled` or `stopped_low_balance`.',
  },
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
  ping: {
    data: PingData,
    summary: 'A test event',
    description: 'Sent only by `POST /v1/webhook-endpoints/{endpoint_id}/test`, to that endpoint alone.',
  },
} as const satisfies Record<string, { data: TSchema; summary: string; description: string }>;

export type EventType = keyof typeof EVENT_DEFINITIONS;

/** The types an endpoint can subscribe to (`ping` goes only where the test call sends it). */
export const SUBSCRIBABLE_EVENT_TYPES = Object.keys(EVENT_DEFINITIONS).filter((type) => type !== 'ping') as Exclude<
  EventType,
  'ping'
>[];

export type EventData<T extends EventType> = Static<(typeof EVENT_DEFINITIONS)[T]['data']>;

/** One event as a feature records it: its type and its data (typed by the type). */
export type EventInput = { [T in EventType]: { type: T; data: EventData<T> } }[EventType];

/** `broadcast.recipient.updated` -> `BroadcastRecipientUpdatedEvent`: the component name of a type's envelope. */
export const eventTitle = (type: string) =>
  `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Event`;

/** The envelope every delivery carries as its body. */
export const eventEnvelope = <T extends TSchema>(type: string, data: T) =>
  Type.Object(
    {
      id: Type.String({ description: '`evt_…`; also the `webhook-id` header, the same on every retry.' }),
      type: Type.Literal(type),
      created_at: DateTime,
      data,
    },
    { additionalProperties: false, title: eventTitle(type), description: `The body of a \`${type}\` delivery.` },
  );

import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';

export const SENDERS = ['contact', 'agent', 'ai', 'system'] as const;
export const MESSAGE_STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'] as const;

export const ConversationSchema = Type.Object(
  {
    id: Type.String(),
    contact_id: Type.String(),
    channel_id: Type.String({ description: 'The connected number of the conversation.' }),
    last_message_at: DateTime,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { additionalProperties: false },
);

export const MessageSchema = Type.Object(
  {
    id: Type.String(),
    conversation_id: Type.String(),
    contact_id: Type.String(),
    channel_id: Type.String(),
    direction: StringEnum(['inbound', 'outbound'] as const),
    sender: StringEnum(SENDERS, {
      description: '`contact` for inbound messages; `system` for template messages sent by a broadcast.',
    }),
    type: Type.String({ description: 'The platform’s message type: `text`, `template`, `image`, `button`, …' }),
    text: Nullable(Type.String()),
    template_id: Nullable(Type.String()),
    phone: Type.String({ description: 'The contact’s number in this exchange (sender or recipient), E.164.' }),
    platform_message_id: Nullable(Type.String()),
    status: StringEnum(MESSAGE_STATUSES),
    error: Nullable(Type.String({ description: 'Why the message failed, e.g. `not_on_network`.' })),
    created_at: DateTime,
    sent_at: Nullable(DateTime),
    delivered_at: Nullable(DateTime),
    read_at: Nullable(DateTime),
    failed_at: Nullable(DateTime),
  },
  { additionalProperties: false },
);

export const ConversationPage = Page(ConversationSchema);
export const MessagePage = Page(MessageSchema);

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const ConversationListQuery = Type.Object(
  {
    limit: Type.Optional(LimitQuery()),
    cursor: Type.Optional(CursorQuery),
    contact_id: Type.Optional(Id),
    channel_id: Type.Optional(Id),
  },
  { additionalProperties: true },
);
export type ConversationListQuery = Static<typeof ConversationListQuery>;

export const MessageListQuery = Type.Object(
  { limit: Type.Optional(LimitQuery()), cursor: Type.Optional(CursorQuery) },
  { additionalProperties: true },
);
export type MessageListQuery = Static<typeof MessageListQuery>;

export const ConversationIdParams = Type.Object({ conversation_id: Id }, { additionalProperties: false });

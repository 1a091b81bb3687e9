import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, IdParam, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';

export const SENDERS = ['contact', 'agent', 'ai', 'system'] as const;
export const MESSAGE_STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'] as const;

/** decisions §19: the contact as a conversation's list row shows it. */
export const ConversationContactSchema = Type.Object(
  {
    id: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    phone: Nullable(Type.String()),
  },
  { additionalProperties: false, title: 'ConversationContact', description: 'The contact of a conversation.' },
);

/** decisions §19: the newest message of a conversation (notes included), for a list row's preview. */
export const LastMessageSchema = Type.Object(
  {
    id: Type.String(),
    sender: OpenEnum(SENDERS),
    type: Type.String(),
    text: Nullable(Type.String()),
    private: Type.Boolean({ description: 'True for a private note.' }),
    created_at: DateTime,
  },
  { additionalProperties: false, title: 'LastMessage', description: 'The newest message of a conversation.' },
);

export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export const CONVERSATION_SORTS = ['last_activity_at', 'waiting_since'] as const;
export const PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;

/** decisions §19: who owns a conversation: a user of the organization, or the assistant (§20); null: no one. */
const assignee = (title: string) =>
  Type.Union(
    [
      Type.Object(
        { type: StringEnum(['user'] as const), id: Type.String({ minLength: 1, maxLength: 64 }) },
        { additionalProperties: false },
      ),
      Type.Object({ type: StringEnum(['ai'] as const) }, { additionalProperties: false }),
    ],
    {
      title,
      description: 'A user of the organization (`{type: "user", id}`) or the assistant (`{type: "ai"}`).',
    },
  );
export const AssigneeSchema = assignee('Assignee');

const LabelsSchema = Type.Array(Type.String(), { description: 'decisions §19: in the order given.' });

export const ConversationSchema = Type.Object(
  {
    id: Type.String(),
    contact_id: Type.String(),
    contact: ConversationContactSchema,
    last_message: Nullable(LastMessageSchema),
    channel_id: Type.String({ description: 'The connected number of the conversation.' }),
    last_message_at: DateTime,
    last_inbound_at: Nullable({ ...DateTime, description: 'decisions §15: the contact’s newest message, or null.' }),
    window_expires_at: Nullable({
      ...DateTime,
      description:
        'When the customer-service window closes (`last_inbound_at` + 24 h), or null. Until then text and media ' +
        'replies are free; after it, only templates.',
    }),
    unread_count: Type.Integer({ minimum: 0, description: 'Inbound messages since the last read call.' }),
    status: OpenEnum(CONVERSATION_STATUSES, { description: 'decisions §19: a new conversation starts `open`.' }),
    snoozed_until: Nullable({
      ...DateTime,
      description: 'When a snooze ends (then `open` again); null while not snoozed or snoozed until the next message.',
    }),
    assignee: Nullable(AssigneeSchema),
    team_id: Nullable(Type.String()),
    priority: OpenEnum(PRIORITIES),
    labels: LabelsSchema,
    waiting_since: Nullable({
      ...DateTime,
      description: 'The oldest contact message not yet answered by an `agent`, `ai` or `system` message, else null.',
    }),
    first_reply_at: Nullable({ ...DateTime, description: 'The first `agent` or `ai` message, else null.' }),
    last_activity_at: { ...DateTime, description: 'The newest message’s time (notes included), else the creation.' },
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Conversation',
    description: 'The exchange between one contact and one connected number.',
    examples: [
      {
        id: 'cv_01JH5ZR6D7E8F9G0H1J2K3L4M5',
        contact_id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3',
        contact: {
          id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3',
          first_name: 'Ana',
          last_name: 'García',
          phone: '+5215512345678',
        },
        last_message: {
          id: 'msg_01JH5ZS7E8F9G0H1J2K3L4M5N7',
          sender: 'contact',
          type: 'text',
          text: 'Is my order on its way?',
          private: false,
          created_at: '2026-01-15T09:31:00.000Z',
        },
        channel_id: 'ch_01JH5ZK9X8W7V6U5T4S3R2Q1P0',
        last_message_at: '2026-01-15T09:31:00.000Z',
        last_inbound_at: '2026-01-15T09:31:00.000Z',
        window_expires_at: '2026-01-16T09:31:00.000Z',
        unread_count: 1,
        status: 'open',
        snoozed_until: null,
        assignee: { type: 'user', id: 'usr_01JH5ZP5C6D7E8F9G0H1J2K3L4' },
        team_id: 'team_01JH5ZQ6D7E8F9G0H1J2K3L4M5',
        priority: 'high',
        labels: ['shipping'],
        waiting_since: '2026-01-15T09:31:00.000Z',
        first_reply_at: null,
        last_activity_at: '2026-01-15T09:31:00.000Z',
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:31:00.000Z',
      },
    ],
  },
);

/** decisions §15: a media message's file; `url` is the URL given for outbound media, null for inbound. */
export const MessageMediaSchema = Type.Object(
  {
    mime_type: Nullable(Type.String()),
    filename: Nullable(Type.String()),
    caption: Nullable(Type.String()),
    url: Nullable(Type.String()),
    file_id: Type.Optional(
      Type.String({ description: 'D294: the uploaded file it was sent from (`POST /v1/files`), when it was.' }),
    ),
  },
  { additionalProperties: false, title: 'MessageMedia', description: 'The file of a media message.' },
);

export const MessageSchema = Type.Object(
  {
    id: Type.String(),
    conversation_id: Type.String(),
    contact_id: Type.String(),
    channel_id: Type.String(),
    direction: OpenEnum(['inbound', 'outbound'] as const),
    sender: OpenEnum(SENDERS, {
      description:
        '`contact` for inbound messages; `system` for template messages sent by a broadcast; `agent` (default) or ' +
        '`ai` for replies sent through `POST /v1/conversations/{conversation_id}/messages`.',
    }),
    type: Type.String({ description: 'The platform’s message type: `text`, `template`, `image`, `button`, …' }),
    text: Nullable(
      Type.String({
        description:
          'The text; a template message’s is its body as the contact received it (placeholders filled, D240), null ' +
          'for a template without a body text.',
      }),
    ),
    template_id: Nullable(Type.String()),
    phone: Type.String({ description: 'The contact’s number in this exchange (sender or recipient), E.164.' }),
    platform_message_id: Nullable(Type.String()),
    status: Nullable(OpenEnum(MESSAGE_STATUSES, { description: 'decisions §19: null for a note.' })),
    error: Nullable(
      Type.String({
        description:
          'Why the message failed, a stable code: `not_on_network`, `window_closed`, `platform_error`, ' +
          '`handoff_unconfirmed`, `rate_limited`, `payment_required`, `invalid_parameter`, …',
      }),
    ),
    error_message: Nullable(
      Type.String({ description: 'The platform’s own words for the failure (free text, may change), beside `error`.' }),
    ),
    media: Nullable(MessageMediaSchema),
    reply_to: Nullable(Type.String({ description: 'decisions §15: the id of the message this one answers.' })),
    author_id: Nullable(
      Type.String({
        description: 'decisions §19: the user who wrote it in the console; null for a key, the contact or the system.',
      }),
    ),
    private: Type.Boolean({ description: 'decisions §19: true for a private note (never sent to the contact).' }),
    created_at: DateTime,
    sent_at: Nullable(DateTime),
    delivered_at: Nullable(DateTime),
    read_at: Nullable(DateTime),
    failed_at: Nullable(DateTime),
  },
  {
    additionalProperties: false,
    title: 'Message',
    description: 'One message of a conversation.',
    examples: [
      {
        id: 'msg_01JH5ZS7E8F9G0H1J2K3L4M5N6',
        conversation_id: 'cv_01JH5ZR6D7E8F9G0H1J2K3L4M5',
        contact_id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3',
        channel_id: 'ch_01JH5ZK9X8W7V6U5T4S3R2Q1P0',
        direction: 'outbound',
        sender: 'system',
        type: 'template',
        text: 'Hello Ana, your order is on its way.',
        template_id: 'tpl_01JH5ZM2A3B4C5D6E7F8G9H0J1',
        phone: '+5215512345678',
        platform_message_id: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI',
        status: 'delivered',
        error: null,
        error_message: null,
        created_at: '2026-01-15T09:30:00.000Z',
        sent_at: '2026-01-15T09:30:01.000Z',
        delivered_at: '2026-01-15T09:30:04.000Z',
        read_at: null,
        failed_at: null,
        media: null,
        reply_to: null,
        author_id: null,
        private: false,
      },
    ],
  },
);

export const ConversationPage = Page(
  ConversationSchema,
  {},
  { title: 'ConversationPage', description: 'A page of conversations.' },
);
export const MessagePage = Page(MessageSchema, {}, { title: 'MessagePage', description: 'A page of messages.' });

const Id = Type.String({ minLength: 1, maxLength: 64 });

export const ConversationListQuery = Type.Object(
  {
    limit: Type.Optional(LimitQuery()),
    cursor: Type.Optional(CursorQuery),
    contact_id: Type.Optional(Id),
    channel_id: Type.Optional(Id),
    unread: Type.Optional(
      Type.Boolean({
        description: 'decisions §15: only conversations with (true) or without (false) unread messages.',
      }),
    ),
    window: Type.Optional(
      StringEnum(['open', 'closed'] as const, {
        description: 'decisions §15: only conversations whose customer-service window is open, or closed.',
      }),
    ),
    status: Type.Optional(
      Type.Array(StringEnum(CONVERSATION_STATUSES), { description: 'decisions §19: any of these statuses.' }),
    ),
    assignee: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'decisions §19: `unassigned`, `ai`, or a user id (that user’s conversations).',
      }),
    ),
    team_id: Type.Optional(Id),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: 50, description: 'decisions §19: carrying this label, ignoring case.' }),
    ),
    priority: Type.Optional(StringEnum(PRIORITIES)),
    sort: Type.Optional(
      StringEnum(CONVERSATION_SORTS, {
        description:
          'decisions §19: `last_activity_at` (newest first, the default) or `waiting_since` (oldest waiting first, ' +
          'then oldest; conversations not waiting last).',
      }),
    ),
  },
  { additionalProperties: true },
);
export type ConversationListQuery = Static<typeof ConversationListQuery>;

export const MessageListQuery = Type.Object(
  { limit: Type.Optional(LimitQuery()), cursor: Type.Optional(CursorQuery) },
  { additionalProperties: true },
);
export type MessageListQuery = Static<typeof MessageListQuery>;

export const ConversationIdParams = IdParam('conversation_id');

/** decisions §19: a label, 1–50 characters without surrounding spaces. */
const Label = Type.String({ minLength: 1, maxLength: 50, pattern: '^\\S(.*\\S)?$' });

export const ConversationPatchBody = Type.Object(
  {
    status: Type.Optional(StringEnum(CONVERSATION_STATUSES)),
    snoozed_until: Type.Optional(
      Nullable(
        Type.String({
          format: 'date-time',
          description: 'Only with `status: "snoozed"`: in the future, at most 90 days ahead.',
        }),
      ),
    ),
    assignee: Type.Optional(Nullable(assignee('AssigneeInput'))),
    team_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    priority: Type.Optional(StringEnum(PRIORITIES)),
    labels: Type.Optional(
      Type.Array(Label, { maxItems: 20, description: 'Replaces the set: at most 20, unique ignoring case.' }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ConversationPatch',
    description: 'decisions §19: the fields to change; a field left out stays as it is.',
    examples: [{ status: 'snoozed', snoozed_until: '2026-01-16T09:00:00.000Z', priority: 'high', labels: ['vip'] }],
  },
);
export type ConversationPatchBody = Static<typeof ConversationPatchBody>;

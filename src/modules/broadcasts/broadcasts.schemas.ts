import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, IdParam, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';
import { ConversationContactSchema } from '../conversations/conversations.schemas.ts';
import { BROADCAST_STATUSES, type BroadcastStatus, RECIPIENT_STATUSES } from '../recipients/broadcast-view.ts';
import { CONTACT_ORIGINS } from '../sub-origins/sub-origins.schemas.ts';

export { BROADCAST_STATUSES, type BroadcastStatus, RECIPIENT_STATUSES };

/** decisions §16: why a broadcast is `paused`, or was `cancelled` by the service. */
export const STATUS_REASONS = ['requested', 'template_not_sendable'] as const;

export const BroadcastSchema = Type.Object(
  {
    id: Type.String(),
    template_id: Type.String(),
    template_name: Type.String(),
    template_language: Type.String(),
    channel_id: Type.String({ description: 'The connected number the messages go out from.' }),
    status: OpenEnum(BROADCAST_STATUSES, {
      description:
        '`cancelled`, `stopped_low_balance` and `paused` are stored; an audience broadcast is `scheduled` until `send_at` and `preparing` while its recipients are added; otherwise `completed` when `pending` is 0, else `in_progress`.',
    }),
    requested: Type.Integer(),
    sent: Type.Integer({ description: 'Recipients in `sent`, `delivered` or `read`.' }),
    failed: Type.Integer(),
    pending: Type.Integer({ description: '`requested - sent - failed`.' }),
    origin: OpenEnum(CONTACT_ORIGINS, {
      description: 'Where the broadcast came from, in the ContactOrigin vocabulary: `API`.',
    }),
    retry_of: Nullable(
      Type.String({ description: 'decisions §13: the broadcast whose failures this one retries; null otherwise.' }),
    ),
    name: Nullable(Type.String({ description: 'decisions §16: the campaign’s name; null for sends.' })),
    audience: Nullable(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'decisions §16: the contact filters the broadcast was sent to, as given; null for sends.',
      }),
    ),
    send_at: Nullable(DateTime),
    started_at: Nullable(
      Type.String({ format: 'date-time', description: 'When the worker started the broadcast (audience broadcasts).' }),
    ),
    status_reason: Nullable(
      OpenEnum(STATUS_REASONS, {
        description: 'Why it is `paused`, or was `cancelled` by the service; null otherwise.',
      }),
    ),
    held_until: Nullable(
      Type.String({
        format: 'date-time',
        description: 'While recipients wait for room in the rolling 24-hour limit: when the window next has room.',
      }),
    ),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Broadcast',
    description: 'One send of a template to its recipients, with its counts.',
    examples: [
      {
        id: 'bc_01JH5ZQ1V7C2D3E4F5G6H7J8K9',
        template_id: 'tpl_01JH5ZM2A3B4C5D6E7F8G9H0J1',
        template_name: 'order_update',
        template_language: 'en_US',
        channel_id: 'ch_01JH5ZK9X8W7V6U5T4S3R2Q1P0',
        status: 'in_progress',
        requested: 2,
        sent: 1,
        failed: 0,
        pending: 1,
        origin: 'API',
        retry_of: null,
        name: null,
        audience: null,
        send_at: null,
        started_at: null,
        status_reason: null,
        held_until: null,
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);

export const RecipientSchema = Type.Object(
  {
    contact_id: Type.String(),
    phone: Type.String(),
    status: OpenEnum(RECIPIENT_STATUSES),
    error: Nullable(
      Type.String({
        description:
          'Set on failure: a stable code (`platform_error`, `not_on_network`, `opted_out`, `invalid_channel`, ' +
          '`handoff_unconfirmed`, `missing_variables`, `rate_limited`, `payment_required`, `invalid_parameter`, ' +
          '`template_paused`, …), the values `error_codes` of a retry matches.',
      }),
    ),
    error_message: Nullable(
      Type.String({ description: 'On failure, the platform’s own words for it (free text, may change), or null.' }),
    ),
    platform_message_id: Nullable(Type.String()),
    delivered_at: Nullable(DateTime),
    read_at: Nullable(DateTime),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'BroadcastRecipient',
    description: 'One recipient of a broadcast that the worker has reached.',
    examples: [
      {
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

/** A recipient as the list shows it: the recipient and its contact's name, read in the same statement (D242). */
export const ListedRecipientSchema = Type.Object(
  {
    ...RecipientSchema.properties,
    contact: {
      ...ConversationContactSchema,
      description: 'The contact as it is now (name and current phone), so that the list needs no request per row.',
    },
  },
  {
    additionalProperties: false,
    title: 'ListedRecipient',
    description: 'One recipient of a broadcast that the worker has reached, with its contact.',
    examples: [
      {
        ...((RecipientSchema as { examples?: Record<string, unknown>[] }).examples?.[0] ?? {}),
        contact: { id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3', first_name: 'Ana', last_name: 'Lima', phone: '+15551234567' },
      },
    ],
  },
);

export const BroadcastPage = Page(
  BroadcastSchema,
  {},
  { title: 'BroadcastPage', description: 'A page of broadcasts.' },
);
export const RecipientPage = Page(
  ListedRecipientSchema,
  { totalCount: 'required' },
  { title: 'BroadcastRecipientPage', description: 'A page of reached recipients, with the total.' },
);

export const BroadcastParams = IdParam('broadcast_id');

export const RetryBody = Type.Object(
  {
    error_codes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        minItems: 1,
        maxItems: 50,
        description:
          'Only recipients whose `error` is one of these (or starts with one followed by `:`, as in ' +
          '`rate_limited: …`). Left out: every failure another try can fix, except `handoff_unconfirmed` ' +
          '(it may have reached the contact), which is retried only when named here.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'RetryRequest',
    description: 'decisions §13: which failures of the broadcast to retry. Optional: no body retries every one.',
    'x-optional-body': true,
    examples: [{ error_codes: ['platform_error'] }],
  },
);

/** Cancel reads no body; one sent anyway (JSON) is accepted and ignored, as it always was. */
export const CancelBody = Type.Unsafe<unknown>({
  description: 'Not read: cancel takes no fields. A JSON body, when sent, is ignored.',
  'x-optional-body': true,
  examples: [{}],
});

export const BroadcastListQuery = Type.Object({
  limit: Type.Optional(LimitQuery()),
  cursor: Type.Optional(CursorQuery),
  status: Type.Optional(Type.Array(StringEnum(BROADCAST_STATUSES))),
  template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const RecipientListQuery = Type.Object({
  limit: Type.Optional(LimitQuery()),
  cursor: Type.Optional(CursorQuery),
  status: Type.Optional(Type.Array(StringEnum(RECIPIENT_STATUSES))),
});
export type BroadcastListQuery = Static<typeof BroadcastListQuery>;
export type RecipientListQuery = Static<typeof RecipientListQuery>;

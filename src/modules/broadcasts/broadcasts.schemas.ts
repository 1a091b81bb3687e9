import { Type } from 'typebox';
import { CursorQuery, LimitQuery } from '../../http/pagination.ts';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';

export const BROADCAST_STATUSES = ['in_progress', 'completed', 'stopped_low_balance', 'cancelled'] as const;
export const RECIPIENT_STATUSES = ['received', 'sending', 'sent', 'delivered', 'read', 'failed'] as const;

export const BroadcastSchema = Type.Object(
  {
    id: Type.String(),
    template_id: Type.String(),
    template_name: Type.String(),
    template_language: Type.String(),
    channel_id: Type.String({ description: 'The connected number the messages go out from.' }),
    status: StringEnum(BROADCAST_STATUSES, {
      description:
        '`cancelled` and `stopped_low_balance` are stored; otherwise `completed` when `pending` is 0, else `in_progress`.',
    }),
    requested: Type.Integer(),
    sent: Type.Integer({ description: 'Recipients in `sent`, `delivered` or `read`.' }),
    failed: Type.Integer(),
    pending: Type.Integer({ description: '`requested - sent - failed`.' }),
    origin: Type.String(),
    created_at: DateTime,
  },
  { additionalProperties: false },
);

export const RecipientSchema = Type.Object(
  {
    contact_id: Type.String(),
    phone: Type.String(),
    status: StringEnum(RECIPIENT_STATUSES),
    error: Nullable(Type.String({ description: 'Set on failure.' })),
    platform_message_id: Nullable(Type.String()),
    delivered_at: Nullable(DateTime),
    read_at: Nullable(DateTime),
    created_at: DateTime,
  },
  { additionalProperties: false },
);

export const BroadcastParams = Type.Object({ broadcast_id: Type.String({ minLength: 1, maxLength: 64 }) });

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

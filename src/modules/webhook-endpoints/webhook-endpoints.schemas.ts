import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';

export const MAX_ENDPOINTS_PER_ORG = 20;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const DISABLED_REASONS = ['gone', 'failing'] as const;

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    '`https://` to a public address. `http://` and hosts on private, loopback or link-local addresses only for ' +
    'hosts listed in the server’s `WEBHOOK_ALLOW_HOSTS`.',
});
const Description = Type.String({ maxLength: 500 });

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(
      StringEnum(DISABLED_REASONS, {
        description:
          '`gone`: the endpoint answered 410. `failing`: every attempt failed for 5 days. Null when enabled or ' +
          'when disabled through the API.',
      }),
    ),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'WebhookEndpoint',
    description: "An endpoint that receives the organization's events.",
  },
);
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...WebhookEndpointSchema.properties,
    secret: Type.String({
      description: '`whsec_` + base64 of 32 random bytes: the signing key. Shown only in this answer.',
    }),
  },
  {
    additionalProperties: false,
    title: 'WebhookEndpointWithSecret',
    description: 'An endpoint with its signing secret (shown on create and rotate only).',
  },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const WebhookEndpointList = Type.Object(
  { items: Type.Array(WebhookEndpointSchema) },
  { additionalProperties: false, title: 'WebhookEndpointList', description: 'Every endpoint of the organization.' },
);

/**
 * The bodies that name event types, for the types the wiring lists (D332: the outbox's catalog is assembled there, so
 * this feature knows no other): an unknown type is a 422 at its place.
 */
export function endpointBodies(eventTypes: readonly string[]) {
  const Events = Type.Array(StringEnum([...eventTypes, '*']), {
    minItems: 1,
    maxItems: 32,
    uniqueItems: true,
    description: 'Event types this endpoint receives, or `["*"]` for all.',
  });
  const WebhookEndpointInput = Type.Object(
    { url: Url, events: Events, description: Type.Optional(Nullable(Description)) },
    { additionalProperties: false, title: 'WebhookEndpointInput' },
  );

  const WebhookEndpointPatch = Type.Object(
    {
      url: Type.Optional(Url),
      events: Type.Optional(Events),
      description: Type.Optional(Nullable(Description)),
      enabled: Type.Optional(
        Type.Boolean({
          description:
            '`false` stops deliveries (pending ones fail with `endpoint_disabled`); `true` enables it again and ' +
            'clears `disabled_reason`.',
        }),
      ),
    },
    { additionalProperties: false, title: 'WebhookEndpointPatch' },
  );
  return { WebhookEndpointInput, WebhookEndpointPatch };
}
export type WebhookEndpointInput = Static<ReturnType<typeof endpointBodies>['WebhookEndpointInput']>;
export type WebhookEndpointPatch = Static<ReturnType<typeof endpointBodies>['WebhookEndpointPatch']>;

export const DeliveryAttemptSchema = Type.Object(
  {
    attempted_at: Type.String({ format: 'date-time', description: 'When the attempt started.' }),
    duration_ms: Type.Integer({ description: 'How long it took until the answer, the error or the timeout.' }),
    status_code: Nullable(Type.Integer({ description: 'HTTP status of the answer; null without one.' })),
    error: Nullable(Type.String({ description: 'Why it failed (timeout, connection, status); null on a 2xx.' })),
  },
  { additionalProperties: false, title: 'WebhookDeliveryAttempt', description: 'One attempt of a delivery.' },
);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String(),
    event_id: Type.String({ description: 'The event’s id, sent as the `webhook-id` header.' }),
    event_type: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ description: 'Attempts made so far.' }),
    last_status_code: Nullable(Type.Integer({ description: 'HTTP status of the last answer; null without one.' })),
    last_error: Nullable(Type.String({ description: 'Why the last attempt failed (timeout, connection, status).' })),
    next_attempt_at: Nullable(
      Type.String({ format: 'date-time', description: 'When the next attempt is due; null unless `pending`.' }),
    ),
    attempt_history: Type.Array(DeliveryAttemptSchema, {
      description:
        'Each attempt, oldest first (the last 25): a failure that a later attempt recovered stays visible here.',
    }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { additionalProperties: false, title: 'WebhookDelivery', description: 'One delivery of an event to an endpoint.' },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookDeliveryPage = Page(
  WebhookDeliverySchema,
  {},
  { title: 'WebhookDeliveryPage', description: 'A page of deliveries.' },
);

export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(LimitQuery()),
  cursor: Type.Optional(CursorQuery),
  status: Type.Optional(Type.Array(StringEnum(DELIVERY_STATUSES))),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

const Id = Type.String({ minLength: 1, maxLength: 64 });
export const EndpointParams = Type.Object({ endpoint_id: Id }, { additionalProperties: false });
export const DeliveryParams = Type.Object({ endpoint_id: Id, delivery_id: Id }, { additionalProperties: false });

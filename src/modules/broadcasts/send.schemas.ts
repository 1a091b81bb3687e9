import { Type } from 'typebox';
import { Phone } from '../../http/schemas.ts';

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'A public http(s) URL; the service fetches it.',
});

export const SendRecipient = Type.Object(
  {
    contact_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    phone: Type.Optional(Phone),
    variables: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 1024 }), {
        description: 'Values by token: `body.1`, `header.1`, `body.first_name`, `card.0.body.1`.',
      }),
    ),
    url_suffixes: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 2000 }), {
        description: 'Dynamic URL button suffixes by button index (`"0"`) or `card.N.button.M`.',
      }),
    ),
    coupon_code: Type.Optional(Type.String({ minLength: 1, maxLength: 15 })),
    lto_expiration: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })], {
        description: 'Limited-time offer expiry: ISO 8601 date-time or Unix milliseconds.',
      }),
    ),
    header_media_url: Type.Optional(Url),
    card_media_urls: Type.Optional(
      Type.Union([Type.Array(Type.Union([Url, Type.Null()]), { maxItems: 10 }), Type.Record(Type.String(), Url)], {
        description: 'Carousel card header media, by card index.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'SendRecipient',
    description: 'One recipient: `contact_id` or `phone` (not both).',
    examples: [{ phone: '+15551234567' }],
  },
);

export const SendBody = Type.Object(
  {
    recipients: Type.Union([SendRecipient, Type.Array(SendRecipient)], {
      description: 'One recipient or an array of 1 to 100.',
    }),
    channel_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The number to send from; required when the messaging account has more than one.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'SendRequest',
    // Works as is against the demo organization (one number, so no channel_id) and a template without variables.
    examples: [{ recipients: [{ phone: '+15551234567' }] }],
  },
);

export const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The same key within 24 hours returns the original broadcast.',
    }),
  ),
});

export const TemplateParams = Type.Object({ template_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** The `detail` codes of each refusal of a send, for the OpenAPI document (checked in this order, see the route). */
export const SEND_ERRORS = {
  400: ['invalid_channel', 'channel_id_required'],
  402: ['messaging_insufficient_balance'],
  404: ['contact_not_found'],
  409: ['template_not_sendable', 'messaging_limit_exceeded', 'idempotency_key_in_flight'],
  422: [
    'template_not_sendable',
    'unknown_variables',
    'unknown_url_suffixes',
    'missing_variables',
    'media_too_large',
    'media_type_mismatch',
    'media_fetch_failed',
    'duplicate_recipient',
    'contact_has_no_phone',
    'idempotency_key_reused',
  ],
};

/** The `detail` codes of a retry's refusals (decisions §13): a send's, and `nothing_to_retry`. */
export const RETRY_ERRORS = {
  400: ['invalid_channel', 'channel_id_required'],
  402: ['messaging_insufficient_balance'],
  404: [],
  409: ['template_not_sendable', 'nothing_to_retry', 'messaging_limit_exceeded', 'idempotency_key_in_flight'],
  422: ['template_not_sendable', 'idempotency_key_reused'],
};

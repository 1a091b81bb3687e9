import { Type } from 'typebox';
import { SendRecipient } from '../templates/recipient-input.schemas.ts';

export { SendRecipient };

/** A send names at most this many recipients (decisions §7); an audience broadcast (§16) reaches any number. */
export const MAX_RECIPIENTS = 100;

export const SendBody = Type.Object(
  {
    recipients: Type.Union([SendRecipient, Type.Array(SendRecipient, { minItems: 1, maxItems: MAX_RECIPIENTS })], {
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

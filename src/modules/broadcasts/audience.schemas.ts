// decisions §16: POST /v1/broadcasts, a template to an audience (the contact list's filters), now or at a time.
import { Type } from 'typebox';
import { DateTimeInput } from '../../http/schemas.ts';
import { ContactFilters } from '../contacts/contacts.schemas.ts';
import { SendRecipient } from '../templates/recipient-input.schemas.ts';

/** `send_at` may be at most this far ahead. */
export const SEND_AT_MAX_DAYS = 30;

// The shared recipient fields are a send recipient's, without its address: one schema for both.
const { contact_id: _contactId, phone: _phone, ...sharedInput } = SendRecipient.properties;

export const AudienceBroadcastBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1, maxLength: 64 }),
    audience: ContactFilters,
    channel_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'The number to send from; required when the messaging account has more than one.',
      }),
    ),
    ...sharedInput,
    send_at: Type.Optional({
      ...DateTimeInput,
      description: `When to start: from now to ${SEND_AT_MAX_DAYS} days ahead. Left out: at once.`,
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  {
    additionalProperties: false,
    title: 'AudienceBroadcastRequest',
    description:
      'decisions §16: one template to every contact the audience matches (with a phone, not `unavailable`). ' +
      '`variables`, `url_suffixes` and media are shared; a named placeholder resolves from each contact.',
    examples: [{ template_id: 'tpl_01JH5ZM2A3B4C5D6E7F8G9H0J1', audience: { country: ['MX'] }, name: 'Spring sale' }],
  },
);

/** The `detail` codes of the refusals of POST /v1/broadcasts, for the OpenAPI document (in their order). */
export const AUDIENCE_ERRORS = {
  400: ['invalid_channel', 'channel_id_required'],
  402: ['messaging_insufficient_balance'],
  404: [],
  409: ['template_not_sendable', 'idempotency_key_in_flight'],
  422: [
    'template_not_sendable',
    'unknown_variables',
    'unknown_url_suffixes',
    'missing_variables',
    'media_too_large',
    'media_type_mismatch',
    'media_fetch_failed',
    'idempotency_key_reused',
  ],
};

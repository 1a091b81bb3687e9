// decisions §15: the body of a reply in a conversation, its headers and its refusals (for the OpenAPI document).
import { type Static, Type } from 'typebox';
import { StringEnum } from '../../http/schemas.ts';
import { SendRecipient } from '../templates/recipient-input.schemas.ts';

export const REPLY_TYPES = ['text', 'image', 'video', 'audio', 'document', 'template'] as const;
export const MEDIA_REPLY_TYPES = ['image', 'video', 'audio', 'document'] as const;
export type MediaReplyType = (typeof MEDIA_REPLY_TYPES)[number];

/** decisions §15 limits. */
export const TEXT_MAX = 4096;
export const CAPTION_MAX = 1024;
export const FILENAME_MAX = 240;

const recipientFields = SendRecipient.properties;

export const ReplyBody = Type.Object(
  {
    type: StringEnum(REPLY_TYPES, {
      description:
        '`text` (with `text`), a media type (with `media_url` or `file_id`), or `template` (with `template_id` and a send ' +
        'recipient’s fields). Text and media replies need the customer-service window open.',
    }),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: TEXT_MAX, description: 'A text reply’s body.' })),
    preview_url: Type.Optional(Type.Boolean({ description: 'A text reply: show a preview of its first URL.' })),
    media_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          'A media reply: a public http(s) URL, fetched and checked like header media (image 5 MB, video and audio ' +
          '16 MB, document 100 MB).',
      }),
    ),
    file_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'A media reply: a file uploaded with `POST /v1/files` (of this organization, unexpired, of this type), ' +
          'instead of `media_url`.',
      }),
    ),
    caption: Type.Optional(
      Type.String({ minLength: 1, maxLength: CAPTION_MAX, description: 'An image, video or document’s caption.' }),
    ),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: FILENAME_MAX, description: 'A document’s name.' })),
    template_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'A template reply’s template.' }),
    ),
    variables: recipientFields.variables,
    url_suffixes: recipientFields.url_suffixes,
    header_media_url: recipientFields.header_media_url,
    card_media_urls: recipientFields.card_media_urls,
    coupon_code: recipientFields.coupon_code,
    lto_expiration: recipientFields.lto_expiration,
    sender: Type.Optional(
      StringEnum(['agent', 'ai'] as const, { description: 'Who wrote the reply: `agent` (default) or `ai`.' }),
    ),
    reply_to: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'The id of a message of this conversation it answers.' }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ReplyRequest',
    description: 'A reply in a conversation: text, media by URL or uploaded file, or a template.',
    // Others: `{type: "image", media_url: "https://example.com/receipt.png", caption: "Your receipt"}`,
    // `{type: "template", template_id: "tpl_…", variables: {"body.1": "4417"}}`.
    examples: [{ type: 'text', text: 'Your order ships today.', sender: 'agent' }],
  },
);
export type ReplyBody = Static<typeof ReplyBody>;

export const ReplyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The same key within 24 hours returns the original message.',
    }),
  ),
});

/** The `detail` codes of each refusal of a reply (checked in the order of decisions §15, see the route). */
export const REPLY_ERRORS = {
  402: ['messaging_insufficient_balance'],
  404: [],
  409: [
    'channel_unavailable',
    'conversation_window_closed',
    'template_not_sendable',
    'contact_opted_out',
    'messaging_limit_exceeded',
    'idempotency_key_in_flight',
  ],
  422: [
    'template_not_sendable',
    'missing_variables',
    'unknown_variables',
    'unknown_url_suffixes',
    'media_too_large',
    'media_type_mismatch',
    'media_fetch_failed',
    'idempotency_key_reused',
  ],
};

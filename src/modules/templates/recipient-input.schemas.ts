// The input of one recipient of a send: what a template's send requirements check (recipient-input.ts) and what the
// send route accepts (broadcasts/send.schemas.ts). One schema for both.
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

// The response of GET /v1/templates/{id}/send-requirements: one schema gives validation, the static type and the
// OpenAPI entry. Every key is always present (null or [] when it does not apply) so clients need no existence checks.

import { type Static, Type } from 'typebox';
import { Nullable } from '../../http/schemas.ts';

// Closed objects: the response serializer and the OpenAPI document list exactly these keys, and an input
// (catalog_send_defaults) with a misspelt key is refused rather than ignored.
const closed = { additionalProperties: false } as const;

export const MediaType = Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('document')]);

export const TemplateVariable = Type.Object(
  {
    token: Type.String({
      description: 'Key in the recipient `variables`: `body.1`, `header.first_name`, `card.0.body.1`',
    }),
    component: Type.Union([Type.Literal('header'), Type.Literal('body')]),
    card_index: Nullable(Type.Integer({ minimum: 0 })),
    placeholder: Type.String({ description: 'What sits between the braces: `1` or `first_name`' }),
    example: Nullable(Type.String()),
    resolves_from: Nullable(
      Type.String({
        description:
          'Where the value comes from when the recipient does not give one: a contact field (`first_name`) or `properties.<key>`',
      }),
    ),
  },
  closed,
);

export const UrlSuffix = Type.Object(
  {
    key: Type.String({
      description: 'Key in the recipient `url_suffixes`: the button index (`"0"`) or `card.N.button.M`',
    }),
    button_index: Type.Integer({ minimum: 0 }),
    card_index: Nullable(Type.Integer({ minimum: 0 })),
    url: Type.String(),
    example: Nullable(Type.String()),
  },
  closed,
);

export const MediaSurface = Type.Object(
  {
    token: Type.String({ description: '`header.media` (filled by `header_media_url`) or `card.N.header.media`' }),
    card_index: Nullable(Type.Integer({ minimum: 0 })),
    type: MediaType,
    max_bytes: Type.Integer(),
  },
  closed,
);

export const CatalogSlot = Type.Object(
  {
    button_index: Type.Integer({ minimum: 0 }),
    kind: Type.Union([Type.Literal('catalog'), Type.Literal('mpm')]),
    /** An MPM button must list products; they come from the template's `catalog_send_defaults`. */
    requires_products: Type.Boolean(),
  },
  closed,
);

export const SendRequirements = Type.Object(
  {
    parameter_format: Nullable(Type.Union([Type.Literal('positional'), Type.Literal('named')])),
    variables: Type.Array(TemplateVariable),
    contact_resolvable_tokens: Type.Array(Type.String()),
    url_suffixes: Type.Array(UrlSuffix),
    media: Type.Array(MediaSurface),
    catalog_slots: Type.Array(CatalogSlot),
    coupon_code: Type.Object(
      { required: Type.Boolean(), button_index: Nullable(Type.Integer({ minimum: 0 })) },
      closed,
    ),
    limited_time_offer: Type.Object({ present: Type.Boolean(), expiration_required: Type.Boolean() }, closed),
    never_sendable_reason: Nullable(Type.String()),
  },
  {
    ...closed,
    title: 'SendRequirements',
    description: 'What a template needs before it can be sent.',
    examples: [
      {
        parameter_format: 'positional',
        variables: [
          {
            token: 'body.1',
            component: 'body',
            card_index: null,
            placeholder: '1',
            example: 'Ana',
            resolves_from: null,
          },
        ],
        contact_resolvable_tokens: [],
        url_suffixes: [],
        media: [],
        catalog_slots: [],
        coupon_code: { required: false, button_index: null },
        limited_time_offer: { present: false, expiration_required: false },
        never_sendable_reason: null,
      },
    ],
  },
);

export type SendRequirements = Static<typeof SendRequirements>;
export type TemplateVariable = Static<typeof TemplateVariable>;
export type UrlSuffix = Static<typeof UrlSuffix>;
export type MediaSurface = Static<typeof MediaSurface>;
export type CatalogSlot = Static<typeof CatalogSlot>;

/** The template's `catalog_send_defaults`: what catalog and multi-product buttons show. */
export const CatalogSendDefaults = Type.Object(
  {
    thumbnail_product_retailer_id: Type.Optional(Type.String()),
    sections: Type.Optional(
      Type.Array(
        Type.Object({ title: Type.String(), product_retailer_ids: Type.Array(Type.String(), { minItems: 1 }) }, closed),
      ),
    ),
  },
  {
    ...closed,
    title: 'CatalogSendDefaults',
    description: 'What catalog and multi-product buttons show.',
    examples: [{ sections: [{ title: 'Popular', product_retailer_ids: ['sku-1001', 'sku-1002'] }] }],
  },
);
export type CatalogSendDefaults = Static<typeof CatalogSendDefaults>;

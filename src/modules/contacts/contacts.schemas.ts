import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';
import { PropertyValues, PropertyValuesInput } from '../properties/properties.schemas.ts';
import { ContactOriginSchema } from '../sub-origins/sub-origins.schemas.ts';

export const PHONE_PATTERN = '^\\+[1-9]\\d{1,14}$';
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
export const SOCIAL_HANDLE_PATTERN = '^[a-zA-Z0-9._]{1,30}$';
export const MESSAGING_STATUSES = ['verified', 'unverified', 'unavailable'] as const;
export const CONTACT_SORTS = ['recent', 'name', 'country', 'city', 'origin'] as const;
export type ContactSort = (typeof CONTACT_SORTS)[number];

export const ContactSchema = Type.Object(
  {
    id: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    country: Nullable(Type.String()),
    city: Nullable(Type.String()),
    social_handle: Nullable(Type.String()),
    inbox_handle: Nullable(Type.String({ description: 'Read-only.' })),
    messaging_username: Nullable(Type.String({ description: 'Read-only.' })),
    origin: Nullable(ContactOriginSchema),
    sub_origin_id: Nullable(Type.String()),
    messaging_status: StringEnum(MESSAGING_STATUSES, {
      description: 'Read-only: `unverified` with a phone on file, `unavailable` without; moved by sends.',
    }),
    funnel_stage_id: Nullable(Type.String()),
    owner_id: Nullable(Type.String()),
    properties: Type.Optional(PropertyValues),
    last_contacted_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { additionalProperties: false },
);
export type Contact = Static<typeof ContactSchema>;

const Name = Nullable(Type.String({ maxLength: 200 }));
const Ref = Nullable(Type.String({ minLength: 1, maxLength: 64 }));
const fields = {
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254 }))),
  phone: Type.Optional(Nullable(Type.String({ pattern: PHONE_PATTERN, description: 'E.164, e.g. `+5215512345678`.' }))),
  country: Type.Optional(Nullable(Type.String({ pattern: COUNTRY_PATTERN, description: 'ISO 3166-1 alpha-2.' }))),
  city: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 120 }))),
  social_handle: Type.Optional(Nullable(Type.String({ pattern: SOCIAL_HANDLE_PATTERN }))),
  sub_origin_id: Type.Optional(Ref),
  sub_origin_key: Type.Optional(Ref),
  funnel_stage_id: Type.Optional(Ref),
  owner_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'Opaque.' }))),
  properties: Type.Optional(PropertyValuesInput),
};

export const ContactInput = Type.Object(fields, {
  additionalProperties: false,
  description: 'Every field is optional; `null` is the same as leaving a field out.',
});
export type ContactInput = Static<typeof ContactInput>;

export const ContactPatch = Type.Object(fields, {
  additionalProperties: false,
  description:
    'Partial update: `null` clears a field; in `properties`, `null` removes that value and other values stay.',
});
export type ContactPatch = Static<typeof ContactPatch>;

const FilterEntry = Type.String({ minLength: 1, maxLength: 1000 });

export const ContactListQuery = Type.Object(
  {
    limit: LimitQuery(50, 200),
    cursor: Type.Optional(CursorQuery),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Case-insensitive substring of first, last or full name, email, phone, social handle or city.',
      }),
    ),
    country: Type.Optional(Type.Array(Type.String({ pattern: COUNTRY_PATTERN }), { maxItems: 100 })),
    origin: Type.Optional(Type.Array(ContactOriginSchema, { maxItems: 20 })),
    funnel_stage_ids: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
    owner_id: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 100 })),
    created_from: Type.Optional(
      Type.String({ format: 'date', description: 'Inclusive, in the organization’s timezone.' }),
    ),
    created_to: Type.Optional(
      Type.String({ format: 'date', description: 'Inclusive, in the organization’s timezone.' }),
    ),
    // Not a plain array: array parameters are split on every comma, and a filter value may hold commas. Entries
    // come as repeated keys, or comma-separated where a comma is followed by the next `KEY:OP:`.
    property_filter: Type.Optional(
      Type.Union([FilterEntry, Type.Array(FilterEntry, { maxItems: 20 })], {
        description:
          '`KEY:OP:VALUE`, ANDed, as repeated keys (or comma-separated: a comma followed by `KEY:OP:` starts the next entry). OP: `eq neq gt gte lt lte contains in exists`; `in` takes ' +
          '`|`-separated values; `exists` takes `true` or `false`.',
      }),
    ),
    include_total: Type.Optional(
      Type.Boolean({
        description:
          '`total_count` is exact up to 10,000 matches and `null` above; `true` makes it exact always, at the ' +
          'cost of counting every match.',
      }),
    ),
    sort: StringEnum(CONTACT_SORTS, { default: 'recent' }),
    sort_dir: Type.Optional(
      StringEnum(['asc', 'desc'] as const, { description: 'Default: `desc` for `recent`, `asc` for the others.' }),
    ),
  },
  { additionalProperties: true },
);
export type ContactListQuery = Static<typeof ContactListQuery>;

export const ContactPage = Page(ContactSchema, { totalCount: 'optional' });

import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { COUNTRY_FORMAT, DateTime, Nullable, OpenEnum, Phone, StringEnum } from '../../http/schemas.ts';
import { PropertyValues, PropertyValuesInput } from '../properties/properties.schemas.ts';
import { CONTACT_ORIGINS, ContactOriginSchema } from '../sub-origins/sub-origins.schemas.ts';

export const COUNTRY_PATTERN = '^[A-Z]{2}$';
export const SOCIAL_HANDLE_PATTERN = '^[a-zA-Z0-9._]{1,30}$';
export const MESSAGING_STATUSES = ['verified', 'unverified', 'unavailable'] as const;
export const CONTACT_SORTS = ['recent', 'name', 'country', 'city', 'origin'] as const;
export type ContactSort = (typeof CONTACT_SORTS)[number];
/** The page size when `limit` is left out. */
export const CONTACT_PAGE_SIZE = 50;

const CONTACT_EXAMPLE = {
  id: 'ct_01JH5ZN4B5C6D7E8F9G0H1J2K3',
  first_name: 'Ana',
  last_name: 'García',
  email: 'ana@example.com',
  phone: '+5215512345678',
  country: 'MX',
  city: 'Guadalajara',
  social_handle: 'ana.garcia',
  inbox_handle: null,
  messaging_username: null,
  origin: 'API',
  sub_origin_id: null,
  messaging_status: 'unverified',
  funnel_stage_id: 'fs_01JH5ZP5C6D7E8F9G0H1J2K3L4',
  owner_id: null,
  properties: {},
  opted_out: false,
  opted_out_at: null,
  last_contacted_at: null,
  created_at: '2026-01-15T09:30:00.000Z',
  updated_at: '2026-01-15T09:30:00.000Z',
};

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
    origin: Nullable(OpenEnum(CONTACT_ORIGINS, { description: 'ContactOrigin: the top-level acquisition category.' })),
    sub_origin_id: Nullable(Type.String()),
    messaging_status: OpenEnum(MESSAGING_STATUSES, {
      description: 'Read-only: `unverified` with a phone on file, `unavailable` without; moved by sends.',
    }),
    funnel_stage_id: Nullable(Type.String()),
    owner_id: Nullable(Type.String()),
    properties: Type.Optional(PropertyValues),
    opted_out: Type.Boolean({
      description:
        'decisions §14: the contact asked not to receive marketing (an inbound STOP, or `PATCH`); MARKETING sends ' +
        'fail for it with `error: "opted_out"`.',
    }),
    opted_out_at: Nullable(DateTime),
    last_contacted_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Contact',
    description: 'A person the organization talks to.',
    examples: [CONTACT_EXAMPLE],
  },
);
export type Contact = Static<typeof ContactSchema>;

const Name = Nullable(Type.String({ maxLength: 200 }));
const Ref = Nullable(Type.String({ minLength: 1, maxLength: 64 }));
const fields = {
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254 }))),
  phone: Type.Optional(Nullable(Phone)),
  // D135: a code of the ISO 3166-1 alpha-2 list (`XX` is refused at the field), not only its shape.
  country: Type.Optional(
    Nullable(
      Type.String({
        pattern: COUNTRY_PATTERN,
        format: COUNTRY_FORMAT,
        description: 'ISO 3166-1 alpha-2, one of the assigned codes (e.g. `MX`, `US`).',
      }),
    ),
  ),
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
  title: 'ContactInput',
  description: 'Every field is optional; `null` is the same as leaving a field out.',
  examples: [
    {
      first_name: 'Ana',
      last_name: 'García',
      email: 'ana@example.com',
      phone: '+5215512345678',
      country: 'MX',
      city: 'Guadalajara',
    },
  ],
});
export type ContactInput = Static<typeof ContactInput>;

export const ContactPatch = Type.Object(
  {
    ...fields,
    opted_out: Type.Optional(
      Type.Boolean({ description: 'decisions §14: `true` opts the contact out, `false` opts it back in.' }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ContactPatch',
    examples: [{ city: 'Monterrey', social_handle: null, opted_out: true }],
    description:
      'Partial update: `null` clears a field; in `properties`, `null` removes that value and other values stay.',
  },
);
export type ContactPatch = Static<typeof ContactPatch>;

const FilterEntry = Type.String({ minLength: 1, maxLength: 1000 });

/**
 * The contact list's filters (decisions §2, §14): one model for `GET /v1/contacts` (as query parameters) and for a
 * broadcast's `audience` (as JSON, decisions §16), read by the same code (contact-filters.ts).
 */
const CONTACT_FILTER_FIELDS = {
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
  created_to: Type.Optional(Type.String({ format: 'date', description: 'Inclusive, in the organization’s timezone.' })),
  // Not a plain array: array parameters are split on every comma, and a filter value may hold commas. Entries
  // come as repeated keys, or comma-separated where a comma is followed by the next `KEY:OP:`.
  property_filter: Type.Optional(
    Type.Union([FilterEntry, Type.Array(FilterEntry, { maxItems: 20 })], {
      description:
        '`KEY:OP:VALUE`, ANDed, as repeated keys (or comma-separated: a comma followed by `KEY:OP:` starts the next entry). OP: `eq neq gt gte lt lte contains in exists`; `in` takes ' +
        '`|`-separated values; `exists` takes `true` or `false`.',
    }),
  ),
  opted_out: Type.Optional(
    Type.Boolean({ description: 'decisions §14: only contacts that are (true) or are not (false) opted out.' }),
  ),
};

/** decisions §16: the contact list's filters as a JSON object; `{}` is every contact. */
export const ContactFilters = Type.Object(CONTACT_FILTER_FIELDS, {
  additionalProperties: false,
  title: 'ContactFilters',
  description: 'The filters of `GET /v1/contacts`, as JSON (arrays as arrays); `{}` matches every contact.',
  examples: [{ property_filter: ['tier:eq:gold'], opted_out: false }],
});
export type ContactFilters = Static<typeof ContactFilters>;

export const ContactListQuery = Type.Object(
  {
    limit: Type.Optional(LimitQuery(CONTACT_PAGE_SIZE, 200)),
    cursor: Type.Optional(CursorQuery),
    ...CONTACT_FILTER_FIELDS,
    include_total: Type.Optional(
      Type.Boolean({
        description:
          '`total_count` is exact up to 10,000 matches and `null` above; `true` makes it exact always, at the ' +
          'cost of counting every match.',
      }),
    ),
    sort: Type.Optional(StringEnum(CONTACT_SORTS, { default: 'recent' })),
    sort_dir: Type.Optional(
      StringEnum(['asc', 'desc'] as const, { description: 'Default: `desc` for `recent`, `asc` for the others.' }),
    ),
  },
  { additionalProperties: true },
);
/** The query as the service reads it: validation fills `limit` with its default. */
export type ContactListQuery = Static<typeof ContactListQuery> & { limit: number };

export const ContactPage = Page(
  ContactSchema,
  { totalCount: 'optional' },
  { title: 'ContactPage', description: 'A page of contacts.' },
);

/** decisions §12: at most this many items per batch. */
export const BATCH_MAX_ITEMS = 100;

/**
 * A batch item: the PATCH fields, and the `origin` of a contact the item creates (D230: a CSV import creates
 * `IMPORT` contacts). Public API: origin is set once at first touch and never overwritten, so an item that updates
 * keeps the contact's origin; without one, a created contact is `API` as `POST /v1/contacts` makes it (decisions §5).
 */
export const ContactBatchItem = Type.Object(
  {
    ...ContactPatch.properties,
    origin: Type.Optional(
      StringEnum(CONTACT_ORIGINS, {
        description: 'ContactOrigin of a contact this item creates (default `API`); ignored when it updates one.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ContactBatchItem',
    description: 'PATCH semantics for an update; `null` clears a field, and in `properties` removes that value.',
  },
);
export type ContactBatchItem = Static<typeof ContactBatchItem>;
/** What creates a contact: a create's fields, or a batch item's (which may opt out and name the origin). */
export type NewContactInput = ContactInput & Pick<ContactBatchItem, 'opted_out' | 'origin'>;

export const ContactBatch = Type.Object(
  {
    match_on: StringEnum(['email', 'phone'] as const, {
      description: 'The field that finds an existing contact; every item carries it.',
    }),
    items: Type.Array(ContactBatchItem, { minItems: 1, maxItems: BATCH_MAX_ITEMS }),
  },
  {
    additionalProperties: false,
    title: 'ContactBatchUpsert',
    description:
      'decisions §12: each item updates the live contact with its `match_on` value (PATCH semantics, properties ' +
      'merged) or creates one as `POST /v1/contacts`. All or nothing.',
    examples: [
      {
        match_on: 'email',
        items: [
          { email: 'ana@example.com', first_name: 'Ana', city: 'Guadalajara' },
          { email: 'bea@example.com', phone: '+5215512345679' },
        ],
      },
    ],
  },
);
export type ContactBatch = Static<typeof ContactBatch>;

export const ContactBatchResult = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          result: OpenEnum(['created', 'updated'] as const),
          contact: ContactSchema,
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    title: 'ContactBatchUpsertResult',
    description: 'One entry per item, in input order.',
    examples: [{ items: [{ index: 0, result: 'created', contact: CONTACT_EXAMPLE }] }],
  },
);

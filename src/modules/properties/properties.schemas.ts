import { type Static, Type } from 'typebox';
import { DateTime, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';
import { OPTION_KINDS as CHOICE_KINDS, KEY_PATTERN } from '../../lib/keys.ts';

export const PROPERTY_KINDS = [
  'TEXT',
  'NUMBER',
  'RADIO',
  'DROPDOWN',
  'BOOLEAN',
  'DATE',
  'TEXTAREA',
  'MULTI_SELECT',
  'EMAIL',
  'MONEY',
  'FILE',
  'URL',
  'MULTI_FILE',
] as const;
export type PropertyKind = (typeof PROPERTY_KINDS)[number];

/** Kinds whose values are option keys (one list with the console's, D328). */
export const OPTION_KINDS: readonly PropertyKind[] = CHOICE_KINDS;

export const PropertyKindSchema = StringEnum(PROPERTY_KINDS, { description: 'CrmPropertyKind.' });
/** The kind as responses show it: open to kinds added later. */
const PropertyKindOut = OpenEnum(PROPERTY_KINDS, { description: 'CrmPropertyKind.' });

const Key = Type.String({ pattern: KEY_PATTERN, description: 'Lowercase machine key, `^[a-z][a-z0-9_]{0,63}$`.' });
const Label = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, e.g. `USD`; MONEY only.' });

export const OptionSchema = Type.Object({ key: Key, label: Label }, { additionalProperties: false });
const Options = Type.Array(OptionSchema, {
  maxItems: 500,
  description: 'Choices of RADIO, DROPDOWN and MULTI_SELECT (at least one); empty for other kinds.',
});

export const PropertySchema = Type.Object(
  {
    id: Type.String(),
    key: Type.String(),
    label: Type.String(),
    description: Type.String(),
    kind: PropertyKindOut,
    options: Type.Array(OptionSchema),
    currency: Nullable(Type.String({ description: 'ISO 4217 code of a MONEY property; null otherwise.' })),
    required: Type.Boolean({ description: 'Required on contact creation.' }),
    order_idx: Type.Integer(),
    archived_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Property',
    description: 'A custom property: a typed field of the organization, filled per contact.',
    examples: [
      {
        id: 'prop_01JH5ZT8F9G0H1J2K3L4M5N6P7',
        key: 'plan_interest',
        label: 'Plan of interest',
        description: '',
        kind: 'DROPDOWN',
        options: [
          { key: 'basic', label: 'Basic' },
          { key: 'premium', label: 'Premium' },
        ],
        currency: null,
        required: false,
        order_idx: 0,
        archived_at: null,
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);
export type Property = Static<typeof PropertySchema>;

export const PropertyList = Type.Object(
  { items: Type.Array(PropertySchema) },
  { additionalProperties: false, title: 'PropertyList', description: 'Every custom property, archived too.' },
);

export const PropertyInput = Type.Object(
  {
    key: Key,
    label: Label,
    description: Type.Optional(Description),
    kind: PropertyKindSchema,
    options: Type.Optional(Options),
    currency: Type.Optional(Nullable(Currency)),
    required: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    title: 'PropertyInput',
    examples: [
      {
        key: 'plan_interest',
        label: 'Plan of interest',
        kind: 'DROPDOWN',
        options: [
          { key: 'basic', label: 'Basic' },
          { key: 'premium', label: 'Premium' },
        ],
      },
    ],
  },
);
export type PropertyInput = Static<typeof PropertyInput>;

export const PropertyPatch = Type.Object(
  {
    label: Type.Optional(Label),
    description: Type.Optional(Description),
    kind: Type.Optional(PropertyKindSchema),
    options: Type.Optional(Options),
    currency: Type.Optional(Nullable(Currency)),
    required: Type.Optional(Type.Boolean()),
    archived: Type.Optional(Type.Boolean({ description: '`true` sets `archived_at`, `false` clears it.' })),
  },
  {
    additionalProperties: false,
    title: 'PropertyPatch',
    description: 'Partial update. `kind` cannot change; `key` is fixed.',
    examples: [{ label: 'Plan they asked about' }],
  },
);
export type PropertyPatch = Static<typeof PropertyPatch>;

export const PropertyReorder = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        { property_id: Type.String({ minLength: 1 }), order_idx: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  {
    additionalProperties: false,
    title: 'PropertyReorder',
    examples: [{ items: [{ property_id: 'prop_01JH5ZT8F9G0H1J2K3L4M5N6P7', order_idx: 0 }] }],
  },
);
export type PropertyReorder = Static<typeof PropertyReorder>;

export const FileRef = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    mime_type: Type.Optional(Type.String({ maxLength: 255 })),
    size: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/** PropertyValue on input: `kind` must equal the definition's; the kind's own slot carries the value. */
export const PropertyValueInput = Type.Object(
  {
    property_id: Type.Optional(Nullable(Type.String())),
    kind: PropertyKindSchema,
    value_text: Type.Optional(Nullable(Type.String())),
    value_number: Type.Optional(Nullable(Type.Number())),
    value_bool: Type.Optional(Nullable(Type.Boolean())),
    value_date: Type.Optional(Nullable(Type.String({ format: 'date' }))),
    value_json: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type PropertyValueInput = Static<typeof PropertyValueInput>;

export const PropertyValueSchema = Type.Object(
  {
    property_id: Nullable(Type.String()),
    kind: PropertyKindOut,
    value_text: Nullable(Type.String()),
    value_number: Nullable(Type.Number()),
    value_bool: Nullable(Type.Boolean()),
    value_date: Nullable(Type.String({ format: 'date' })),
    value_json: Type.Unknown(),
  },
  { additionalProperties: false },
);
export type PropertyValue = Static<typeof PropertyValueSchema>;

export const PropertyValuesInput = Type.Record(Type.String(), Nullable(PropertyValueInput), {
  maxProperties: 500,
  description: 'Custom property values keyed by property **key**; `null` removes a value (PATCH).',
});
export const PropertyValues = Type.Record(Type.String(), PropertyValueSchema, {
  description: 'Custom property values keyed by property key.',
});

import { type Static, Type } from 'typebox';
import { CursorQuery, LimitQuery, Page } from '../../http/pagination.ts';
import { DateTime, IdParam, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';
import { CatalogSendDefaults } from './send-requirements.schemas.ts';

export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const TEMPLATE_STATUSES = [
  'DRAFT',
  'PENDING',
  'APPROVED',
  'REJECTED',
  'PAUSED',
  'DISABLED',
  'IN_APPEAL',
  'PENDING_DELETION',
] as const;

// Typed as an open record: the platform's component shapes are many and checked by template-components-validation.
const Component = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  properties: { type: Type.String({ description: 'HEADER, BODY, FOOTER, BUTTONS, CAROUSEL or LIMITED_TIME_OFFER' }) },
  required: ['type'],
  additionalProperties: true,
  title: 'TemplateComponent',
  description: 'A template component in the messaging platform’s own shape (text, format, buttons, example, …).',
  examples: [{ type: 'BODY', text: 'Hello! Your order has shipped.' }],
});

export const TemplateSchema = Type.Object(
  {
    id: Type.String(),
    business_account_id: Type.String({ description: 'The messaging business account that owns the template.' }),
    platform_template_id: Nullable(Type.String({ description: 'Identifier at the messaging platform.' })),
    name: Type.String(),
    language: Type.String({ description: 'Platform language code, e.g. `en_US`.' }),
    category: OpenEnum(TEMPLATE_CATEGORIES, {
      description: 'MARKETING, UTILITY or AUTHENTICATION; follows the platform’s re-categorisation.',
    }),
    status: OpenEnum(TEMPLATE_STATUSES, {
      description: 'One of the listed states; other values the platform reports are passed through as given.',
    }),
    components: Type.Array(Component),
    catalog_send_defaults: Nullable(CatalogSendDefaults),
    rejected_reason: Nullable(Type.String()),
    quality_rating: Nullable(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Template',
    description: 'A message template and its review state at the messaging platform.',
    examples: [
      {
        id: 'tpl_01JH5ZM2A3B4C5D6E7F8G9H0J1',
        business_account_id: '102290129340398',
        platform_template_id: '1689556908129832',
        name: 'order_update',
        language: 'en_US',
        category: 'UTILITY',
        status: 'APPROVED',
        components: [{ type: 'BODY', text: 'Hello! Your order has shipped.' }],
        catalog_send_defaults: null,
        rejected_reason: null,
        quality_rating: null,
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:32:00.000Z',
      },
    ],
  },
);

export const TemplatePage = Page(TemplateSchema, {}, { title: 'TemplatePage', description: 'A page of templates.' });

export const TemplateInput = Type.Object(
  {
    business_account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Optional when the organization has exactly one messaging account.',
      }),
    ),
    name: Type.String({ pattern: '^[a-z0-9_]{1,512}$', description: 'Lower case letters, digits and `_`.' }),
    language: Type.String({
      pattern: '^[a-z]{2,3}([_-][A-Za-z0-9]{2,4})?$',
      description: 'Platform language code, e.g. `en_US` or `es` (`en-US` is accepted and stored as `en_US`).',
    }),
    category: StringEnum(TEMPLATE_CATEGORIES),
    components: Type.Array(Component, { minItems: 1, maxItems: 10 }),
    catalog_send_defaults: Type.Optional(CatalogSendDefaults),
  },
  {
    additionalProperties: false,
    title: 'TemplateInput',
    examples: [
      {
        name: 'order_update',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hello! Your order has shipped.' }],
      },
    ],
  },
);
export type TemplateInput = Static<typeof TemplateInput>;

export const TemplateListQuery = Type.Object(
  {
    limit: Type.Optional(LimitQuery()),
    cursor: Type.Optional(CursorQuery),
    status: Type.Optional(Type.Array(StringEnum(TEMPLATE_STATUSES))),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'Exact template name.' })),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 16, description: 'Exact language code.' })),
    category: Type.Optional(Type.Array(StringEnum(TEMPLATE_CATEGORIES))),
  },
  { additionalProperties: true },
);
export type TemplateListQuery = Static<typeof TemplateListQuery>;

export const TemplateIdParams = IdParam('template_id');

import { type Static, Type } from 'typebox';
import { DateTime, DateTimeInput, Nullable, OpenEnum, Phone, StringEnum } from '../../http/schemas.ts';
import { ALL_SCOPES, SCOPES } from '../../http/scopes.ts';
import { OrganizationSchema, PLANS, ScopeList, SUBSCRIPTION_STATUSES } from '../account/account.schemas.ts';

const PlatformId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const Language = Type.String({ pattern: '^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$', maxLength: 35 });
const Money = Type.Number({ minimum: 0, maximum: 1e12 });

export const OrganizationInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    plan: Type.Optional(StringEnum(PLANS)),
    trial: Type.Optional(Type.Boolean()),
    trial_ends_at: Type.Optional(Nullable(DateTimeInput)),
    subscription_status: Type.Optional(StringEnum(SUBSCRIPTION_STATUSES)),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    language: Type.Optional(Language),
  },
  { additionalProperties: false },
);
export type OrganizationInput = Static<typeof OrganizationInput>;

export const OrganizationPatch = Type.Partial(OrganizationInput, { additionalProperties: false, minProperties: 1 });
export type OrganizationPatch = Static<typeof OrganizationPatch>;

export const OperatorOrganization = Type.Object(
  { ...OrganizationSchema.properties, updated_at: DateTime },
  { additionalProperties: false },
);

export const ApiKeyInput = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    // decisions §18: `["*"]` (the default) or a non-empty list of distinct scopes; `*` beside others is refused
    // by the service (a schema cannot say it).
    scopes: Type.Optional(Type.Array(StringEnum([ALL_SCOPES, ...SCOPES]), { minItems: 1, uniqueItems: true })),
    expires_at: Type.Optional(Nullable(DateTimeInput)),
  },
  { additionalProperties: false, title: 'ApiKeyInput', description: 'A new API key (decisions §18).' },
);
export type ApiKeyInput = Static<typeof ApiKeyInput>;

const apiKeyFields = {
  id: Type.String(),
  name: Nullable(Type.String()),
  prefix: Type.String({ description: 'The first characters of the key, for recognising it later.' }),
  scopes: ScopeList,
  expires_at: Nullable(DateTime),
  created_at: DateTime,
};

export const CreatedApiKey = Type.Object(
  { ...apiKeyFields, key: Type.String({ description: 'The full key. Shown only in this response.' }) },
  { additionalProperties: false, title: 'CreatedApiKey', description: 'A new API key, with its secret (once).' },
);

/** A key as listed: never its secret or hash. */
export const ListedApiKey = Type.Object(
  {
    ...apiKeyFields,
    last_used_at: Nullable(DateTime),
    revoked_at: Nullable(DateTime),
  },
  { additionalProperties: false, title: 'ListedApiKey', description: 'An API key as listed: never its secret.' },
);
export const ApiKeyList = Type.Object(
  { items: Type.Array(ListedApiKey) },
  { additionalProperties: false, title: 'ApiKeyList', description: 'API keys, oldest first.' },
);

export const Prices = Type.Object(
  { MARKETING: Type.Optional(Money), UTILITY: Type.Optional(Money), AUTHENTICATION: Type.Optional(Money) },
  { additionalProperties: false },
);

export const NumberInput = Type.Object(
  {
    phone: Phone,
    display_name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    phone_number_id: Type.Optional(PlatformId),
  },
  { additionalProperties: false },
);
export type NumberInput = Static<typeof NumberInput>;

export const MessagingAccountInput = Type.Object(
  {
    business_account_id: Type.Optional(PlatformId),
    display_name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    balance: Type.Optional(Money),
    prices: Type.Optional(Prices),
    messaging_limit_24h: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
    numbers: Type.Optional(Type.Array(NumberInput, { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type MessagingAccountInput = Static<typeof MessagingAccountInput>;

export const MessagingAccountPatch = Type.Object(
  {
    balance: Type.Optional(Money),
    prices: Type.Optional(Prices),
    messaging_limit_24h: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000_000 })),
    display_name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type MessagingAccountPatch = Static<typeof MessagingAccountPatch>;

export const NumberSchema = Type.Object(
  {
    id: Type.String(),
    phone: Type.String(),
    display_name: Nullable(Type.String()),
    business_account_id: Type.String(),
    phone_number_id: Type.String(),
    status: OpenEnum(['live', 'removed'] as const),
    created_at: DateTime,
  },
  { additionalProperties: false },
);

export const MessagingAccountSchema = Type.Object(
  {
    id: Type.String(),
    org_id: Type.String(),
    business_account_id: Type.String(),
    display_name: Nullable(Type.String()),
    balance: Type.Number(),
    prices: Type.Object(
      { MARKETING: Type.Number(), UTILITY: Type.Number(), AUTHENTICATION: Type.Number() },
      { additionalProperties: false },
    ),
    messaging_limit_24h: Type.Integer(),
    numbers: Type.Array(NumberSchema),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { additionalProperties: false },
);

/** GET /admin/v1/organizations/{org_id}/messaging-accounts: every account of the organization, oldest first (D223). */
export const MessagingAccountList = Type.Object(
  { items: Type.Array(MessagingAccountSchema) },
  { additionalProperties: false, title: 'MessagingAccountList' },
);

/** decisions §17 (settings): what an admin sees of the organization's messaging accounts in the console (D169). */
export const ConsoleMessagingAccount = Type.Object(
  {
    id: Type.String(),
    display_name: Nullable(Type.String()),
    balance: Type.Number({ description: 'What is left to pay for messages, in the account’s money.' }),
    prices: Type.Object(
      { MARKETING: Type.Number(), UTILITY: Type.Number(), AUTHENTICATION: Type.Number() },
      { additionalProperties: false, description: 'The price of one template message by category.' },
    ),
    messaging_limit_24h: Type.Integer({
      description: 'How many distinct phones a template may start a conversation with in any 24 hours.',
    }),
    numbers: Type.Array(
      Type.Object({ phone: Type.String(), display_name: Nullable(Type.String()) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, title: 'ConsoleMessagingAccount' },
);

export const ConsoleMessagingAccountList = Type.Object(
  { items: Type.Array(ConsoleMessagingAccount) },
  { additionalProperties: false, title: 'ConsoleMessagingAccountList', description: 'Oldest first.' },
);

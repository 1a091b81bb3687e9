import { Type } from 'typebox';
import { DateTime, Nullable, OpenEnum } from '../../http/schemas.ts';
import { ALL_SCOPES, SCOPES } from '../../http/scopes.ts';

export const PLANS = ['free', 'starter', 'pro', 'scale', 'enterprise'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'canceled', 'suspended'] as const;

const ORGANIZATION_EXAMPLE = {
  id: 'org_01JH5ZK3Q8W4Y2N7R6T9V0B1C2',
  name: 'Acme Retail',
  plan: 'scale',
  trial: false,
  trial_ends_at: null,
  subscription_status: 'active',
  timezone: 'America/Mexico_City',
  language: 'es',
  created_at: '2026-01-15T09:30:00.000Z',
};

export const OrganizationSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: OpenEnum(PLANS, { description: 'Plan code, lowest first: free, starter, pro, scale, enterprise.' }),
    trial: Type.Boolean({ description: 'True while the organization is on its free trial.' }),
    trial_ends_at: Nullable(DateTime),
    subscription_status: OpenEnum(SUBSCRIPTION_STATUSES),
    timezone: Type.String({ description: 'IANA time zone, e.g. `America/Mexico_City`.' }),
    language: Type.String({ description: 'Language tag, e.g. `en` or `pt-BR`.' }),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Organization',
    description: 'The organization an API key belongs to.',
    examples: [ORGANIZATION_EXAMPLE],
  },
);

/** decisions §18: `["*"]` (every operation) or a list of scopes; new scopes may be added later. */
export const ScopeList = Type.Array(OpenEnum([ALL_SCOPES, ...SCOPES]), {
  description:
    '`["*"]` (every operation) or some of: ' +
    SCOPES.map((scope) => `\`${scope}\``).join(', ') +
    '. A `:write` scope includes its `:read`.',
});

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    name: Nullable(Type.String()),
    scopes: ScopeList,
    expires_at: Nullable(DateTime),
  },
  { additionalProperties: false, title: 'ApiKeyView', description: 'The API key of the request.' },
);

export const MeSchema = Type.Object(
  {
    ...OrganizationSchema.properties,
    api_key: Type.Union([ApiKeyView, Type.Null()], {
      description: 'The calling key; null through the console’s API (`/app/api/v1/me`, a session, not a key).',
    }),
  },
  {
    additionalProperties: false,
    title: 'Me',
    description: 'The organization an API key belongs to, and the key itself.',
    examples: [
      {
        ...ORGANIZATION_EXAMPLE,
        api_key: {
          id: 'key_01JH5ZK3Q8W4Y2N7R6T9V0B1C3',
          name: 'Reporting',
          scopes: ['contacts:read'],
          expires_at: null,
        },
      },
    ],
  },
);

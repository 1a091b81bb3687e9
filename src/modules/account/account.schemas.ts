import { Type } from 'typebox';
import { DateTime, Nullable, OpenEnum } from '../../http/schemas.ts';

export const PLANS = ['free', 'starter', 'pro', 'scale', 'enterprise'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'canceled', 'suspended'] as const;

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
    examples: [
      {
        id: 'org_01JH5ZK3Q8W4Y2N7R6T9V0B1C2',
        name: 'Acme Retail',
        plan: 'scale',
        trial: false,
        trial_ends_at: null,
        subscription_status: 'active',
        timezone: 'America/Mexico_City',
        language: 'es',
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);

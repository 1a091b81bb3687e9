import { Type } from 'typebox';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';

export const PLANS = ['free', 'starter', 'pro', 'scale', 'enterprise'] as const;
export const SUBSCRIPTION_STATUSES = ['active', 'canceled', 'suspended'] as const;

export const OrganizationSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    plan: StringEnum(PLANS, { description: 'Plan code, lowest first: free, starter, pro, scale, enterprise.' }),
    trial: Type.Boolean({ description: 'True while the organization is on its free trial.' }),
    trial_ends_at: Nullable(DateTime),
    subscription_status: StringEnum(SUBSCRIPTION_STATUSES),
    timezone: Type.String({ description: 'IANA time zone, e.g. `America/Mexico_City`.' }),
    language: Type.String({ description: 'Language tag, e.g. `en` or `pt-BR`.' }),
    created_at: DateTime,
  },
  { additionalProperties: false },
);

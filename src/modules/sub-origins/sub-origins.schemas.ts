import { type Static, Type } from 'typebox';
import { DateTime, StringEnum } from '../../http/schemas.ts';
import { KEY_PATTERN } from '../../lib/keys.ts';

export const CONTACT_ORIGINS = [
  'SOCIAL',
  'ADS',
  'WEB',
  'EVENT',
  'REFERRAL',
  'OUTBOUND',
  'IMPORT',
  'MANUAL',
  'API',
  'OTHER',
] as const;
export type ContactOrigin = (typeof CONTACT_ORIGINS)[number];

export const ContactOriginSchema = StringEnum(CONTACT_ORIGINS, {
  description: 'ContactOrigin: the top-level acquisition category.',
});

export const SubOriginSchema = Type.Object(
  {
    id: Type.String(),
    key: Type.String(),
    label: Type.String(),
    origin: ContactOriginSchema,
    created_at: DateTime,
  },
  { additionalProperties: false },
);
export type SubOrigin = Static<typeof SubOriginSchema>;

export const SubOriginList = Type.Object({ items: Type.Array(SubOriginSchema) }, { additionalProperties: false });

export const SubOriginInput = Type.Object(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'Lowercase machine key, `^[a-z][a-z0-9_]{0,63}$`.' }),
    label: Type.String({ minLength: 1, maxLength: 200 }),
    origin: ContactOriginSchema,
  },
  { additionalProperties: false },
);
export type SubOriginInput = Static<typeof SubOriginInput>;

import { type Static, Type } from 'typebox';
import { DateTime, OpenEnum, StringEnum } from '../../http/schemas.ts';
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
    origin: OpenEnum(CONTACT_ORIGINS, { description: 'ContactOrigin: the top-level acquisition category.' }),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'SubOrigin',
    description: 'A named source of contacts inside an origin category.',
    examples: [
      {
        id: 'so_01JH5ZV9G0H1J2K3L4M5N6P7Q8',
        key: 'spring_fair',
        label: 'Spring fair 2026',
        origin: 'EVENT',
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);
export type SubOrigin = Static<typeof SubOriginSchema>;

export const SubOriginList = Type.Object(
  { items: Type.Array(SubOriginSchema) },
  { additionalProperties: false, title: 'SubOriginList', description: 'Every sub-origin, oldest first.' },
);

export const SubOriginInput = Type.Object(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'Lowercase machine key, `^[a-z][a-z0-9_]{0,63}$`.' }),
    label: Type.String({ minLength: 1, maxLength: 200 }),
    origin: ContactOriginSchema,
  },
  {
    additionalProperties: false,
    title: 'SubOriginInput',
    examples: [{ key: 'spring_fair', label: 'Spring fair 2026', origin: 'EVENT' }],
  },
);
export type SubOriginInput = Static<typeof SubOriginInput>;

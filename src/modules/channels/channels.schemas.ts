import { Type } from 'typebox';
import { DateTime, Nullable, OpenEnum, Phone } from '../../http/schemas.ts';

// decisions §1: `{items: [{id, phone, display_name, business_account_id, status, created_at}]}`.
export const PhoneSchema = Type.Object(
  {
    id: Type.String({ description: 'What a send’s `channel_id` names.' }),
    phone: Phone,
    display_name: Nullable(Type.String()),
    business_account_id: Type.String({ description: 'The messaging business account the number belongs to.' }),
    status: OpenEnum(['live'] as const, { description: 'Only live numbers are listed.' }),
    created_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'MessagingPhone',
    description: 'A connected messaging number.',
    examples: [
      {
        id: 'ch_01JH5ZK9X8W7V6U5T4S3R2Q1P0',
        phone: '+15550100001',
        display_name: 'Acme support',
        business_account_id: '102290129340398',
        status: 'live',
        created_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);

export const PhoneList = Type.Object(
  { items: Type.Array(PhoneSchema) },
  { additionalProperties: false, title: 'MessagingPhoneList', description: 'The live numbers, oldest first.' },
);

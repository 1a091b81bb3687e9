import { Type } from 'typebox';
import { DateTime, Nullable, StringEnum } from '../../http/schemas.ts';

// decisions §1: `{items: [{id, phone, display_name, business_account_id, status, created_at}]}`.
export const PhoneSchema = Type.Object(
  {
    id: Type.String({ description: 'What a send’s `channel_id` names.' }),
    phone: Type.String({ description: 'E.164.' }),
    display_name: Nullable(Type.String()),
    business_account_id: Type.String({ description: 'The messaging business account the number belongs to.' }),
    status: StringEnum(['live'] as const, { description: 'Only live numbers are listed.' }),
    created_at: DateTime,
  },
  { additionalProperties: false },
);

export const PhoneList = Type.Object({ items: Type.Array(PhoneSchema) }, { additionalProperties: false });

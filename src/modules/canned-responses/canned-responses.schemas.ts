// decisions §19: canned responses, saved replies an agent inserts by short code.
import { type Static, Type } from 'typebox';
import { DateTime, IdParam } from '../../http/schemas.ts';

/** decisions §19: at most 1,000 per organization. */
export const MAX_CANNED_RESPONSES = 1000;

const ShortCode = Type.String({ pattern: '^[a-z0-9_-]{1,30}$', description: 'Unique in the organization.' });
const Text = Type.String({
  minLength: 1,
  maxLength: 4096,
  description:
    'May hold `{{contact.first_name}}`, `{{contact.last_name}}` and `{{contact.properties.KEY}}`, which the console ' +
    'fills from the contact when inserting it.',
});

export const CannedResponseSchema = Type.Object(
  { id: Type.String(), short_code: Type.String(), text: Type.String(), created_at: DateTime, updated_at: DateTime },
  {
    additionalProperties: false,
    title: 'CannedResponse',
    description: 'A saved reply.',
    examples: [
      {
        id: 'cr_01jh5zq6d7e8f9g0h1j2k3l4m5',
        short_code: 'thanks',
        text: 'Thank you, {{contact.first_name}}!',
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);

export const CannedResponseList = Type.Object(
  { items: Type.Array(CannedResponseSchema) },
  { additionalProperties: false, title: 'CannedResponseList', description: 'Canned responses by short code.' },
);

export const CannedResponseQuery = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Matches the short code’s start or anywhere in the text, ignoring case.',
      }),
    ),
  },
  { additionalProperties: true },
);

export const CannedResponseInput = Type.Object(
  { short_code: ShortCode, text: Text },
  {
    additionalProperties: false,
    title: 'CannedResponseInput',
    description: 'A new canned response.',
    examples: [{ short_code: 'thanks', text: 'Thank you, {{contact.first_name}}!' }],
  },
);
export type CannedResponseInput = Static<typeof CannedResponseInput>;

export const CannedResponsePatch = Type.Object(
  { short_code: Type.Optional(ShortCode), text: Type.Optional(Text) },
  {
    additionalProperties: false,
    title: 'CannedResponsePatch',
    description: 'The fields to change.',
    examples: [{ text: 'Thanks a lot, {{contact.first_name}}!' }],
  },
);
export type CannedResponsePatch = Static<typeof CannedResponsePatch>;

export const CannedResponseIdParams = IdParam('canned_response_id');

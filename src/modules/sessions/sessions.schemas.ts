import { type Static, Type } from 'typebox';
import { DateTime, Nullable } from '../../http/schemas.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../users/passwords.ts';
import { UserSchema } from '../users/users.schemas.ts';

export const SessionSchema = Type.Object(
  {
    user: UserSchema,
    organization: Type.Object(
      { id: Type.String(), name: Type.String(), timezone: Type.String() },
      { additionalProperties: false, description: 'The organization the user belongs to.' },
    ),
    csrf_token: Type.String({
      description: 'The value of the `crm_csrf` cookie: send it as `X-CSRF-Token` with every change.',
    }),
    expires_at: DateTime,
    idle_expires_at: Type.Unsafe<string | Date>({
      type: 'string',
      format: 'date-time',
      description: 'When the session ends unless used before (12 hours after its last use, to the minute).',
    }),
  },
  {
    additionalProperties: false,
    title: 'ConsoleSession',
    description: 'The signed-in person, their organization and the session’s ends (7 days, or 12 hours idle).',
  },
);

export const SignInInput = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, examples: ['ana@example.com'] }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH, examples: ['correct horse battery staple'] }),
  },
  { additionalProperties: false, title: 'ConsoleSignIn', description: 'An email and its password.' },
);
export type SignInInput = Static<typeof SignInInput>;

const LinkToken = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The `token` of the sign-in link (after `#token=`).',
  examples: ['sil_3q2ZB0m1cV7x9kqPZl0sJmQvX4w8tYbH2nR6eA5dF1g'],
});

export const SignInLinkLookup = Type.Object(
  { token: LinkToken },
  { additionalProperties: false, title: 'SignInLinkLookup', description: 'The token of a sign-in link.' },
);

export const SignInLinkInfo = Type.Object(
  { email: Type.String(), name: Nullable(Type.String()), expires_at: DateTime },
  { additionalProperties: false, title: 'SignInLinkInfo', description: 'Whom a live sign-in link is for.' },
);

export const AcceptSignInLink = Type.Object(
  {
    token: LinkToken,
    password: Type.String({
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      description: `The new password: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
      examples: ['correct horse battery staple'],
    }),
  },
  {
    additionalProperties: false,
    title: 'SignInLinkAcceptance',
    description: 'A sign-in link’s token and the password its user chooses.',
  },
);

// The console's people (decisions §17): one schema per shape, shared by the operator API and the console's routes.
import { type Static, Type } from 'typebox';
import { DateTime, Nullable, OpenEnum, StringEnum } from '../../http/schemas.ts';

export const ROLES = ['admin', 'agent'] as const;
export type Role = (typeof ROLES)[number];

const Email = Type.String({ format: 'email', maxLength: 254, examples: ['ana@example.com'] });
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const UserSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    role: OpenEnum(ROLES),
    created_at: DateTime,
    last_sign_in_at: Nullable(DateTime),
    available: Type.Boolean({ description: 'decisions §19: available for conversations (true) or away.' }),
  },
  {
    additionalProperties: false,
    title: 'User',
    description: 'A person of the organization who signs in to the console.',
    examples: [
      {
        id: 'usr_01jd3q8w4y2n7r6t9v0b1c2d3e',
        email: 'ana@example.com',
        name: 'Ana Lima',
        role: 'admin',
        created_at: '2026-01-15T09:30:00.000Z',
        last_sign_in_at: null,
        available: true,
      },
    ],
  },
);
export type User = Static<typeof UserSchema>;

export const UserList = Type.Object(
  { items: Type.Array(UserSchema) },
  { additionalProperties: false, title: 'UserList' },
);

export const UserInput = Type.Object(
  { email: Email, name: Type.Optional(Nullable(Name)), role: StringEnum(ROLES) },
  { additionalProperties: false, title: 'UserInput', description: 'A person to invite.' },
);
export type UserInput = Static<typeof UserInput>;

export const UserPatch = Type.Object(
  { name: Type.Optional(Nullable(Name)), role: Type.Optional(StringEnum(ROLES)) },
  { additionalProperties: false, minProperties: 1, title: 'UserPatch', description: 'A new name or role.' },
);
export type UserPatch = Static<typeof UserPatch>;

const signInLinkFields = {
  sign_in_url: Type.String({
    description: 'An absolute, one-time link to choose a password (valid 24 hours). Shown only in this response.',
    examples: ['http://127.0.0.1:8080/app/set-password#token=sil_x1'],
  }),
  sign_in_url_expires_at: DateTime,
};

export const SignInLinkSchema = Type.Object(signInLinkFields, {
  additionalProperties: false,
  title: 'SignInLink',
  description: 'A new one-time sign-in link; earlier unused links of the user stop working.',
});

export const InvitedUser = Type.Object(
  { ...UserSchema.properties, ...signInLinkFields },
  {
    additionalProperties: false,
    title: 'InvitedUser',
    description: 'The user created, with the one-time link that lets them choose a password.',
  },
);

/** decisions §19: a person as `GET /v1/users` lists them (for assignees, teams and mentions). */
export const PersonSchema = Type.Object(
  {
    id: Type.String(),
    name: Nullable(Type.String()),
    email: Type.String(),
    role: OpenEnum(ROLES),
    available: Type.Boolean({ description: 'Available for conversations (true, the default) or away.' }),
  },
  {
    additionalProperties: false,
    title: 'Person',
    description: 'A person of the organization.',
    examples: [
      {
        id: 'usr_01jd3q8w4y2n7r6t9v0b1c2d3e',
        name: 'Ana Lima',
        email: 'ana@example.com',
        role: 'agent',
        available: true,
      },
    ],
  },
);

export const PersonList = Type.Object(
  { items: Type.Array(PersonSchema) },
  { additionalProperties: false, title: 'PersonList', description: 'The organization’s people, oldest first.' },
);

export const AvailabilityPatch = Type.Object(
  { available: Type.Boolean() },
  {
    additionalProperties: false,
    title: 'AvailabilityPatch',
    description: 'decisions §19: the signed-in person marks themselves available (true) or away (false).',
    examples: [{ available: false }],
  },
);
export type AvailabilityPatch = Static<typeof AvailabilityPatch>;

// decisions §19: teams of the organization's people, with auto-assignment.
import { type Static, Type } from 'typebox';
import { DateTime, IdParam } from '../../http/schemas.ts';

/** decisions §19: at most 100 teams per organization. */
export const MAX_TEAMS = 100;

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const MemberIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 1000,
  uniqueItems: true,
  description: 'Users of the organization (another id: 422). Replaces the members when changed.',
});
const MaxOpen = Type.Integer({
  minimum: 1,
  maximum: 1000,
  description: 'Auto-assignment gives a member a conversation only while they have fewer open and pending ones.',
});

export const TeamSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    member_ids: Type.Array(Type.String(), { description: 'The members’ user ids, in id order.' }),
    auto_assign: Type.Boolean(),
    max_open_per_member: Type.Integer(),
    created_at: DateTime,
    updated_at: DateTime,
  },
  {
    additionalProperties: false,
    title: 'Team',
    description: 'People who work conversations together.',
    examples: [
      {
        id: 'team_01jh5zq6d7e8f9g0h1j2k3l4m5',
        name: 'Support',
        member_ids: ['usr_01jd3q8w4y2n7r6t9v0b1c2d3e'],
        auto_assign: true,
        max_open_per_member: 20,
        created_at: '2026-01-15T09:30:00.000Z',
        updated_at: '2026-01-15T09:30:00.000Z',
      },
    ],
  },
);
export type Team = Static<typeof TeamSchema>;

export const TeamList = Type.Object(
  { items: Type.Array(TeamSchema) },
  { additionalProperties: false, title: 'TeamList', description: 'Every team, oldest first.' },
);

export const TeamInput = Type.Object(
  {
    name: Name,
    member_ids: Type.Optional(MemberIds),
    auto_assign: Type.Optional(Type.Boolean({ default: false })),
    max_open_per_member: Type.Optional({ ...MaxOpen, default: 20 }),
  },
  {
    additionalProperties: false,
    title: 'TeamInput',
    description: 'A new team; `name` is unique ignoring case.',
    examples: [{ name: 'Support', member_ids: ['usr_01jd3q8w4y2n7r6t9v0b1c2d3e'], auto_assign: true }],
  },
);
export type TeamInput = Static<typeof TeamInput>;

export const TeamPatch = Type.Object(
  {
    name: Type.Optional(Name),
    member_ids: Type.Optional(MemberIds),
    auto_assign: Type.Optional(Type.Boolean()),
    max_open_per_member: Type.Optional(MaxOpen),
  },
  {
    additionalProperties: false,
    title: 'TeamPatch',
    description: 'The fields to change.',
    examples: [{ auto_assign: true, max_open_per_member: 10 }],
  },
);
export type TeamPatch = Static<typeof TeamPatch>;

export const TeamIdParams = IdParam('team_id');

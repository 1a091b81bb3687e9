// decisions §19: `/v1/teams` (scopes teams:read / teams:write). In the console, agents read teams and admins manage
// them (roles: an agent holds teams:read only).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, NoContent, v1Errors } from '../../http/schemas.ts';
import { TeamIdParams, TeamInput, TeamList, TeamPatch, TeamSchema } from './teams.schemas.ts';
import type { TeamsService } from './teams.service.ts';

const tags = ['Teams'];
const duplicate = {
  409: { codes: ['duplicate'], description: 'A team of this name exists (ignoring case): `{code, field: "name"}`.' },
};

export function teamsRoutes(parent: FastifyInstance, teams: TeamsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/teams',
    {
      schema: {
        tags,
        summary: 'List teams',
        description: 'decisions §19: every team of the organization, oldest first, whole (at most 100).',
        operationId: 'listTeams',
        response: { 200: described('The teams.', TeamList), ...v1Errors() },
      },
    },
    async (request) => teams.list(authOf(request).orgId),
  );

  app.post(
    '/teams',
    {
      schema: {
        tags,
        summary: 'Create a team',
        description:
          'decisions §19: `name` (1–100, unique ignoring case), `member_ids` (users of the organization), ' +
          '`auto_assign` (false by default) and `max_open_per_member` (1–1,000, default 20). The 101st team is a ' +
          '422 `{code: "team_limit"}`.',
        operationId: 'createTeam',
        body: TeamInput,
        response: {
          201: described('The team.', TeamSchema),
          ...v1Errors({ ...duplicate, 422: { codes: ['team_limit'], description: 'Invalid input, or 100 teams.' } }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await teams.create(authOf(request).orgId, request.body)),
  );

  app.get(
    '/teams/:team_id',
    {
      schema: {
        tags,
        summary: 'Read a team',
        description: 'decisions §19: one team with its members.',
        operationId: 'getTeam',
        params: TeamIdParams,
        response: { 200: described('The team.', TeamSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => teams.get(authOf(request).orgId, request.params.team_id),
  );

  app.patch(
    '/teams/:team_id',
    {
      schema: {
        tags,
        summary: 'Change a team',
        description:
          'decisions §19: any of `name`, `member_ids` (replaces the members), `auto_assign`, ' +
          '`max_open_per_member`. Conversations waiting for the team are given out at once to members with room.',
        operationId: 'updateTeam',
        params: TeamIdParams,
        body: TeamPatch,
        response: { 200: described('The team.', TeamSchema), ...v1Errors({ 404: [], ...duplicate, 422: [] }) },
      },
    },
    async (request) => teams.update(authOf(request).orgId, request.params.team_id, request.body),
  );

  app.delete(
    '/teams/:team_id',
    {
      schema: {
        tags,
        summary: 'Delete a team',
        description: 'decisions §19: its conversations stay, with `team_id: null` (each a `conversation.updated`).',
        operationId: 'deleteTeam',
        params: TeamIdParams,
        response: { 204: NoContent('Deleted.'), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      await teams.remove(authOf(request).orgId, request.params.team_id);
      return reply.code(204).send(null);
    },
  );
}

// The console's people (decisions §17), admins only: list, invite (the answer carries the one-time sign-in link),
// change a role or name, remove, and a fresh sign-in link (to choose a new password).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { ApiError } from '../../http/errors.ts';
import { consoleErrors, described, IdParam, NoContent, v1Errors } from '../../http/schemas.ts';
import {
  AvailabilityPatch,
  InvitedUser,
  PersonList,
  SignInLinkSchema,
  UserInput,
  UserList,
  UserPatch,
  UserSchema,
} from './users.schemas.ts';
import type { UsersService } from './users.service.ts';

const tags = ['Console'];
const security = [{ consoleSession: [] }];
const config = { adminOnly: true };
const Params = IdParam('user_id');
const lastAdmin = {
  409: { codes: ['last_admin'], description: 'The organization’s last admin cannot be demoted or removed.' },
};

/** decisions §19: `GET /v1/users`, the organization's people (scope `account:read`; agents too, in the console). */
export function peopleRoutes(parent: FastifyInstance, users: UsersService): void {
  parent.withTypeProvider<TypeBoxTypeProvider>().get(
    '/users',
    {
      schema: {
        tags: ['Account'],
        summary: 'List the organization’s people',
        description:
          'decisions §19: every person of the organization with their role and whether they are available, oldest ' +
          'first, whole (not paginated): the assignees, team members and mentions a conversation can name.',
        operationId: 'listUsers',
        response: { 200: described('The people.', PersonList), ...v1Errors() },
      },
    },
    async (request) => users.people(authOf(request).orgId),
  );
}

export function usersRoutes(parent: FastifyInstance, users: UsersService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.patch(
    '/me',
    {
      schema: {
        tags,
        security,
        summary: 'Mark yourself available or away',
        description:
          'decisions §19: any signed-in person (admin or agent) sets their own `available`. Becoming available ' +
          'gives them at once the waiting conversations of their auto-assigning teams that they have room for.',
        operationId: 'consoleUpdateMe',
        body: AvailabilityPatch,
        response: { 200: described('The signed-in person.', UserSchema), ...consoleErrors({ 422: [] }) },
      },
    },
    async (request) => {
      const { orgId, user } = authOf(request);
      if (!user) throw new ApiError(401, { code: 'session_required' });
      return users.setAvailable(orgId, user.id, request.body.available);
    },
  );

  app.get(
    '/users',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'List the organization’s people',
        description: 'Admins only. Oldest first.',
        operationId: 'consoleListUsers',
        response: { 200: described('The people.', UserList), ...consoleErrors() },
      },
    },
    async (request) => users.list(authOf(request).orgId),
  );

  app.post(
    '/users',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Invite a person',
        description:
          'Admins only. The answer carries `sign_in_url`, a one-time link (24 hours) where the person chooses a ' +
          'password; hand it to them. One email is one person across organizations.',
        operationId: 'consoleInviteUser',
        body: UserInput,
        response: {
          201: described('The person invited.', InvitedUser),
          ...consoleErrors({
            409: { codes: ['duplicate_user'], description: 'A person with this email exists already.' },
            422: [],
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await users.invite(authOf(request).orgId, request.body)),
  );

  app.patch(
    '/users/:user_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Change a person’s role or name',
        description: 'Admins only. A role change applies to the person’s next request.',
        operationId: 'consoleUpdateUser',
        params: Params,
        body: UserPatch,
        response: { 200: described('The person.', UserSchema), ...consoleErrors({ 404: [], 422: [], ...lastAdmin }) },
      },
    },
    async (request) => users.update(authOf(request).orgId, request.params.user_id, request.body),
  );

  app.delete(
    '/users/:user_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Remove a person',
        description: 'Admins only. Their sessions end at once.',
        operationId: 'consoleRemoveUser',
        params: Params,
        response: { 204: NoContent('Removed.'), ...consoleErrors({ 404: [], ...lastAdmin }) },
      },
    },
    async (request, reply) => {
      await users.remove(authOf(request).orgId, request.params.user_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/users/:user_id/sign-in-link',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'A new sign-in link for a person',
        description:
          'Admins only. A one-time link (24 hours) to choose a new password; earlier unused links stop working.',
        operationId: 'consoleNewSignInLink',
        params: Params,
        response: { 201: described('The link.', SignInLinkSchema), ...consoleErrors({ 404: [] }) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await users.newSignInLink(authOf(request).orgId, request.params.user_id)),
  );
}

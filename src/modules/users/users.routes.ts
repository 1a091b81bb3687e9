// The console's people (decisions §17), admins only: list, invite (the answer carries the one-time sign-in link),
// change a role or name, remove, and a fresh sign-in link (to choose a new password).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { consoleErrors, described, IdParam, NoContent } from '../../http/schemas.ts';
import { InvitedUser, SignInLinkSchema, UserInput, UserList, UserPatch, UserSchema } from './users.schemas.ts';
import type { UsersService } from './users.service.ts';

const tags = ['Console'];
const security = [{ consoleSession: [] }];
const config = { adminOnly: true };
const Params = IdParam('user_id');
const lastAdmin = {
  409: { codes: ['last_admin'], description: 'The organization’s last admin cannot be demoted or removed.' },
};

export function usersRoutes(parent: FastifyInstance, users: UsersService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

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

// The operator API (/admin/v1): organizations, keys, messaging accounts and numbers. Off without ADMIN_TOKEN.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { bearerToken, secretMatcher } from '../../http/bearer.ts';
import { ApiError } from '../../http/errors.ts';
import { errorResponse, NoContent } from '../../http/schemas.ts';
import { InvitedUser, UserInput } from '../users/users.schemas.ts';
import type { UsersService } from '../users/users.service.ts';
import {
  ApiKeyInput,
  ApiKeyList,
  CreatedApiKey,
  MessagingAccountInput,
  MessagingAccountList,
  MessagingAccountPatch,
  MessagingAccountSchema,
  NumberInput,
  NumberSchema,
  OperatorOrganization,
  OrganizationInput,
  OrganizationPatch,
} from './operator.schemas.ts';
import type { OperatorService } from './operator.service.ts';

const errors = (...statuses: number[]) =>
  Object.fromEntries([401, 422, ...statuses].map((status) => [status, errorResponse(status)]));

const OrgParams = Type.Object({ org_id: Type.String() });
const AccountParams = Type.Object({ account_id: Type.String() });

export interface OperatorRouteDeps {
  adminToken: string;
  operator: OperatorService;
  users: UsersService;
  /** The embedded database's consistent copy (Database.backup); absent on PostgreSQL. */
  backup?: (() => Promise<Uint8Array>) | undefined;
}

export function operatorRoutes(parent: FastifyInstance, deps: OperatorRouteDeps): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const matches = secretMatcher(deps.adminToken);
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new ApiError(401, 'missing_bearer_token');
    if (!matches(token)) throw new ApiError(401, 'invalid_admin_token');
  });
  const { operator } = deps;
  const hide = { hide: true, tags: ['Operator'] };

  app.post(
    '/organizations',
    { schema: { ...hide, body: OrganizationInput, response: { 201: OperatorOrganization, ...errors() } } },
    async (request, reply) => reply.code(201).send(await operator.createOrganization(request.body)),
  );
  app.get(
    '/organizations/:org_id',
    { schema: { ...hide, params: OrgParams, response: { 200: OperatorOrganization, ...errors(404) } } },
    async (request) => operator.getOrganization(request.params.org_id),
  );
  app.patch(
    '/organizations/:org_id',
    {
      schema: {
        ...hide,
        params: OrgParams,
        body: OrganizationPatch,
        response: { 200: OperatorOrganization, ...errors(404) },
      },
    },
    async (request) => operator.updateOrganization(request.params.org_id, request.body),
  );
  app.post(
    '/organizations/:org_id/api-keys',
    {
      schema: {
        ...hide,
        params: OrgParams,
        body: ApiKeyInput,
        response: { 201: CreatedApiKey, ...errors(404) },
      },
      // The body is optional: no body means no name.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await operator.createApiKey(request.params.org_id, request.body));
    },
  );
  app.get(
    '/organizations/:org_id/api-keys',
    { schema: { ...hide, params: OrgParams, response: { 200: ApiKeyList, ...errors(404) } } },
    async (request) => ({ items: await operator.listApiKeys(request.params.org_id) }),
  );
  app.delete(
    '/organizations/:org_id/api-keys/:key_id',
    {
      schema: {
        ...hide,
        params: Type.Object({ org_id: Type.String(), key_id: Type.String() }),
        response: { 204: NoContent('Revoked.'), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { org_id, key_id } = request.params;
      await operator.revokeApiKey(org_id, key_id);
      return reply.code(204).send(null);
    },
  );
  // decisions §17: the operator creates an organization's people; the answer carries a one-time sign-in link.
  app.post(
    '/organizations/:org_id/users',
    {
      schema: {
        ...hide,
        params: OrgParams,
        body: UserInput,
        response: { 201: InvitedUser, ...errors(404, 409) },
      },
    },
    async (request, reply) => reply.code(201).send(await deps.users.invite(request.params.org_id, request.body)),
  );
  app.post(
    '/organizations/:org_id/messaging-accounts',
    {
      schema: {
        ...hide,
        params: OrgParams,
        body: MessagingAccountInput,
        response: { 201: MessagingAccountSchema, ...errors(404, 409) },
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await operator.createMessagingAccount(request.params.org_id, request.body));
    },
  );
  // The organization's accounts, each as GET /messaging-accounts/{account_id} shows it (D223).
  app.get(
    '/organizations/:org_id/messaging-accounts',
    { schema: { ...hide, params: OrgParams, response: { 200: MessagingAccountList, ...errors(404) } } },
    async (request) => ({ items: await operator.listOrganizationMessagingAccounts(request.params.org_id) }),
  );
  app.get(
    '/messaging-accounts/:account_id',
    { schema: { ...hide, params: AccountParams, response: { 200: MessagingAccountSchema, ...errors(404) } } },
    async (request) => operator.getMessagingAccount(request.params.account_id),
  );
  app.patch(
    '/messaging-accounts/:account_id',
    {
      schema: {
        ...hide,
        params: AccountParams,
        body: MessagingAccountPatch,
        response: { 200: MessagingAccountSchema, ...errors(404) },
      },
    },
    async (request) => operator.updateMessagingAccount(request.params.account_id, request.body),
  );
  // D147: `crm backup` asks the running server, the one process that holds the embedded database.
  app.get('/backup', { schema: hide }, async (_request, reply) => {
    if (!deps.backup) {
      throw new ApiError(409, {
        code: 'backup_unavailable',
        message: 'Backups here are of the embedded database; back up PostgreSQL with pg_dump.',
      });
    }
    const archive = await deps.backup();
    const name = `crm-backup-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`;
    return reply
      .type('application/gzip')
      .header('Content-Disposition', `attachment; filename="${name}"`)
      .send(Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength));
  });
  app.post(
    '/messaging-accounts/:account_id/numbers',
    {
      schema: {
        ...hide,
        params: AccountParams,
        body: NumberInput,
        response: { 201: NumberSchema, ...errors(404, 409) },
      },
    },
    async (request, reply) => {
      return reply.code(201).send(await operator.addNumber(request.params.account_id, request.body));
    },
  );
  app.delete(
    '/messaging-accounts/:account_id/numbers/:number_id',
    {
      schema: {
        ...hide,
        params: Type.Object({ account_id: Type.String(), number_id: Type.String() }),
        response: { 204: NoContent('Removed.'), ...errors(404) },
      },
    },
    async (request, reply) => {
      const { account_id, number_id } = request.params;
      await operator.removeNumber(account_id, number_id);
      return reply.code(204).send(null);
    },
  );
}

// The console's admin-only routes on the operator's data, for the signed-in admin's own organization: its API keys
// (decisions §17, §18: list the keys in force, create one with its secret shown once, revoke one) and, read only,
// its messaging accounts (balance, prices, limit: D169). The same service and rules as the operator's /admin/v1 routes.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { consoleErrors, described, IdParam, NoContent } from '../../http/schemas.ts';
import { ApiKeyInput, ApiKeyList, ConsoleMessagingAccountList, CreatedApiKey } from './operator.schemas.ts';
import type { OperatorService } from './operator.service.ts';

const tags = ['Console'];
const security = [{ consoleSession: [] }];
const config = { adminOnly: true };

export function consoleAdminRoutes(parent: FastifyInstance, operator: OperatorService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/api-keys',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'List the organization’s API keys',
        description: 'Admins only. The keys not revoked, oldest first, with their prefix, scopes, expiry and last use.',
        operationId: 'consoleListApiKeys',
        response: { 200: described('The keys.', ApiKeyList), ...consoleErrors() },
      },
    },
    async (request) => ({ items: await operator.listActiveApiKeys(authOf(request).orgId) }),
  );

  // decisions §17 (settings: the organization's messaging balance), D169: read only; the operator sets it.
  app.get(
    '/messaging-accounts',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'List the organization’s messaging accounts',
        description:
          'Admins only. Each account’s balance, prices, rolling 24-hour limit and numbers, oldest first. The ' +
          'operator sets them (`/admin/v1/messaging-accounts`).',
        operationId: 'consoleListMessagingAccounts',
        response: { 200: described('The accounts.', ConsoleMessagingAccountList), ...consoleErrors() },
      },
    },
    async (request) => ({ items: await operator.listMessagingAccounts(authOf(request).orgId) }),
  );

  app.post(
    '/api-keys',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create an API key',
        description: 'Admins only. The answer carries the full `key`, shown only once.',
        operationId: 'consoleCreateApiKey',
        body: ApiKeyInput,
        response: { 201: described('The key, with its secret.', CreatedApiKey), ...consoleErrors({ 422: [] }) },
      },
    },
    async (request, reply) => reply.code(201).send(await operator.createApiKey(authOf(request).orgId, request.body)),
  );

  app.delete(
    '/api-keys/:key_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Revoke an API key',
        description: 'Admins only. Requests with the key are refused from now on (401 `invalid_api_key`).',
        operationId: 'consoleRevokeApiKey',
        params: IdParam('key_id'),
        response: { 204: NoContent('Revoked.'), ...consoleErrors({ 404: [] }) },
      },
    },
    async (request, reply) => {
      await operator.revokeApiKey(authOf(request).orgId, request.params.key_id);
      return reply.code(204).send(null);
    },
  );
}

// The operator API (/admin/v1): organizations, keys, messaging accounts and numbers. Off without ADMIN_TOKEN.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { bearerToken } from '../../http/auth.ts';
import { ApiError } from '../../http/errors.ts';
import { errorResponse, NoContent } from '../../http/schemas.ts';
import {
  ApiKeyInput,
  CreatedApiKey,
  MessagingAccountInput,
  MessagingAccountPatch,
  MessagingAccountSchema,
  NumberInput,
  NumberSchema,
  OperatorOrganization,
  OrganizationInput,
  OrganizationPatch,
} from './operator.schemas.ts';
import type { OperatorService } from './operator.service.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

const errors = (...statuses: number[]) =>
  Object.fromEntries([401, 422, ...statuses].map((status) => [status, errorResponse(status)]));

const OrgParams = Type.Object({ org_id: Type.String() });
const AccountParams = Type.Object({ account_id: Type.String() });

export function operatorRoutes(parent: FastifyInstance, deps: { adminToken: string; operator: OperatorService }): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const expected = digest(deps.adminToken);
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new ApiError(401, 'missing_bearer_token');
    // Compare digests so that neither the length nor the content leaks through timing.
    if (!timingSafeEqual(digest(token), expected)) throw new ApiError(401, 'invalid_admin_token');
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
      return reply.code(201).send(await operator.createApiKey(request.params.org_id, request.body.name));
    },
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

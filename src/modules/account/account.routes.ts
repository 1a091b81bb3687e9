import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { MeSchema } from './account.schemas.ts';

export function accountRoutes(parent: FastifyInstance): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    {
      schema: {
        tags: ['Account'],
        summary: 'The organization behind the API key, and the key',
        description:
          'Plan, trial and subscription state decide access and the rate budget (20 per second, 5 in trial). ' +
          '`api_key` is the calling key: its scopes and expiry (decisions §18).',
        operationId: 'getMe',
        response: { 200: described('The organization of the key, and the key.', MeSchema), ...v1Errors() },
      },
    },
    async (request) => {
      const { org, key } = authOf(request);
      return { ...org, api_key: key };
    },
  );
}

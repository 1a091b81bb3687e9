import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { OrganizationSchema } from './account.schemas.ts';

export function accountRoutes(parent: FastifyInstance): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    {
      schema: {
        tags: ['Account'],
        summary: 'The organization behind the API key',
        description:
          'Plan, trial and subscription state decide access and the rate budget (20 per second, 5 in trial).',
        operationId: 'getMe',
        response: { 200: described('The organization of the key.', OrganizationSchema), ...v1Errors() },
      },
    },
    async (request) => authOf(request).org,
  );
}

import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
import { OrganizationSchema } from './account.schemas.ts';

export function accountRoutes(app: FastifyInstance): void {
  app.get(
    '/me',
    {
      schema: {
        tags: ['Account'],
        summary: 'The organization behind the API key',
        operationId: 'getMe',
        response: { 200: OrganizationSchema, ...v1Errors() },
      },
    },
    async (request) => authOf(request).org,
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { SubOriginInput, SubOriginList, SubOriginSchema } from './sub-origins.schemas.ts';
import type { SubOriginsService } from './sub-origins.service.ts';

const tags = ['Sub-origins'];

export function subOriginsRoutes(parent: FastifyInstance, subOrigins: SubOriginsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/sub-origins',
    {
      schema: {
        tags,
        summary: 'List sub-origins, oldest first (not paginated)',
        description: 'A contact names one with `sub_origin_id` or `sub_origin_key`.',
        operationId: 'listSubOrigins',
        response: { 200: described('Every sub-origin, oldest first.', SubOriginList), ...v1Errors() },
      },
    },
    async (request) => subOrigins.list(authOf(request).orgId),
  );

  app.post(
    '/sub-origins',
    {
      schema: {
        tags,
        summary: 'Create a sub-origin: a named source inside an origin category',
        description: 'The key is unique in the organization.',
        operationId: 'createSubOrigin',
        body: SubOriginInput,
        response: {
          201: described('The sub-origin created.', SubOriginSchema),
          ...v1Errors({
            409: { codes: ['duplicate_key'], description: 'The key is taken: `{code: "duplicate_key", key, id}`.' },
            422: [],
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await subOrigins.create(authOf(request).orgId, request.body)),
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { IdParam, v1Errors } from '../../http/schemas.ts';
import { PropertyInput, PropertyList, PropertyPatch, PropertyReorder, PropertySchema } from './properties.schemas.ts';
import type { PropertiesService } from './properties.service.ts';

const tags = ['Custom properties'];
const Params = IdParam('property_id');

export function propertiesRoutes(parent: FastifyInstance, properties: PropertiesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/properties',
    {
      schema: {
        tags,
        summary: 'List custom properties (all of them, archived too; not paginated)',
        operationId: 'listProperties',
        response: { 200: PropertyList, ...v1Errors() },
      },
    },
    async (request) => properties.list(authOf(request).orgId),
  );

  app.post(
    '/properties',
    {
      schema: {
        tags,
        summary: 'Create a custom property',
        operationId: 'createProperty',
        body: PropertyInput,
        response: {
          201: PropertySchema,
          ...v1Errors([409, 422], { 409: 'The key is taken: `{code: "duplicate_key", key, id}`.' }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await properties.create(authOf(request).orgId, request.body)),
  );

  app.post(
    '/properties/reorder',
    {
      schema: {
        tags,
        summary: 'Move properties to new positions',
        description:
          'Each named property moves to the position it asks for; the others keep their relative order. ' +
          'Positions are renumbered 0..n-1. Unknown ids: 422 `{code: "unknown_ids", reason, missing_ids}`.',
        operationId: 'reorderProperties',
        body: PropertyReorder,
        response: { 200: PropertyList, ...v1Errors([422]) },
      },
    },
    async (request) => properties.reorder(authOf(request).orgId, request.body),
  );

  app.get(
    '/properties/:property_id',
    {
      schema: {
        tags,
        summary: 'Read a custom property',
        operationId: 'getProperty',
        params: Params,
        response: { 200: PropertySchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => properties.get(authOf(request).orgId, request.params.property_id as string),
  );

  app.patch(
    '/properties/:property_id',
    {
      schema: {
        tags,
        summary: 'Update, archive or unarchive a custom property',
        operationId: 'updateProperty',
        params: Params,
        body: PropertyPatch,
        response: { 200: PropertySchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => properties.update(authOf(request).orgId, request.params.property_id as string, request.body),
  );

  app.delete(
    '/properties/:property_id',
    {
      schema: {
        tags,
        summary: 'Delete a custom property and its value on every contact',
        operationId: 'deleteProperty',
        params: Params,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...v1Errors([404, 422]) },
      },
    },
    async (request, reply) => {
      await properties.remove(authOf(request).orgId, request.params.property_id as string);
      return reply.code(204).send(null);
    },
  );
}

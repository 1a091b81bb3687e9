import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, IdParam, NoContent, v1Errors } from '../../http/schemas.ts';
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
        description: 'In `order_idx` order, archived ones included.',
        operationId: 'listProperties',
        response: { 200: described('Every custom property, in order.', PropertyList), ...v1Errors() },
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
        description: 'RADIO, DROPDOWN and MULTI_SELECT need at least one option; `currency` is for MONEY only.',
        operationId: 'createProperty',
        body: PropertyInput,
        response: {
          201: described('The property created.', PropertySchema),
          ...v1Errors({
            409: { codes: ['duplicate_key'], description: 'The key is taken: `{code: "duplicate_key", key, id}`.' },
            422: [],
          }),
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
        response: {
          200: described('Every custom property, in the new order.', PropertyList),
          ...v1Errors({ 422: ['unknown_ids'] }),
        },
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
        description: 'Archived properties are read too.',
        operationId: 'getProperty',
        params: Params,
        response: { 200: described('The property.', PropertySchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => properties.get(authOf(request).orgId, request.params.property_id),
  );

  app.patch(
    '/properties/:property_id',
    {
      schema: {
        tags,
        summary: 'Update, archive or unarchive a custom property',
        description: 'Partial; `kind` and `key` cannot change. `archived: true` sets `archived_at`, `false` clears it.',
        operationId: 'updateProperty',
        params: Params,
        body: PropertyPatch,
        response: { 200: described('The property as updated.', PropertySchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => properties.update(authOf(request).orgId, request.params.property_id, request.body),
  );

  app.delete(
    '/properties/:property_id',
    {
      schema: {
        tags,
        summary: 'Delete a custom property and its value on every contact',
        description: 'Removes the definition and the value it holds on every contact.',
        operationId: 'deleteProperty',
        params: Params,
        response: { 204: NoContent('Deleted.'), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      await properties.remove(authOf(request).orgId, request.params.property_id);
      return reply.code(204).send(null);
    },
  );
}

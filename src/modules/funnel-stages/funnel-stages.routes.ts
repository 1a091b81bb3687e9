import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, IdParam, NoContent, v1Errors } from '../../http/schemas.ts';
import {
  DeleteStageQuery,
  FunnelStageInput,
  FunnelStageList,
  FunnelStagePatch,
  FunnelStageReorder,
  FunnelStageSchema,
} from './funnel-stages.schemas.ts';
import type { FunnelStagesService } from './funnel-stages.service.ts';

const tags = ['Funnel stages'];
const Params = IdParam('stage_id');
const duplicateKey = {
  409: { codes: ['duplicate_key'], description: 'The key is taken: `{code: "duplicate_key", key, id}`.' },
};

export function funnelStagesRoutes(parent: FastifyInstance, stages: FunnelStagesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/funnel-stages',
    {
      schema: {
        tags,
        summary: 'List funnel stages in order (not paginated)',
        operationId: 'listFunnelStages',
        response: { 200: described('Every funnel stage, in order.', FunnelStageList), ...v1Errors() },
      },
    },
    async (request) => stages.list(authOf(request).orgId),
  );

  app.post(
    '/funnel-stages',
    {
      schema: {
        tags,
        summary: 'Create a funnel stage',
        description: 'The key is derived from the name when left out. The first stage created is the initial one.',
        operationId: 'createFunnelStage',
        body: FunnelStageInput,
        response: {
          201: described('The stage created.', FunnelStageSchema),
          ...v1Errors({ ...duplicateKey, 422: [] }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await stages.create(authOf(request).orgId, request.body)),
  );

  app.post(
    '/funnel-stages/reorder',
    {
      schema: {
        tags,
        summary: 'Move funnel stages to new positions',
        description:
          'Each named stage moves to the position it asks for; the others keep their relative order. Positions ' +
          'are renumbered 0..n-1. Unknown ids: 422 `{code: "unknown_ids", reason, missing_ids, stages}`.',
        operationId: 'reorderFunnelStages',
        body: FunnelStageReorder,
        response: {
          200: described('Every funnel stage, in the new order.', FunnelStageList),
          ...v1Errors({ 422: ['unknown_ids'] }),
        },
      },
    },
    async (request) => stages.reorder(authOf(request).orgId, request.body),
  );

  app.get(
    '/funnel-stages/:stage_id',
    {
      schema: {
        tags,
        summary: 'Read a funnel stage',
        operationId: 'getFunnelStage',
        params: Params,
        response: { 200: described('The stage.', FunnelStageSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => stages.get(authOf(request).orgId, request.params.stage_id),
  );

  app.patch(
    '/funnel-stages/:stage_id',
    {
      schema: {
        tags,
        summary: 'Update a funnel stage; `is_initial: true` moves the initial flag here',
        operationId: 'updateFunnelStage',
        params: Params,
        body: FunnelStagePatch,
        response: {
          200: described('The stage as updated.', FunnelStageSchema),
          ...v1Errors({ 404: [], ...duplicateKey, 422: [] }),
        },
      },
    },
    async (request) => stages.update(authOf(request).orgId, request.params.stage_id, request.body),
  );

  app.delete(
    '/funnel-stages/:stage_id',
    {
      schema: {
        tags,
        summary: 'Delete a funnel stage',
        description:
          'A stage that holds contacts is a 409 `{code: "stage_in_use", reason, stages, contact_count}` unless ' +
          '`move_to` names the stage that receives them. Deleting the initial stage passes the flag to `move_to`, ' +
          'else to the first remaining stage.',
        operationId: 'deleteFunnelStage',
        params: Params,
        querystring: DeleteStageQuery,
        response: {
          204: NoContent('Deleted.'),
          ...v1Errors({
            404: [],
            409: { codes: ['stage_in_use'], description: 'The stage holds contacts: `{code: "stage_in_use", ...}`.' },
            422: [],
          }),
        },
      },
    },
    async (request, reply) => {
      await stages.remove(authOf(request).orgId, request.params.stage_id, request.query.move_to);
      return reply.code(204).send(null);
    },
  );
}

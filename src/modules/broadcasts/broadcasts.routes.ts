import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import {
  BroadcastListQuery,
  BroadcastPage,
  BroadcastParams,
  BroadcastSchema,
  CancelBody,
  RecipientListQuery,
  RecipientPage,
} from './broadcasts.schemas.ts';
import type { BroadcastsService } from './broadcasts.service.ts';

export function broadcastsRoutes(parent: FastifyInstance, broadcasts: BroadcastsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Broadcasts'];

  app.get(
    '/broadcasts',
    {
      schema: {
        tags,
        summary: 'List broadcasts, newest first',
        description: 'Filter by `status` (counts and status are derived on every read) and by `template_id`.',
        operationId: 'listBroadcasts',
        querystring: BroadcastListQuery,
        response: { 200: described('A page of broadcasts.', BroadcastPage), ...v1Errors({ 422: [] }) },
      },
    },
    async (request) => broadcasts.list(authOf(request).orgId, { ...request.query, limit: request.query.limit ?? 50 }),
  );

  app.get(
    '/broadcasts/:broadcast_id',
    {
      schema: {
        tags,
        summary: 'A broadcast with its counts',
        description: '`sent + failed + pending == requested`; `status` follows from the counts.',
        operationId: 'getBroadcast',
        params: BroadcastParams,
        response: { 200: described('The broadcast.', BroadcastSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => broadcasts.get(authOf(request).orgId, request.params.broadcast_id),
  );

  app.get(
    '/broadcasts/:broadcast_id/recipients',
    {
      schema: {
        tags,
        summary: 'Recipients the worker has reached',
        description:
          'Only recipients already reached are listed: while a broadcast is queuing, or after its tail was cancelled, fewer rows are listed than were requested; the difference is `pending`.',
        operationId: 'listBroadcastRecipients',
        params: BroadcastParams,
        querystring: RecipientListQuery,
        response: {
          200: described('A page of reached recipients, with `total_count`.', RecipientPage),
          ...v1Errors({ 404: [], 422: [] }),
        },
      },
    },
    async (request) =>
      broadcasts.recipients(authOf(request).orgId, request.params.broadcast_id, {
        ...request.query,
        limit: request.query.limit ?? 50,
      }),
  );

  app.post(
    '/broadcasts/:broadcast_id/cancel',
    {
      schema: {
        tags,
        summary: 'Abandon the unsent remainder',
        description:
          'Messages already handed to the platform cannot be recalled. 409 `broadcast_not_cancellable` unless in progress. Takes no body; a JSON body is ignored.',
        operationId: 'cancelBroadcast',
        params: BroadcastParams,
        body: CancelBody,
        response: {
          200: described('The broadcast, now `cancelled`.', BroadcastSchema),
          ...v1Errors({ 404: [], 409: ['broadcast_not_cancellable'], 422: [] }),
        },
      },
    },
    async (request) => broadcasts.cancel(authOf(request).orgId, request.params.broadcast_id),
  );
}

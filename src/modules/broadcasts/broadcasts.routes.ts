import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { authOf } from '../../http/auth.ts';
import { Page } from '../../http/pagination.ts';
import { v1Errors } from '../../http/schemas.ts';
import {
  BroadcastListQuery,
  BroadcastParams,
  BroadcastSchema,
  RecipientListQuery,
  RecipientSchema,
} from './broadcasts.schemas.ts';
import type { BroadcastsService } from './broadcasts.service.ts';

export function broadcastsRoutes(app: FastifyInstance, broadcasts: BroadcastsService): void {
  const tags = ['Broadcasts'];

  app.get(
    '/broadcasts',
    {
      schema: {
        tags,
        summary: 'List broadcasts, newest first',
        operationId: 'listBroadcasts',
        querystring: BroadcastListQuery,
        response: { 200: Page(BroadcastSchema), ...v1Errors([422]) },
      },
    },
    async (request) => {
      const query = request.query as Static<typeof BroadcastListQuery>;
      return broadcasts.list(authOf(request).orgId, { ...query, limit: query.limit ?? 50 });
    },
  );

  app.get(
    '/broadcasts/:broadcast_id',
    {
      schema: {
        tags,
        summary: 'A broadcast with its counts',
        operationId: 'getBroadcast',
        params: BroadcastParams,
        response: { 200: BroadcastSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => broadcasts.get(authOf(request).orgId, (request.params as { broadcast_id: string }).broadcast_id),
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
        response: { 200: Page(RecipientSchema, { totalCount: 'required' }), ...v1Errors([404, 422]) },
      },
    },
    async (request) => {
      const query = request.query as Static<typeof RecipientListQuery>;
      return broadcasts.recipients(authOf(request).orgId, (request.params as { broadcast_id: string }).broadcast_id, {
        ...query,
        limit: query.limit ?? 50,
      });
    },
  );

  app.post(
    '/broadcasts/:broadcast_id/cancel',
    {
      schema: {
        tags,
        summary: 'Abandon the unsent remainder',
        description:
          'Messages already handed to the platform cannot be recalled. 409 `broadcast_not_cancellable` unless in progress.',
        operationId: 'cancelBroadcast',
        params: BroadcastParams,
        response: { 200: BroadcastSchema, ...v1Errors([404, 409, 422]) },
      },
    },
    async (request) =>
      broadcasts.cancel(authOf(request).orgId, (request.params as { broadcast_id: string }).broadcast_id),
  );
}

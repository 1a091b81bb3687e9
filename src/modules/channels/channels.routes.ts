import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
import { listLivePhones } from './channels.repo.ts';
import { PhoneList } from './channels.schemas.ts';

export function channelRoutes(app: FastifyInstance, db: Kysely<DB>): void {
  app.get(
    '/channels/messaging/phones',
    {
      schema: {
        tags: ['Channels'],
        summary: 'List connected messaging numbers',
        description: 'The live numbers of the organization, oldest first; `id` is what a send’s `channel_id` names.',
        operationId: 'listMessagingPhones',
        response: { 200: PhoneList, ...v1Errors() },
      },
    },
    async (request) => ({ items: await listLivePhones(db, authOf(request).orgId) }),
  );
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, v1Errors } from '../../http/schemas.ts';
import { PhoneList } from './channels.schemas.ts';
import type { ChannelsService } from './channels.service.ts';

export function channelRoutes(parent: FastifyInstance, channels: ChannelsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/channels/messaging/phones',
    {
      schema: {
        tags: ['Channels'],
        summary: 'List connected messaging numbers',
        description: 'The live numbers of the organization, oldest first; `id` is what a send’s `channel_id` names.',
        operationId: 'listMessagingPhones',
        response: { 200: described('The live numbers, oldest first.', PhoneList), ...v1Errors() },
      },
    },
    async (request) => channels.livePhones(authOf(request).orgId),
  );
}

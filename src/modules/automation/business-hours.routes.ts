import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
import { BusinessHoursInput, BusinessHoursSchema } from './business-hours.schemas.ts';
import type { BusinessHoursService } from './business-hours.service.ts';

const tags = ['Automation'];

export function businessHoursRoutes(parent: FastifyInstance, hours: BusinessHoursService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/business-hours',
    {
      schema: {
        tags,
        summary: 'Read the business hours and away message',
        description: 'Disabled, with an empty week and no away message, until first saved.',
        operationId: 'getBusinessHours',
        response: { 200: BusinessHoursSchema, ...v1Errors() },
      },
    },
    async (request) => hours.get(authOf(request).orgId),
  );

  app.put(
    '/business-hours',
    {
      schema: {
        tags,
        summary: 'Replace the business hours and away message',
        description:
          'In the organization’s timezone. A `close` not after its `open` is a 422 on ' +
          '`["body","week",i,"close"]`; an unknown `day` or a time not `HH:MM` is a 422 at its place.',
        operationId: 'putBusinessHours',
        body: BusinessHoursInput,
        response: { 200: BusinessHoursSchema, ...v1Errors([422]) },
      },
    },
    async (request) => hours.put(authOf(request).orgId, request.body),
  );
}

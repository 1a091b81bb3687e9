import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { v1Errors } from '../../http/schemas.ts';
import {
  DeliveryListQuery,
  DeliveryParams,
  EndpointParams,
  endpointBodies,
  WebhookDeliveryPage,
  WebhookDeliverySchema,
  WebhookEndpointList,
  WebhookEndpointSchema,
  WebhookEndpointWithSecret,
} from './webhook-endpoints.schemas.ts';
import type { WebhookEndpointsService } from './webhook-endpoints.service.ts';

const tags = ['Webhook endpoints'];
const urlRules =
  'A `url` that is not `https://` to a public address (unless its host is in `WEBHOOK_ALLOW_HOSTS`) is a 422 on ' +
  '`["body","url"]`; an unknown event type is a 422 on `["body","events",i]`.';
const disabled = { codes: ['webhook_endpoint_disabled'], description: 'The endpoint is disabled.' };

export function webhookEndpointsRoutes(parent: FastifyInstance, endpoints: WebhookEndpointsService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { WebhookEndpointInput, WebhookEndpointPatch } = endpointBodies(endpoints.eventTypes);

  app.get(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        summary: 'List webhook endpoints (not paginated)',
        operationId: 'listWebhookEndpoints',
        response: { 200: WebhookEndpointList, ...v1Errors() },
      },
    },
    async (request) => endpoints.list(authOf(request).orgId),
  );

  app.post(
    '/webhook-endpoints',
    {
      schema: {
        tags,
        summary: 'Create a webhook endpoint',
        description: `The answer carries the signing \`secret\`, shown only here and in a rotation's answer. ${urlRules} At most 20 endpoints per organization: the 21st is a 422 \`{code: "webhook_endpoint_limit"}\`.`,
        operationId: 'createWebhookEndpoint',
        body: WebhookEndpointInput,
        response: { 201: WebhookEndpointWithSecret, ...v1Errors({ 422: ['webhook_endpoint_limit'] }) },
      },
    },
    async (request, reply) => reply.code(201).send(await endpoints.create(authOf(request).orgId, request.body)),
  );

  app.get(
    '/webhook-endpoints/:endpoint_id',
    {
      schema: {
        tags,
        summary: 'Read a webhook endpoint',
        operationId: 'getWebhookEndpoint',
        params: EndpointParams,
        response: { 200: WebhookEndpointSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => endpoints.get(authOf(request).orgId, request.params.endpoint_id),
  );

  app.patch(
    '/webhook-endpoints/:endpoint_id',
    {
      schema: {
        tags,
        summary: 'Update a webhook endpoint',
        description: `Any of \`url\`, \`events\`, \`description\`, \`enabled\`. ${urlRules}`,
        operationId: 'updateWebhookEndpoint',
        params: EndpointParams,
        body: WebhookEndpointPatch,
        response: { 200: WebhookEndpointSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => endpoints.update(authOf(request).orgId, request.params.endpoint_id, request.body),
  );

  app.delete(
    '/webhook-endpoints/:endpoint_id',
    {
      schema: {
        tags,
        summary: 'Delete a webhook endpoint and its deliveries log',
        operationId: 'deleteWebhookEndpoint',
        params: EndpointParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...v1Errors([404, 422]) },
      },
    },
    async (request, reply) => {
      await endpoints.remove(authOf(request).orgId, request.params.endpoint_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhook-endpoints/:endpoint_id/rotate-secret',
    {
      schema: {
        tags,
        summary: 'Replace the signing secret',
        description:
          'Answers the endpoint with its new `secret`. For 24 hours deliveries carry a second signature made with ' +
          'the previous secret, so receivers can switch without losing events.',
        operationId: 'rotateWebhookEndpointSecret',
        params: EndpointParams,
        response: { 200: WebhookEndpointWithSecret, ...v1Errors([404, 422]) },
      },
    },
    async (request) => endpoints.rotateSecret(authOf(request).orgId, request.params.endpoint_id),
  );

  app.post(
    '/webhook-endpoints/:endpoint_id/test',
    {
      schema: {
        tags,
        summary: 'Send a `ping` event to this endpoint alone',
        description: 'Answers 202 with the queued delivery, which the deliveries log then follows.',
        operationId: 'testWebhookEndpoint',
        params: EndpointParams,
        response: { 202: WebhookDeliverySchema, ...v1Errors({ 404: [], 409: disabled, 422: [] }) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await endpoints.test(authOf(request).orgId, request.params.endpoint_id)),
  );

  app.get(
    '/webhook-endpoints/:endpoint_id/deliveries',
    {
      schema: {
        tags,
        summary: 'The endpoint’s deliveries log, newest event first',
        operationId: 'listWebhookDeliveries',
        params: EndpointParams,
        querystring: DeliveryListQuery,
        response: { 200: WebhookDeliveryPage, ...v1Errors([404, 422]) },
      },
    },
    async (request) =>
      endpoints.deliveries(authOf(request).orgId, request.params.endpoint_id, {
        ...request.query,
        limit: request.query.limit ?? 50,
      }),
  );

  app.post(
    '/webhook-endpoints/:endpoint_id/deliveries/:delivery_id/retry',
    {
      schema: {
        tags,
        summary: 'Attempt a delivery again now',
        description:
          'One more attempt now: a `pending` delivery keeps its retry schedule, a `failed` or `succeeded` one gets ' +
          'exactly one more attempt. Answers 202 with the delivery.',
        operationId: 'retryWebhookDelivery',
        params: DeliveryParams,
        response: { 202: WebhookDeliverySchema, ...v1Errors({ 404: [], 409: disabled, 422: [] }) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await endpoints.retry(authOf(request).orgId, request.params.endpoint_id, request.params.delivery_id)),
  );
}

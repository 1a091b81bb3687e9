// decisions §19: `/v1/canned-responses` (scopes conversations:read / conversations:write). In the console, agents
// read them (to insert one) and admins manage them (`adminOnly` on the changes).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, NoContent, v1Errors } from '../../http/schemas.ts';
import {
  CannedResponseIdParams,
  CannedResponseInput,
  CannedResponseList,
  CannedResponsePatch,
  CannedResponseQuery,
  CannedResponseSchema,
} from './canned-responses.schemas.ts';
import type { CannedResponsesService } from './canned-responses.service.ts';

const tags = ['Conversations'];
const config = { adminOnly: true };
const duplicate = {
  409: { codes: ['duplicate'], description: 'The short code is taken: `{code: "duplicate", field: "short_code"}`.' },
};

export function cannedResponsesRoutes(parent: FastifyInstance, canned: CannedResponsesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/canned-responses',
    {
      schema: {
        tags,
        summary: 'List canned responses',
        description:
          'decisions §19: every canned response by short code, whole (at most 1,000); `q` keeps those whose short ' +
          'code starts with it or whose text holds it, ignoring case.',
        operationId: 'listCannedResponses',
        querystring: CannedResponseQuery,
        response: { 200: described('The canned responses.', CannedResponseList), ...v1Errors({ 422: [] }) },
      },
    },
    async (request) => canned.list(authOf(request).orgId, request.query.q),
  );

  app.post(
    '/canned-responses',
    {
      config,
      schema: {
        tags,
        summary: 'Create a canned response',
        description:
          'decisions §19: `short_code` (`^[a-z0-9_-]{1,30}$`, unique) and `text` (1–4,096). The 1,001st is a 422 ' +
          '`{code: "canned_response_limit"}`.',
        operationId: 'createCannedResponse',
        body: CannedResponseInput,
        response: {
          201: described('The canned response.', CannedResponseSchema),
          ...v1Errors({
            ...duplicate,
            422: { codes: ['canned_response_limit'], description: 'Invalid input, or 1,000 canned responses.' },
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await canned.create(authOf(request).orgId, request.body)),
  );

  app.get(
    '/canned-responses/:canned_response_id',
    {
      schema: {
        tags,
        summary: 'Read a canned response',
        description: 'decisions §19: one canned response.',
        operationId: 'getCannedResponse',
        params: CannedResponseIdParams,
        response: { 200: described('The canned response.', CannedResponseSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => canned.get(authOf(request).orgId, request.params.canned_response_id),
  );

  app.patch(
    '/canned-responses/:canned_response_id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a canned response',
        description: 'decisions §19: its short code or text.',
        operationId: 'updateCannedResponse',
        params: CannedResponseIdParams,
        body: CannedResponsePatch,
        response: {
          200: described('The canned response.', CannedResponseSchema),
          ...v1Errors({ 404: [], ...duplicate, 422: [] }),
        },
      },
    },
    async (request) => canned.update(authOf(request).orgId, request.params.canned_response_id, request.body),
  );

  app.delete(
    '/canned-responses/:canned_response_id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a canned response',
        description: 'decisions §19.',
        operationId: 'deleteCannedResponse',
        params: CannedResponseIdParams,
        response: { 204: NoContent('Deleted.'), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      await canned.remove(authOf(request).orgId, request.params.canned_response_id);
      return reply.code(204).send(null);
    },
  );
}

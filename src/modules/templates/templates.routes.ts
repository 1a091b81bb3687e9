import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { described, NoContent, v1Errors } from '../../http/schemas.ts';
import { SendRequirements } from './send-requirements.schemas.ts';
import {
  TemplateIdParams,
  TemplateInput,
  TemplateListQuery,
  TemplatePage,
  TemplateSchema,
} from './templates.schemas.ts';
import type { TemplatesService } from './templates.service.ts';

const tags = ['Templates'];

export function templateRoutes(parent: FastifyInstance, templates: TemplatesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/templates',
    {
      schema: {
        tags,
        summary: 'List message templates',
        description: 'Newest first. Deleted templates are not listed.',
        operationId: 'listTemplates',
        querystring: TemplateListQuery,
        response: { 200: described('A page of templates, newest first.', TemplatePage), ...v1Errors({ 422: [] }) },
      },
    },
    async (request) => templates.list(authOf(request).orgId, request.query),
  );

  app.post(
    '/templates',
    {
      schema: {
        tags,
        summary: 'Create a template and submit it for approval',
        description:
          'Checks the components, then submits the template to the messaging platform in the same call and answers ' +
          '201 with status `PENDING`. A refusal by the platform is a 422 `{code: "platform_rejected", reason}` and ' +
          'stores nothing; a name already used by an undeleted template of the account in that language is a 409 ' +
          '`{code: "duplicate_template"}`.',
        operationId: 'createTemplate',
        body: TemplateInput,
        response: {
          201: described('The template, submitted: status `PENDING`.', TemplateSchema),
          ...v1Errors({
            409: { codes: ['duplicate_template'], description: 'The name is taken in this language.' },
            422: {
              codes: ['platform_rejected'],
              description:
                'Validation failed, or `{code: "platform_rejected", reason}` when the platform refused the template.',
            },
            503: {
              codes: ['platform_unavailable'],
              description: 'The platform did not answer; nothing was stored, try again.',
            },
          }),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await templates.create(authOf(request).orgId, request.body)),
  );

  app.get(
    '/templates/:template_id',
    {
      schema: {
        tags,
        summary: 'Read a template',
        description: 'Its status follows the platform’s review (approved, rejected with a reason, paused, …).',
        operationId: 'getTemplate',
        params: TemplateIdParams,
        response: { 200: described('The template.', TemplateSchema), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request) => templates.get(authOf(request).orgId, request.params.template_id),
  );

  app.delete(
    '/templates/:template_id',
    {
      schema: {
        tags,
        summary: 'Delete a template',
        description:
          'Soft-deletes the template and frees its name at once; the platform delete is best effort. The platform ' +
          'keeps the name for a while, so an immediate re-create can be refused with `platform_rejected`.',
        operationId: 'deleteTemplate',
        params: TemplateIdParams,
        response: { 204: NoContent('Deleted.'), ...v1Errors({ 404: [], 422: [] }) },
      },
    },
    async (request, reply) => {
      await templates.remove(authOf(request).orgId, request.params.template_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/templates/:template_id/send-requirements',
    {
      schema: {
        tags,
        summary: 'What a template needs before it can be sent',
        description:
          'Variable tokens (`body.1`, `header.first_name`, `card.0.body.1`), which of them resolve from the contact, ' +
          'dynamic URL buttons, media surfaces with type and size limit, catalog slots, coupon code and ' +
          'limited-time-offer needs, and `never_sendable_reason` when the template can never be sent.',
        operationId: 'getTemplateSendRequirements',
        params: TemplateIdParams,
        response: {
          200: described('What the template needs.', SendRequirements),
          ...v1Errors({ 404: [], 422: [] }),
        },
      },
    },
    async (request) => templates.sendRequirements(authOf(request).orgId, request.params.template_id),
  );
}

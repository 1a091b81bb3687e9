import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../http/auth.ts';
import { NoContent, v1Errors } from '../../http/schemas.ts';
import {
  AutomationRuleInput,
  AutomationRuleList,
  AutomationRulePatch,
  AutomationRuleRunPage,
  AutomationRuleSchema,
  RuleParams,
  RunListQuery,
} from './automation-rules.schemas.ts';
import type { AutomationRulesService } from './automation-rules.service.ts';

const tags = ['Automation'];
const rules =
  'An unknown field, operator or action, a user or team not of the organization, or a pattern that does not ' +
  'compile is a 422 at its place (`["body","conditions",i,"operator"]`, `["body","actions",i,"team_id"]`); at ' +
  'most 20 conditions and 10 actions.';

export function automationRulesRoutes(parent: FastifyInstance, service: AutomationRulesService): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/automation-rules',
    {
      schema: {
        tags,
        summary: 'List automation rules (not paginated), in the order they run',
        operationId: 'listAutomationRules',
        response: { 200: AutomationRuleList, ...v1Errors() },
      },
    },
    async (request) => service.list(authOf(request).orgId),
  );

  app.post(
    '/automation-rules',
    {
      schema: {
        tags,
        summary: 'Create an automation rule',
        description: `${rules} At most 100 rules per organization: the 101st is a 422 \`{code: "automation_rule_limit"}\`.`,
        operationId: 'createAutomationRule',
        body: AutomationRuleInput,
        response: { 201: AutomationRuleSchema, ...v1Errors({ 422: ['automation_rule_limit'] }) },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(authOf(request).orgId, request.body)),
  );

  app.get(
    '/automation-rules/:rule_id',
    {
      schema: {
        tags,
        summary: 'Read an automation rule',
        operationId: 'getAutomationRule',
        params: RuleParams,
        response: { 200: AutomationRuleSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => service.get(authOf(request).orgId, request.params.rule_id),
  );

  app.patch(
    '/automation-rules/:rule_id',
    {
      schema: {
        tags,
        summary: 'Update an automation rule',
        description: `Any of its fields; \`conditions\` and \`actions\` replace the lists. ${rules}`,
        operationId: 'updateAutomationRule',
        params: RuleParams,
        body: AutomationRulePatch,
        response: { 200: AutomationRuleSchema, ...v1Errors([404, 422]) },
      },
    },
    async (request) => service.update(authOf(request).orgId, request.params.rule_id, request.body),
  );

  app.delete(
    '/automation-rules/:rule_id',
    {
      schema: {
        tags,
        summary: 'Delete an automation rule and its runs',
        operationId: 'deleteAutomationRule',
        params: RuleParams,
        response: { 204: NoContent('Deleted.'), ...v1Errors([404, 422]) },
      },
    },
    async (request, reply) => {
      await service.remove(authOf(request).orgId, request.params.rule_id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/automation-rules/:rule_id/runs',
    {
      schema: {
        tags,
        summary: 'A rule’s runs, newest first (kept 30 days)',
        operationId: 'listAutomationRuleRuns',
        params: RuleParams,
        querystring: RunListQuery,
        response: { 200: AutomationRuleRunPage, ...v1Errors([404, 422]) },
      },
    },
    async (request) => service.runs(authOf(request).orgId, request.params.rule_id, request.query),
  );
}

// decisions §20's routes, registered together (business hours, rules, the assistant).
import type { FastifyInstance } from 'fastify';
import { aiAssistantRoutes } from './assistant/ai-assistant.routes.ts';
import type { AutomationServices } from './automation.services.ts';
import { automationRulesRoutes } from './automation-rules.routes.ts';
import { businessHoursRoutes } from './business-hours.routes.ts';

export function automationRoutes(scope: FastifyInstance, services: AutomationServices): void {
  businessHoursRoutes(scope, services.businessHours);
  automationRulesRoutes(scope, services.rules);
  aiAssistantRoutes(scope, services.assistant);
}

// decisions §18: what a key may do. ONE table from operation to scope; every /v1 route takes its scope from it when
// it is registered (`scopeFromTable`, an onRoute hook), and a route the table does not name stops the server at
// startup, so a new route cannot forget its scope. The console (decisions §17) reads the same table for its roles.
import type { RouteOptions } from 'fastify';
import { ApiError } from './api-error.ts';

export const SCOPES = [
  'account:read',
  'contacts:read',
  'contacts:write',
  'properties:read',
  'properties:write',
  'conversations:read',
  'conversations:write',
  'templates:read',
  'templates:write',
  'broadcasts:read',
  'broadcasts:write',
  'webhooks:read',
  'webhooks:write',
  'teams:read',
  'teams:write',
  // decisions §20: business hours, automation rules and the AI assistant's settings.
  'automation:read',
  'automation:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Every operation; a key has `["*"]` or a non-empty list of SCOPES. */
export const ALL_SCOPES = '*';

/**
 * The one table: the scope each /v1 operation (by its OpenAPI `operationId`) needs. properties:* covers
 * properties, funnel stages and sub-origins; broadcasts:write covers sends, broadcasts and retries; the account
 * and its connected numbers need account:read.
 */
export const OPERATION_SCOPES = {
  getMe: 'account:read',
  listMessagingPhones: 'account:read',
  listUsers: 'account:read',

  listContacts: 'contacts:read',
  getContact: 'contacts:read',
  createContact: 'contacts:write',
  batchUpsertContacts: 'contacts:write',
  updateContact: 'contacts:write',
  deleteContact: 'contacts:write',

  listProperties: 'properties:read',
  getProperty: 'properties:read',
  createProperty: 'properties:write',
  reorderProperties: 'properties:write',
  updateProperty: 'properties:write',
  deleteProperty: 'properties:write',
  listFunnelStages: 'properties:read',
  getFunnelStage: 'properties:read',
  createFunnelStage: 'properties:write',
  reorderFunnelStages: 'properties:write',
  updateFunnelStage: 'properties:write',
  deleteFunnelStage: 'properties:write',
  listSubOrigins: 'properties:read',
  createSubOrigin: 'properties:write',

  listConversations: 'conversations:read',
  getConversation: 'conversations:read',
  listConversationMessages: 'conversations:read',
  markConversationRead: 'conversations:write',
  updateConversation: 'conversations:write',
  createConversationNote: 'conversations:write',
  listCannedResponses: 'conversations:read',
  getCannedResponse: 'conversations:read',
  createCannedResponse: 'conversations:write',
  updateCannedResponse: 'conversations:write',
  deleteCannedResponse: 'conversations:write',
  downloadConversationMessageMedia: 'conversations:read',
  replyToConversation: 'conversations:write',
  uploadFile: 'conversations:write',
  getFile: 'conversations:read',

  listTemplates: 'templates:read',
  getTemplate: 'templates:read',
  getTemplateSendRequirements: 'templates:read',
  createTemplate: 'templates:write',
  deleteTemplate: 'templates:write',

  listBroadcasts: 'broadcasts:read',
  getBroadcast: 'broadcasts:read',
  listBroadcastRecipients: 'broadcasts:read',
  sendTemplate: 'broadcasts:write',
  retryBroadcast: 'broadcasts:write',
  cancelBroadcast: 'broadcasts:write',
  createBroadcast: 'broadcasts:write',
  pauseBroadcast: 'broadcasts:write',
  resumeBroadcast: 'broadcasts:write',

  listWebhookEndpoints: 'webhooks:read',
  getWebhookEndpoint: 'webhooks:read',
  listWebhookDeliveries: 'webhooks:read',
  createWebhookEndpoint: 'webhooks:write',
  updateWebhookEndpoint: 'webhooks:write',
  deleteWebhookEndpoint: 'webhooks:write',
  rotateWebhookEndpointSecret: 'webhooks:write',
  testWebhookEndpoint: 'webhooks:write',
  retryWebhookDelivery: 'webhooks:write',

  listTeams: 'teams:read',
  getTeam: 'teams:read',
  createTeam: 'teams:write',
  updateTeam: 'teams:write',
  deleteTeam: 'teams:write',
  getBusinessHours: 'automation:read',
  putBusinessHours: 'automation:write',
  listAutomationRules: 'automation:read',
  getAutomationRule: 'automation:read',
  listAutomationRuleRuns: 'automation:read',
  createAutomationRule: 'automation:write',
  updateAutomationRule: 'automation:write',
  deleteAutomationRule: 'automation:write',
  getAiAssistant: 'automation:read',
  putAiAssistant: 'automation:write',
  // decisions §20: the test call needs automation:write; drafts conversations:write.
  testAiAssistant: 'automation:write',
  draftConversationReply: 'conversations:write',
} as const satisfies Record<string, Scope>;
export type OperationId = keyof typeof OPERATION_SCOPES;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope this route needs, set from OPERATION_SCOPES when the route is registered. */
    scope?: Scope;
  }
}

/** The scope an operation needs, or undefined for an operation the table does not name. */
export function scopeOf(operationId: string | undefined): Scope | undefined {
  return operationId !== undefined && Object.hasOwn(OPERATION_SCOPES, operationId)
    ? OPERATION_SCOPES[operationId as OperationId]
    : undefined;
}

/** decisions §18: `*` grants everything; a `:write` scope includes its `:read`. */
export function grants(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(ALL_SCOPES) || granted.includes(required)) return true;
  return required.endsWith(':read') && granted.includes(required.replace(/:read$/, ':write'));
}

/**
 * onRoute hook of a scope that serves /v1 operations (the API, and the console's mount of the same routes): gives
 * each route its scope from the table, and refuses to start with a route the table does not name. Routes marked
 * `public` (the OpenAPI document) need no key and no scope.
 */
export function scopeFromTable(route: RouteOptions): void {
  const config = (route.config ?? {}) as { public?: boolean; scope?: Scope };
  if (config.public) return;
  const operationId = (route.schema as { operationId?: string } | undefined)?.operationId;
  const scope = scopeOf(operationId);
  if (!scope) {
    const methods = [route.method].flat().join(',');
    throw new Error(
      `${methods} ${route.url} (operationId ${operationId ?? 'missing'}) has no scope: add it to OPERATION_SCOPES in src/http/scopes.ts (decisions §18)`,
    );
  }
  route.config = { ...config, scope } as typeof route.config;
}

/** 403 when a key's scopes do not grant the route's scope (after the 401 checks, before the plan gates). */
export function checkScope(granted: readonly string[], required: Scope | undefined): void {
  if (required !== undefined && !grants(granted, required)) {
    throw new ApiError(403, { code: 'insufficient_scope', required });
  }
}

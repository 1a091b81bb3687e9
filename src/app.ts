// buildApp(wiring): every plugin and route registered explicitly, in one readable place. The parts it serves are
// built by the one wiring (wiring.ts); nothing here opens, queries or builds a service.
import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { isPoolBusy } from './db/database.ts';
import { createV1Guard } from './http/auth.ts';
import { registerBodyParsers } from './http/body-parser.ts';
import { registerConsole } from './http/console.ts';
import { CONSOLE_PREFIX, createConsoleGuard } from './http/console-guard.ts';
import { clientErrorHandler, frameworkErrorHandler, notFoundHandler, registerErrorHandling } from './http/errors.ts';
import { registerHealthRoutes } from './http/health.ts';
import { lazySerializerFactory } from './http/lazy-compile.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerQueryArrays } from './http/query-arrays.ts';
import { requestId } from './http/request-id.ts';
import { authorizeRole, eventVisible } from './http/roles.ts';
import { scopeFromTable } from './http/scopes.ts';
import { registerValidation } from './http/validation.ts';
import { inboundRoutes } from './messaging/inbound.routes.ts';
import { sandboxRoutes } from './messaging/sandbox/sandbox.routes.ts';
import { accountRoutes } from './modules/account/account.routes.ts';
import { automationRoutes } from './modules/automation/automation.routes.ts';
import { audienceRoutes } from './modules/broadcasts/audience.routes.ts';
import { broadcastsRoutes } from './modules/broadcasts/broadcasts.routes.ts';
import { sendRoutes } from './modules/broadcasts/send.routes.ts';
import { cannedResponsesRoutes } from './modules/canned-responses/canned-responses.routes.ts';
import { channelRoutes } from './modules/channels/channels.routes.ts';
import { contactsRoutes } from './modules/contacts/contacts.routes.ts';
import { conversationRoutes } from './modules/conversations/conversations.routes.ts';
import { conversationMediaRoutes } from './modules/conversations/media.routes.ts';
import { noteRoutes } from './modules/conversations/notes.routes.ts';
import { replyRoutes } from './modules/conversations/replies.routes.ts';
import { consoleStreamRoutes } from './modules/events/console-stream.routes.ts';
import { webhooksDocument } from './modules/events/events.openapi.ts';
import { filesRoutes } from './modules/files/files.routes.ts';
import { funnelStagesRoutes } from './modules/funnel-stages/funnel-stages.routes.ts';
import { consoleAdminRoutes } from './modules/operator/console-admin.routes.ts';
import { operatorRoutes } from './modules/operator/operator.routes.ts';
import { propertiesRoutes } from './modules/properties/properties.routes.ts';
import { sessionRoutes } from './modules/sessions/sessions.routes.ts';
import { subOriginsRoutes } from './modules/sub-origins/sub-origins.routes.ts';
import { teamsRoutes } from './modules/teams/teams.routes.ts';
import { templateRoutes } from './modules/templates/templates.routes.ts';
import { peopleRoutes, usersRoutes } from './modules/users/users.routes.ts';
import { webhookEndpointsRoutes } from './modules/webhook-endpoints/webhook-endpoints.routes.ts';
import type { Wiring } from './wiring.ts';

export const API_VERSION = '1.0.0';
export const BODY_LIMIT = 1024 * 1024;

export async function buildApp(wiring: Wiring): Promise<FastifyInstance> {
  const { services, metrics, database } = wiring;
  const app = Fastify({
    loggerInstance: wiring.log,
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
    // Errors raised before a route or by the HTTP parser answer in the contract's shape too (src/http/errors.ts).
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    // Serializers built at each route's first response, not at start (src/http/lazy-compile.ts, decisions D162).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() as never } },
  });

  registerValidation(app);
  registerBodyParsers(app);
  registerQueryArrays(app);
  registerErrorHandling(app, { unavailable: (error) => database.health.report(error), busy: isPoolBusy });
  // Callback hooks (not async) on every request: no promise per hook on the read path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerMetrics(app, metrics, { token: wiring.metricsToken });
  await registerOpenApi(app, { publicBaseUrl: wiring.publicBaseUrl, webhooks: webhooksDocument(wiring.eventCatalog) });

  registerHealthRoutes(app, { database, checks: wiring.readinessChecks });
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const healthy = await database.ping();
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'unavailable', database: database.kind });
  });

  if (wiring.messaging.sandbox) {
    const sandbox = wiring.messaging.sandbox;
    app.addHook('onClose', async () => sandbox.close());
  }
  // Open console streams end, and the process stops listening, before the database closes.
  app.addHook('onClose', async () => services.consoleEvents.close());
  await app.register(async (scope) =>
    inboundRoutes(scope, { processor: wiring.inbound, verifyToken: wiring.webhookVerifyToken }),
  );

  const guard = createV1Guard({
    db: wiring.db,
    clock: wiring.clock,
    rateLimitStore: wiring.rateLimitStore,
    metrics,
    cacheKeys: wiring.cacheKeys,
    keyUsage: wiring.keyUsage,
  });
  await app.register(
    async (v1) => {
      // decisions §18: each route takes its scope from the one table; a route it does not name fails here.
      v1.addHook('onRoute', scopeFromTable);
      v1.addHook('onRequest', guard.guard);
      v1.addHook('onSend', guard.settle);
      bulkheadHooks(v1, wiring.bulkhead);
      v1.setNotFoundHandler(notFoundHandler(app));
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      v1Operations(v1, services);
    },
    { prefix: '/v1' },
  );

  await registerConsole(app);
  // The console's API (decisions §17): the same /v1 operations under /app/api with the session guard (documented
  // once, under /v1), and what only the console needs.
  const consoleGuard = createConsoleGuard({
    sessions: services.sessions,
    budget: guard.budget,
    clock: wiring.clock,
    publicUrl: wiring.publicUrl,
    authorize: authorizeRole,
  });
  await app.register(
    async (consoleApi) => {
      await consoleApi.register(cookie);
      consoleApi.addHook('onRequest', consoleGuard.guard);
      consoleApi.setNotFoundHandler(notFoundHandler(app));
      // Unknown paths under the prefix are a JSON 404 here, never the console app's page fallback at /app.
      consoleApi.all('/*', { schema: { hide: true } }, async (_request, reply) =>
        reply.code(404).send({ detail: 'not_found' }),
      );
      sessionRoutes(consoleApi, { sessions: services.sessions, publicUrl: wiring.publicUrl });
      usersRoutes(consoleApi, services.users);
      consoleAdminRoutes(consoleApi, services.operator);
      consoleStreamRoutes(consoleApi, {
        hub: services.consoleEvents,
        sessions: services.sessions,
        visible: eventVisible,
        sessionCheckMs: wiring.consoleSessionCheckMs,
      });
      await consoleApi.register(
        async (mounted) => {
          mounted.addHook('onRoute', scopeFromTable);
          bulkheadHooks(mounted, wiring.bulkhead);
          mounted.addHook('onRoute', (route) => {
            route.schema = { ...route.schema, hide: true };
          });
          v1Operations(mounted, services);
        },
        { prefix: '/v1' },
      );
    },
    { prefix: CONSOLE_PREFIX },
  );

  const adminToken = wiring.adminToken;
  if (adminToken) {
    const sandbox = services.sandbox;
    await app.register(
      async (admin) => {
        operatorRoutes(admin, {
          adminToken,
          operator: services.operator,
          users: services.users,
          backup: database.backup,
        });
        if (sandbox) sandboxRoutes(admin, sandbox);
      },
      { prefix: '/admin/v1' },
    );
  }

  await app.ready();
  return app;
}

/** D132: a place in the organization's bulkhead from before the handler until its answer is ready. */
function bulkheadHooks(scope: FastifyInstance, bulkhead: Wiring['bulkhead']): void {
  scope.addHook('preHandler', bulkhead.hooks.preHandler);
  scope.addHook('onSend', bulkhead.hooks.onSend);
  scope.addHook('onResponse', bulkhead.hooks.onResponse);
}

/** The /v1 operations: registered once under /v1 (API keys) and once under /app/api/v1 (console sessions). */
function v1Operations(scope: FastifyInstance, services: Wiring['services']): void {
  accountRoutes(scope);
  templateRoutes(scope, services.templates);
  channelRoutes(scope, services.channels);
  conversationRoutes(scope, services.conversations);
  conversationMediaRoutes(scope, services.conversationMedia);
  replyRoutes(scope, services.replies);
  filesRoutes(scope, services.files);
  noteRoutes(scope, services.conversations);
  sendRoutes(scope, services.send, services.retry);
  broadcastsRoutes(scope, services.broadcasts);
  audienceRoutes(scope, services.audience, services.broadcasts);
  contactsRoutes(scope, services.contacts);
  propertiesRoutes(scope, services.properties);
  funnelStagesRoutes(scope, services.funnelStages);
  subOriginsRoutes(scope, services.subOrigins);
  webhookEndpointsRoutes(scope, services.webhookEndpoints);
  peopleRoutes(scope, services.users);
  teamsRoutes(scope, services.teams);
  cannedResponsesRoutes(scope, services.cannedResponses);
  automationRoutes(scope, services.automation);
}

// buildApp(wiring): every plugin and route registered explicitly, in one readable place. The parts it serves are
// built by the one wiring (wiring.ts); nothing here opens, queries or builds a service.
import Fastify, { type FastifyInstance } from 'fastify';
import { createV1Guard } from './http/auth.ts';
import { registerBodyParsers } from './http/body-parser.ts';
import { clientErrorHandler, frameworkErrorHandler, notFoundHandler, registerErrorHandling } from './http/errors.ts';
import { registerHealthRoutes } from './http/health.ts';
import { registerMetrics } from './http/metrics.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerQueryArrays } from './http/query-arrays.ts';
import { requestId } from './http/request-id.ts';
import { registerValidation } from './http/validation.ts';
import { sandboxRoutes } from './messaging/sandbox/sandbox.routes.ts';
import { webhookRoutes } from './messaging/webhooks.routes.ts';
import { accountRoutes } from './modules/account/account.routes.ts';
import { broadcastsRoutes } from './modules/broadcasts/broadcasts.routes.ts';
import { sendRoutes } from './modules/broadcasts/send.routes.ts';
import { channelRoutes } from './modules/channels/channels.routes.ts';
import { contactsRoutes } from './modules/contacts/contacts.routes.ts';
import { conversationRoutes } from './modules/conversations/conversations.routes.ts';
import { webhooksDocument } from './modules/events/events.openapi.ts';
import { funnelStagesRoutes } from './modules/funnel-stages/funnel-stages.routes.ts';
import { operatorRoutes } from './modules/operator/operator.routes.ts';
import { propertiesRoutes } from './modules/properties/properties.routes.ts';
import { subOriginsRoutes } from './modules/sub-origins/sub-origins.routes.ts';
import { templateRoutes } from './modules/templates/templates.routes.ts';
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
  });

  registerValidation(app);
  registerBodyParsers(app);
  registerQueryArrays(app);
  registerErrorHandling(app, { unavailable: (error) => database.health.report(error) });
  // Callback hooks (not async) on every request: no promise per hook on the read path (issue 9).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerMetrics(app, metrics, { token: wiring.metricsToken });
  await registerOpenApi(app, { publicBaseUrl: wiring.publicBaseUrl, webhooks: webhooksDocument() });

  registerHealthRoutes(app, { database, checks: wiring.readinessChecks });
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const healthy = await database.ping();
    return reply.code(healthy ? 200 : 503).send({ status: healthy ? 'ok' : 'unavailable', database: database.kind });
  });

  if (wiring.messaging.sandbox) {
    const sandbox = wiring.messaging.sandbox;
    app.addHook('onClose', async () => sandbox.close());
  }
  await app.register(async (scope) =>
    webhookRoutes(scope, { processor: wiring.webhooks, verifyToken: wiring.webhookVerifyToken }),
  );

  const guard = createV1Guard({
    db: wiring.db,
    clock: wiring.clock,
    rateLimitStore: wiring.rateLimitStore,
    metrics,
    cacheKeys: wiring.cacheKeys,
  });
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', guard.guard);
      v1.addHook('onSend', guard.settle);
      v1.setNotFoundHandler(notFoundHandler(app));
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      accountRoutes(v1);
      templateRoutes(v1, services.templates);
      channelRoutes(v1, services.channels);
      conversationRoutes(v1, services.conversations);
      sendRoutes(v1, services.send);
      broadcastsRoutes(v1, services.broadcasts);
      contactsRoutes(v1, services.contacts);
      propertiesRoutes(v1, services.properties);
      funnelStagesRoutes(v1, services.funnelStages);
      subOriginsRoutes(v1, services.subOrigins);
      webhookEndpointsRoutes(v1, services.webhookEndpoints);
    },
    { prefix: '/v1' },
  );

  const adminToken = wiring.adminToken;
  if (adminToken) {
    const sandbox = services.sandbox;
    await app.register(
      async (admin) => {
        operatorRoutes(admin, { adminToken, operator: services.operator });
        if (sandbox) sandboxRoutes(admin, sandbox);
      },
      { prefix: '/admin/v1' },
    );
  }

  await app.ready();
  return app;
}

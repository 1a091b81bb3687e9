// buildApp(deps): every plugin and route registered explicitly, in one readable place.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { sql } from 'kysely';
import type { Database } from './db/database.ts';
import { createV1Guard } from './http/auth.ts';
import { registerBodyParsers } from './http/body-parser.ts';
import { notFoundHandler, registerErrorHandling } from './http/errors.ts';
import { createMetrics, type Metrics, registerMetrics } from './http/metrics.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerQueryArrays } from './http/query-arrays.ts';
import type { RateLimitStore } from './http/rate-limit.ts';
import { requestId } from './http/request-id.ts';
import { registerValidation } from './http/validation.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { accountRoutes } from './modules/account/account.routes.ts';
import { contactsRoutes } from './modules/contacts/contacts.routes.ts';
import { createContactsService } from './modules/contacts/contacts.service.ts';
import { funnelStagesRoutes } from './modules/funnel-stages/funnel-stages.routes.ts';
import { createFunnelStagesService } from './modules/funnel-stages/funnel-stages.service.ts';
import { operatorRoutes } from './modules/operator/operator.routes.ts';
import { createOperatorService } from './modules/operator/operator.service.ts';
import { propertiesRoutes } from './modules/properties/properties.routes.ts';
import { createPropertiesService } from './modules/properties/properties.service.ts';
import { subOriginsRoutes } from './modules/sub-origins/sub-origins.routes.ts';
import { createSubOriginsService } from './modules/sub-origins/sub-origins.service.ts';

export const API_VERSION = '1.0.0';
export const BODY_LIMIT = 1024 * 1024;

export interface AppDeps {
  database: Database;
  rateLimitStore: RateLimitStore;
  platform: 'sandbox' | 'cloud';
  clock?: Clock;
  adminToken?: string | undefined;
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyBaseLogger;
  /** Process-level metrics (CPU, memory, event loop); off in tests where many apps share a process. */
  processMetrics?: boolean;
}

export interface App {
  app: FastifyInstance;
  metrics: Metrics;
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? systemClock;
  const { db } = deps.database;
  const app = Fastify({
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? false }),
    genReqId: requestId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const metrics = createMetrics(deps.database.poolStats, { defaultMetrics: deps.processMetrics ?? false });

  registerValidation(app);
  registerBodyParsers(app);
  registerQueryArrays(app);
  registerErrorHandling(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  registerMetrics(app, metrics);
  await registerOpenApi(app, API_VERSION);

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await sql`select 1`.execute(db);
      return { status: 'ok', database: deps.database.kind };
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: deps.database.kind });
    }
  });

  const guard = createV1Guard({ db, clock, rateLimitStore: deps.rateLimitStore, metrics });
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', guard);
      v1.setNotFoundHandler(notFoundHandler(app));
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      accountRoutes(v1);
      contactsRoutes(v1, createContactsService({ db, clock }));
      propertiesRoutes(v1, createPropertiesService({ db, clock }));
      funnelStagesRoutes(v1, createFunnelStagesService({ db, clock }));
      subOriginsRoutes(v1, createSubOriginsService({ db, clock }));
    },
    { prefix: '/v1' },
  );

  if (deps.adminToken) {
    const operator = createOperatorService({ db, clock, platform: deps.platform });
    const adminToken = deps.adminToken;
    await app.register(async (admin) => operatorRoutes(admin, { adminToken, operator }), { prefix: '/admin/v1' });
  }

  await app.ready();
  return { app, metrics };
}

// buildApp(deps): every plugin and route registered explicitly, in one readable place.
import { randomBytes } from 'node:crypto';
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
import { createMediaFetcher, type MediaFetcher } from './messaging/media/media-fetcher.ts';
import { createMessaging, type Messaging } from './messaging/platform-factory.ts';
import { sandboxRoutes } from './messaging/sandbox/sandbox.routes.ts';
import { connectSandbox } from './messaging/sandbox/sandbox-connection.ts';
import { createSandboxControls } from './messaging/sandbox/sandbox-controls.ts';
import { webhookRoutes } from './messaging/webhooks.routes.ts';
import { createWebhookProcessor, type MessageStatusListener } from './messaging/webhooks.ts';
import { accountRoutes } from './modules/account/account.routes.ts';
import { recipientStatusListener } from './modules/broadcasts/broadcast-hooks.ts';
import { broadcastsRoutes } from './modules/broadcasts/broadcasts.routes.ts';
import { createBroadcastsService } from './modules/broadcasts/broadcasts.service.ts';
import { sendRoutes } from './modules/broadcasts/send.routes.ts';
import { createSendService } from './modules/broadcasts/send.service.ts';
import { channelRoutes } from './modules/channels/channels.routes.ts';
import { contactsRoutes } from './modules/contacts/contacts.routes.ts';
import { createContactsService } from './modules/contacts/contacts.service.ts';
import { conversationRoutes } from './modules/conversations/conversations.routes.ts';
import { createConversationsService } from './modules/conversations/conversations.service.ts';
import { funnelStagesRoutes } from './modules/funnel-stages/funnel-stages.routes.ts';
import { createFunnelStagesService } from './modules/funnel-stages/funnel-stages.service.ts';
import { operatorRoutes } from './modules/operator/operator.routes.ts';
import { createOperatorService } from './modules/operator/operator.service.ts';
import { propertiesRoutes } from './modules/properties/properties.routes.ts';
import { createPropertiesService } from './modules/properties/properties.service.ts';
import { subOriginsRoutes } from './modules/sub-origins/sub-origins.routes.ts';
import { createSubOriginsService } from './modules/sub-origins/sub-origins.service.ts';
import { templateRoutes } from './modules/templates/templates.routes.ts';
import { createTemplatesService, type PropertyKeysSource } from './modules/templates/templates.service.ts';

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
  /** The metrics registry to serve (the process shares it with its worker); a new one when absent. */
  metrics?: Metrics;
  /** Process-level metrics (CPU, memory, event loop); off in tests where many apps share a process. */
  processMetrics?: boolean;
  /** The messaging platform adapter (and the sandbox's controls); a sandbox with default settings when absent. */
  messaging?: Messaging;
  /** WEBHOOK_APP_SECRET: the key of X-Hub-Signature-256 (the sandbox signs with it too); random when absent. */
  webhookAppSecret?: string;
  /** WEBHOOK_VERIFY_TOKEN of the subscription handshake; without it the handshake is refused. */
  webhookVerifyToken?: string | undefined;
  /** An organization's custom property keys, for send requirements; none when absent. */
  propertyKeys?: PropertyKeysSource;
  /** Records that follow message statuses besides the messages table and broadcast recipients. */
  messageStatusListeners?: MessageStatusListener[];
  /** Fetches and checks media URLs of sends; by default public addresses only, plus `mediaFetchAllowHosts`. */
  mediaFetcher?: MediaFetcher;
  /** MEDIA_FETCH_ALLOW_HOSTS: hosts media fetching may reach even on private addresses. */
  mediaFetchAllowHosts?: string[];
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
  const metrics =
    deps.metrics ?? createMetrics(deps.database.poolStats, { defaultMetrics: deps.processMetrics ?? false });

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

  const messaging = deps.messaging ?? createMessaging({ kind: 'sandbox', clock });
  const webhookAppSecret = deps.webhookAppSecret ?? randomBytes(32).toString('hex');
  const webhooks = createWebhookProcessor({
    db,
    clock,
    appSecret: webhookAppSecret,
    log: app.log,
    messageStatusListeners: [recipientStatusListener, ...(deps.messageStatusListeners ?? [])],
  });
  if (messaging.sandbox) {
    connectSandbox(messaging.sandbox, webhooks, db, webhookAppSecret);
    const sandbox = messaging.sandbox;
    app.addHook('onClose', async () => sandbox.close());
  }
  await app.register(async (scope) =>
    webhookRoutes(scope, { processor: webhooks, verifyToken: deps.webhookVerifyToken }),
  );
  // Named placeholders equal to a live custom property key resolve from the contact (send requirements, sends).
  const propertyKeys: PropertyKeysSource =
    deps.propertyKeys ??
    (async (source, orgId) =>
      (
        await source
          .selectFrom('crm_properties')
          .select('key')
          .where('org_id', '=', orgId)
          .where('archived_at', 'is', null)
          .execute()
      ).map((row) => row.key));
  const templates = createTemplatesService({
    db,
    clock,
    platform: messaging.platform,
    log: app.log,
    propertyKeys,
  });
  const conversations = createConversationsService({ db });
  const broadcasts = createBroadcastsService(db);
  const send = createSendService({
    db,
    media: deps.mediaFetcher ?? createMediaFetcher({ allowHosts: deps.mediaFetchAllowHosts ?? [] }),
    propertyKeys: (orgId) => propertyKeys(db, orgId),
  });

  // Keys are cached only where every revocation reaches this process: a shared generation (Redis), or the
  // embedded database, which no other process opens (decisions: "Keys, cache and Redis").
  const store = deps.rateLimitStore;
  const cacheKeys =
    Boolean(store.bumpGeneration) && (store.sharedGeneration === true || deps.database.kind === 'pglite');
  const guard = createV1Guard({ db, clock, rateLimitStore: store, metrics, cacheKeys });
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', guard.guard);
      v1.addHook('onSend', guard.settle);
      v1.setNotFoundHandler(notFoundHandler(app));
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
      accountRoutes(v1);
      templateRoutes(v1, templates);
      channelRoutes(v1, db);
      conversationRoutes(v1, conversations);
      sendRoutes(v1, { db, send, broadcasts });
      broadcastsRoutes(v1, broadcasts);
      contactsRoutes(v1, createContactsService({ db, clock }));
      propertiesRoutes(v1, createPropertiesService({ db, clock }));
      funnelStagesRoutes(v1, createFunnelStagesService({ db, clock }));
      subOriginsRoutes(v1, createSubOriginsService({ db, clock }));
    },
    { prefix: '/v1' },
  );

  if (deps.adminToken) {
    const operator = createOperatorService({
      db,
      clock,
      platform: deps.platform,
      ...(store.bumpGeneration ? { announceAccessChange: () => store.bumpGeneration?.() ?? Promise.resolve() } : {}),
    });
    const adminToken = deps.adminToken;
    const sandbox = messaging.sandbox;
    await app.register(
      async (admin) => {
        operatorRoutes(admin, { adminToken, operator });
        if (sandbox) sandboxRoutes(admin, createSandboxControls({ db, clock, sandbox }));
      },
      { prefix: '/admin/v1' },
    );
  }

  await app.ready();
  return { app, metrics };
}

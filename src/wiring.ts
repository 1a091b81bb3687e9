// The one wiring: from a database, a clock, a messaging platform and a few settings to every part of the product —
// the inbound processor with the features' handlers, the services, the fan-out and the other worker tasks.
// server.ts, cli/, the benchmarks and the test harness all build the product here; buildApp only registers
// plugins and routes over a Wiring, and startWorker runs its tasks.
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { DEFAULT_AUDIENCE_CHUNK, type DeploymentModel } from './config.ts';
import type { Database } from './db/database.ts';
import { createBulkhead } from './http/bulkhead.ts';
import type { ReadinessCheck } from './http/health.ts';
import { createKeyUsage } from './http/key-usage.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import { createMemoryRateLimitStore, type RateLimitStore } from './http/rate-limit.ts';
import { type Clock, systemClock } from './lib/clock.ts';
import { generateKeyringText, type Keyring, parseKeyring } from './lib/secrets-box.ts';
import { createInboundProcessor, joinHandlers } from './messaging/inbound.ts';
import { createMediaFetcher, type MediaFetcher } from './messaging/media/media-fetcher.ts';
import { createMessaging, type Messaging } from './messaging/platform-factory.ts';
import { connectSandbox } from './messaging/sandbox/sandbox-connection.ts';
import { createSandboxControls } from './messaging/sandbox/sandbox-controls.ts';
import { DEFAULT_DEPLOYMENT_MODEL } from './modules/automation/assistant/assistant-settings.ts';
import { createAutomationServices } from './modules/automation/automation.services.ts';
import { assistantLeaseMs, createAssistantWorker } from './modules/automation/engine/assistant-worker.ts';
import { automationHandlers } from './modules/automation/engine/inbound-automation.ts';
import { createAudienceService } from './modules/broadcasts/audience.service.ts';
import { BROADCAST_EVENTS } from './modules/broadcasts/broadcasts.events.ts';
import { broadcastMoves } from './modules/broadcasts/broadcasts.repo.ts';
import { createBroadcastsService } from './modules/broadcasts/broadcasts.service.ts';
import { createRetryService } from './modules/broadcasts/retry.ts';
import { createSendService } from './modules/broadcasts/send.service.ts';
import { createCannedResponsesService } from './modules/canned-responses/canned-responses.service.ts';
import { createChannelsService } from './modules/channels/channels.service.ts';
import { createMessagingDirectory } from './modules/channels/messaging-directory.ts';
import { CONTACT_EVENTS } from './modules/contacts/contacts.events.ts';
import { moveContactsOffStage } from './modules/contacts/contacts.repo.ts';
import { createContactsService } from './modules/contacts/contacts.service.ts';
import { createConversationChanges } from './modules/conversations/conversation-changes.ts';
import { CONVERSATION_EVENTS } from './modules/conversations/conversations.events.ts';
import { findOutboundMessageRoute, lastInboundAtNumber } from './modules/conversations/conversations.repo.ts';
import { createConversationsService } from './modules/conversations/conversations.service.ts';
import { createConversationMediaService } from './modules/conversations/media.service.ts';
import { conversationMessageHandlers } from './modules/conversations/platform-message.handlers.ts';
import { REPLY_WAKE_CHANNEL } from './modules/conversations/replies.repo.ts';
import { createRepliesService } from './modules/conversations/replies.service.ts';
import { countPendingReplies } from './modules/conversations/reply-handoffs.repo.ts';
import { createConsoleEventHub } from './modules/events/console-stream.ts';
import { type EventCatalog, OUTBOX_EVENTS, subscribableEventTypes } from './modules/events/event-types.ts';
import { createFilesService } from './modules/files/files.service.ts';
import { createFunnelStagesService } from './modules/funnel-stages/funnel-stages.service.ts';
import { recordApiKeyUse } from './modules/operator/operator.repo.ts';
import { createOperatorService } from './modules/operator/operator.service.ts';
import { createPropertiesService } from './modules/properties/properties.service.ts';
import { createAudienceRunner } from './modules/recipients/audience-runner.ts';
import { broadcastStatusHandlers } from './modules/recipients/platform-status.handlers.ts';
import { countPendingRecipients } from './modules/recipients/recipients.repo.ts';
import { createSessionsService } from './modules/sessions/sessions.service.ts';
import { createSubOriginsService } from './modules/sub-origins/sub-origins.service.ts';
import { recordTurn } from './modules/teams/teams.repo.ts';
import { createTeamsService } from './modules/teams/teams.service.ts';
import { templateReviewHandlers } from './modules/templates/platform-template.handlers.ts';
import { livePropertyKeys, type PropertyKeysSource } from './modules/templates/property-keys.ts';
import { TEMPLATE_EVENTS } from './modules/templates/templates.events.ts';
import { findTemplateIdentity } from './modules/templates/templates.repo.ts';
import { createTemplatesService } from './modules/templates/templates.service.ts';
import { createUsersService } from './modules/users/users.service.ts';
import { createWebhookEndpointsService } from './modules/webhook-endpoints/webhook-endpoints.service.ts';
import { createFanout, DEFAULT_FANOUT_OPTIONS, type FanoutOptions } from './worker/fanout.ts';
import { createReplyHandoffs, createWaker } from './worker/reply-handoffs.ts';
import { type WorkerTaskOptions, workerTasks } from './worker/tasks.ts';
import { createWebhookDeliverer, type WebhookDelivererOptions } from './worker/webhook-deliveries.ts';
import { startWorker, type Worker } from './worker/worker.ts';

export interface WiringInput {
  database: Database;
  clock?: Clock;
  /** The platform adapter (and the sandbox's controls); a sandbox with default settings when absent. */
  messaging?: Messaging;
  log?: FastifyBaseLogger;
  /** The process's metrics registry (shared by the API and the worker); a new one when absent. */
  metrics?: Metrics;
  /** Process-level metrics (CPU, memory, event loop) in a new registry; off in tests. */
  processMetrics?: boolean;
  rateLimitStore?: RateLimitStore;
  /** ADMIN_TOKEN: turns on the operator API. */
  adminToken?: string | undefined;
  /** WEBHOOK_APP_SECRET: the key of X-Hub-Signature-256 (the sandbox signs with it too); random when absent. */
  webhookAppSecret?: string;
  /** WEBHOOK_VERIFY_TOKEN of the subscription handshake; without it the handshake is refused. */
  webhookVerifyToken?: string | undefined;
  /** Fetches and checks media URLs of sends; by default public addresses only, plus `mediaFetchAllowHosts`. */
  mediaFetcher?: MediaFetcher;
  mediaFetchAllowHosts?: readonly string[];
  /** WEBHOOK_ALLOW_HOSTS: hosts webhook endpoints may use with http:// or on private addresses (decisions §11). */
  webhookAllowHosts?: readonly string[];
  /**
   * The keys that seal webhook endpoint secrets at rest (SECRETS_KEY or DATA_DIR's key file); a new random one when
   * absent, which suits only a process that both writes and delivers (tests).
   */
  keyring?: Keyring;
  /** decisions §20: the deployment's model for AI assistants (AI_*); the sandbox with a 30 s deadline when absent. */
  ai?: Partial<DeploymentModel>;
  /** Options of the webhook deliveries task (retry schedule, timeout, lease, concurrency). */
  webhookDeliveries?: Partial<WebhookDelivererOptions>;
  /** An organization's custom property keys, for send requirements; the live keys when absent. */
  propertyKeys?: PropertyKeysSource;
  fanout?: Partial<FanoutOptions>;
  worker?: Partial<WorkerTaskOptions>;
  /** PUBLIC_BASE_URL: the `servers` entry of the OpenAPI document; the listen address when absent. */
  publicBaseUrl?: string | undefined;
  /** PUBLIC_URL: where people reach the console; sign-in links are built under it (decisions §17). */
  publicUrl?: string;
  /** How often an open console stream checks its session (D358; 30 s when absent). */
  consoleSessionCheckMs?: number;
  /** METRICS_TOKEN: when set, /metrics requires `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** Extra named checks of /readyz besides the database and its migrations (say, Redis). */
  readinessChecks?: Record<string, ReadinessCheck>;
  /** The per-organization bulkhead's limits (ORG_CONCURRENCY, ORG_QUEUE, ORG_QUEUE_WAIT_MS); defaults when absent. */
  bulkhead?: Partial<{ limit: number; queue: number; waitMs: number }>;
}

export type Wiring = ReturnType<typeof wire>;

/**
 * Every event type API clients can receive, as the features declare them (D332), in the order of the OpenAPI
 * `webhooks` section and of an endpoint's `events` enum. The outbox (events/) knows no feature: it is given this.
 */
export const EVENT_CATALOG = {
  ...CONTACT_EVENTS,
  ...TEMPLATE_EVENTS,
  ...BROADCAST_EVENTS,
  ...CONVERSATION_EVENTS,
  ...OUTBOX_EVENTS,
} satisfies EventCatalog;

export function wire(input: WiringInput) {
  const { database } = input;
  const { db } = database;
  const clock = input.clock ?? systemClock;
  const log = input.log ?? pino({ level: 'silent' });
  const metrics = input.metrics ?? createMetrics(database.poolStats, { defaultMetrics: input.processMetrics ?? false });
  const messaging = input.messaging ?? createMessaging({ kind: 'sandbox', clock });
  const webhookAppSecret = input.webhookAppSecret ?? randomBytes(32).toString('hex');
  const keyring = input.keyring ?? parseKeyring(generateKeyringText());

  // decisions §19: the one change of a conversation's state; auto-assignment's turn counter is the teams' (D350).
  const changes = createConversationChanges(recordTurn);
  // Features answer the platform's events: each registers its handlers by event kind.
  // decisions §20: automation runs after the conversations' handler has stored the contact's message.
  const handlers = joinHandlers(
    templateReviewHandlers,
    conversationMessageHandlers(changes),
    automationHandlers(changes),
    // D349: the queue engine moves its broadcast through the broadcasts' owner.
    broadcastStatusHandlers(broadcastMoves),
  );
  const directory = createMessagingDirectory(db);
  const inbound = createInboundProcessor({
    db,
    clock,
    appSecret: webhookAppSecret,
    log,
    directory,
    handlers,
    reader: messaging.platform.inbound,
  });
  const media = input.mediaFetcher ?? createMediaFetcher({ allowHosts: input.mediaFetchAllowHosts ?? [] });
  if (messaging.sandbox)
    connectSandbox(
      messaging.sandbox,
      inbound,
      directory.businessAccountOfNumber,
      webhookAppSecret,
      (number, phone) => lastInboundAtNumber(db, number, phone),
      media,
    );

  metrics.depthGauge(
    'fanout_recipients_pending',
    'Broadcast recipients waiting for the fan-out (queued or held by a claim), all organizations',
    () => countPendingRecipients(db),
  );
  const rateLimitStore = input.rateLimitStore ?? createMemoryRateLimitStore();
  // Keys are cached only where every revocation reaches this process: a shared generation (Redis), or the
  // embedded database, which no other process opens (decisions D20).
  const cacheKeys =
    Boolean(rateLimitStore.bumpGeneration) && (rateLimitStore.sharedGeneration === true || database.kind === 'pglite');
  const announceAccessChange = rateLimitStore.bumpGeneration
    ? { announceAccessChange: () => rateLimitStore.bumpGeneration?.() ?? Promise.resolve() }
    : {};

  const propertyKeys = input.propertyKeys ?? livePropertyKeys;
  const publicUrl = input.publicUrl ?? input.publicBaseUrl ?? 'http://127.0.0.1:8080';
  const broadcasts = createBroadcastsService(db);
  // decisions §15: an accepted reply wakes this process's hand-off loop at once (others hear its commit's notify).
  const replyWaker = createWaker();
  const services = {
    contacts: createContactsService({ db, clock }),
    properties: createPropertiesService({ db, clock }),
    funnelStages: createFunnelStagesService({ db, clock, moveContacts: moveContactsOffStage }),
    teams: createTeamsService({ db, clock, changes }),
    cannedResponses: createCannedResponsesService({ db, clock }),
    files: createFilesService({ db, clock }),
    subOrigins: createSubOriginsService({ db, clock }),
    templates: createTemplatesService({ db, clock, platform: messaging.platform, log, propertyKeys }),
    conversations: createConversationsService({ db, clock, platform: messaging.platform, log, changes }),
    conversationMedia: createConversationMediaService({ db, platform: messaging.platform, media }),
    replies: createRepliesService({
      db,
      clock,
      media,
      propertyKeys: (orgId) => propertyKeys(db, orgId),
      wake: replyWaker.wake,
    }),
    channels: createChannelsService(db),
    broadcasts,
    send: createSendService({ db, broadcasts, media, propertyKeys: (orgId) => propertyKeys(db, orgId) }),
    retry: createRetryService({ db, broadcasts, propertyKeys: (orgId) => propertyKeys(db, orgId) }),
    audience: createAudienceService({
      db,
      broadcasts,
      media,
      propertyKeys: (orgId) => propertyKeys(db, orgId),
      now: () => clock.now(),
    }),
    webhookEndpoints: createWebhookEndpointsService({
      db,
      clock,
      allowHosts: input.webhookAllowHosts ?? [],
      keyring,
      eventTypes: subscribableEventTypes(EVENT_CATALOG),
    }),
    users: createUsersService({ db, clock, publicUrl, changes }),
    automation: createAutomationServices({
      db,
      clock,
      keyring,
      allowHosts: input.webhookAllowHosts ?? [],
      ai: input.ai,
    }),
    sessions: createSessionsService({ db, clock }),
    consoleEvents: createConsoleEventHub({ database, log }),
    // The platform port says its own kind: with `cloud` the platform's own ids must be given.
    operator: createOperatorService({ db, clock, platform: messaging.platform.name, ...announceAccessChange }),
    sandbox: messaging.sandbox
      ? createSandboxControls({
          clock,
          sandbox: messaging.sandbox,
          lookup: {
            template: (id) => findTemplateIdentity(db, id),
            outboundMessage: (id) => findOutboundMessageRoute(db, id),
            liveNumber: directory.liveNumber,
          },
        })
      : undefined,
  };

  const fanout = createFanout({
    db,
    moves: broadcastMoves,
    platform: messaging.platform,
    log,
    options: input.fanout,
    onOutcome: (outcome) => metrics.handoffs.inc({ outcome }),
  });

  // decisions §15: the replies' hand-offs, with the fan-out's lease, retry policy and reconciler wait.
  const replies = createReplyHandoffs({
    db,
    platform: messaging.platform,
    log,
    options: { ...DEFAULT_FANOUT_OPTIONS, ...input.fanout },
    onOutcome: (outcome) => metrics.handoffs.inc({ outcome }),
  });
  metrics.depthGauge('reply_handoffs_pending', 'Replies waiting for their hand-off, all organizations', () =>
    countPendingReplies(db),
  );

  // decisions §20: the autonomous assistant's answers, from the jobs contact messages queued.
  const deployment = { ...DEFAULT_DEPLOYMENT_MODEL, ...input.ai };
  const assistantJobs = createAssistantWorker({
    db,
    clock,
    changes,
    log,
    keyring,
    allowHosts: input.webhookAllowHosts ?? [],
    deployment,
    wake: replyWaker.wake,
    options: { leaseMs: assistantLeaseMs(deployment.timeoutMs) },
  });

  // decisions §16: starts audience broadcasts and adds their recipients (a worker task; tests drive it directly).
  const audiences = createAudienceRunner(
    { db, propertyKeys, moves: broadcastMoves },
    { chunkSize: Math.max(1, input.worker?.audienceChunk ?? DEFAULT_AUDIENCE_CHUNK) },
  );

  // Webhook deliveries run in their own task beside the fan-out, so a slow endpoint never holds the fan-out back.
  const deliveries = createWebhookDeliverer({
    db,
    log,
    allowHosts: input.webhookAllowHosts ?? [],
    keyring,
    options: { ...(input.worker?.pollMs ? { pollMs: input.worker.pollMs } : {}), ...input.webhookDeliveries },
    onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
    onPendingDepth: (depth) => metrics.webhookPending.set(depth),
  });

  // decisions §18: keys' last use, written at most once a minute per key by the guard of every API mount.
  const keyUsage = createKeyUsage((orgId, keyId, at) => recordApiKeyUse(db, orgId, keyId, at), log);
  // D132: an organization's requests at once in this process, on every API mount.
  const bulkhead = createBulkhead(input.bulkhead);

  return {
    database,
    db,
    clock,
    log,
    metrics,
    messaging,
    rateLimitStore,
    cacheKeys,
    keyUsage,
    bulkhead,
    adminToken: input.adminToken,
    webhookVerifyToken: input.webhookVerifyToken,
    readinessChecks: input.readinessChecks ?? {},
    publicBaseUrl: input.publicBaseUrl,
    publicUrl,
    consoleSessionCheckMs: input.consoleSessionCheckMs,
    metricsToken: input.metricsToken,
    inbound,
    eventCatalog: EVENT_CATALOG,
    keyring,
    services,
    changes,
    fanout,
    replies,
    replyWaker,
    audiences,
    deliveries,
    assistantJobs,
    /** Stops the sandbox's timers and closes the rate-limit store and the database. */
    async close(): Promise<void> {
      messaging.sandbox?.close();
      await services.consoleEvents.close();
      await deliveries.stop();
      await keyUsage.flush();
      await rateLimitStore.close();
      await database.close();
    },
    /** Runs the fan-out, the reconciler and the maintenance tasks until stopped. */
    startWorker(): Worker {
      // Every task pauses while the database is known to be unreachable (decisions D24).
      const tasks = workerTasks({
        database,
        fanout,
        audiences,
        deliveries,
        replies,
        replyWaker,
        assistantJobs,
        changes,
        log,
        clock,
        options: input.worker,
      });
      const worker = startWorker(tasks, log, { paused: () => !database.health.available });
      // decisions §15: a reply accepted by another process wakes this one (its commit's notification); after a
      // lost listening connection the loop looks at once, as a notification of the gap may be lost.
      const listening = database
        .listen(REPLY_WAKE_CHANNEL, { onNotification: replyWaker.wake, onReconnect: replyWaker.wake })
        .then((stop) => {
          log.info('reply hand-offs: listening for wake-ups');
          return stop;
        })
        .catch((error: unknown) => {
          log.warn({ err: error }, 'reply wake-ups not heard: the hand-offs poll');
          return async () => {};
        });
      // Stopping waits for the webhook attempts in flight too, so none is left to a lease.
      return {
        stop: async () => {
          await Promise.all([worker.stop(), deliveries.stop()]);
          await (await listening)();
        },
      };
    },
  };
}

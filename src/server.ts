// The running process: open the database, migrate, build the app, listen, run the worker, drain on SIGTERM.
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { demoBanner, seedDemo } from './demo.ts';
import { createMetrics, type Metrics } from './http/metrics.ts';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './http/rate-limit.ts';
import { systemClock } from './lib/clock.ts';
import { type Messaging, messagingFromConfig } from './messaging/platform-factory.ts';
import { connectSandbox } from './messaging/sandbox/sandbox-connection.ts';
import { createWebhookProcessor, pruneProcessedEvents } from './messaging/webhooks.ts';
import { recipientStatusListener, recordInConversation } from './modules/broadcasts/broadcast-hooks.ts';
import { purgeExpiredIdempotencyKeys } from './modules/broadcasts/idempotency.ts';
import { createFanout } from './worker/fanout.ts';
import { startWorker, type Worker, type WorkerTask } from './worker/worker.ts';

const ANALYZE_INTERVAL_MS = 10 * 60 * 1000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export function createLogger(config: Config) {
  return pino({
    level: config.logLevel,
    // Keys and secrets never reach the log, whatever a log line carries.
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'key',
        '*.key',
        'apiKey',
        '*.token',
      ],
      censor: '[redacted]',
    },
  });
}

/** Redis commands that take longer than this count as an outage: the request goes on with a local budget. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The rate-limit store (and access generation): Redis when REDIS_URL is set, else this process's memory. An
 * unreachable Redis never fails a request nor crashes the process (decisions: "Redis outage").
 */
export function openRateLimitStore(config: Config, log: ReturnType<typeof createLogger>): RateLimitStore {
  if (!config.redisUrl) return createMemoryRateLimitStore();
  const redis = new Redis(config.redisUrl, {
    // Fail at once while disconnected (no queue to wait in), and give up on a Redis that stopped answering.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
  });
  redis.on('error', (error) => log.debug({ err: error }, 'redis error'));
  return createRedisRateLimitStore(redis, {
    onOutage: (down, error) =>
      down
        ? log.warn({ err: error }, 'redis unreachable: rate limits per process and API keys read from the database')
        : log.info('redis reachable again: shared rate limits and key cache resumed'),
  });
}

export async function openConfiguredDatabase(config: Config): Promise<Database> {
  return openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
}

const FANOUT_SLICE_MS = 2000;
const RECONCILE_INTERVAL_MS = 30_000;

function fanoutTasks(
  config: Config,
  database: Database,
  messaging: Messaging,
  log: ReturnType<typeof createLogger>,
  metrics: Metrics,
) {
  const fanout = createFanout({
    db: database.db,
    platform: messaging.platform,
    log,
    options: config.fanout,
    onAccepted: recordInConversation,
    onOutcome: (outcome) => metrics.handoffs.inc({ outcome }),
  });
  const tasks: WorkerTask[] = [
    {
      name: 'fanout',
      intervalMs: config.fanout.pollMs,
      // Keeps claiming while there is work, for a bounded slice, then yields to the other tasks.
      run: async () => {
        const started = Date.now();
        let handled = 0;
        for (let batch = await fanout.runOnce(); batch > 0; batch = await fanout.runOnce()) {
          handled += batch;
          if (Date.now() - started >= FANOUT_SLICE_MS) break;
        }
        if (handled > 0) log.debug({ handled }, 'fan-out handed off recipients');
      },
    },
    {
      name: 'reconcile-handoffs',
      intervalMs: Math.min(RECONCILE_INTERVAL_MS, Math.max(1000, config.fanout.reconcileAfterMs)),
      run: async () => {
        const settled = await fanout.reconcile();
        if (settled > 0) log.warn({ settled }, 'hand-offs never confirmed by the platform were failed and refunded');
      },
    },
  ];
  return tasks;
}

function maintenanceTasks(database: Database): WorkerTask[] {
  const tasks: WorkerTask[] = [
    {
      name: 'prune-webhook-events',
      intervalMs: PRUNE_INTERVAL_MS,
      run: () => pruneProcessedEvents(database.db, systemClock.now()),
    },
    {
      name: 'purge-idempotency-keys',
      intervalMs: PRUNE_INTERVAL_MS,
      run: () => purgeExpiredIdempotencyKeys(database.db),
    },
    {
      name: 'purge-send-windows',
      intervalMs: 60_000,
      run: async () =>
        void (await database.db
          .deleteFrom('channel_send_windows')
          .where('window_start', '<', Math.floor(Date.now() / 1000) - 60)
          .execute()),
    },
  ];
  if (database.kind !== 'pglite') return tasks;
  // PGlite has no autovacuum: gather planner statistics on a schedule.
  return [
    ...tasks,
    {
      name: 'analyze',
      intervalMs: ANALYZE_INTERVAL_MS,
      run: async () => void (await sql`analyze`.execute(database.db)),
    },
  ];
}

export interface RunOptions {
  http: boolean;
  worker: boolean;
}

export async function run(config: Config, options: RunOptions): Promise<void> {
  const log = createLogger(config);
  const database = await openConfiguredDatabase(config);
  await migrateToLatest(database.db);
  log.info({ database: database.kind }, 'migrations applied');

  let demo: Awaited<ReturnType<typeof seedDemo>>;
  if (options.http && database.kind === 'pglite' && !config.adminToken) demo = await seedDemo(database.db, systemClock);

  const rateLimitStore = openRateLimitStore(config, log);

  // decisions §10: on the embedded database without ADMIN_TOKEN the sandbox reviews and reports by itself.
  const demoMode = database.kind === 'pglite' && !config.adminToken;
  const messaging = messagingFromConfig(config, systemClock, demoMode, (error, what) =>
    log.warn({ err: error }, `${what} failed`),
  );

  const metrics = createMetrics(database.poolStats, { defaultMetrics: true });
  const { app } = options.http
    ? await buildApp({
        metrics,
        database,
        rateLimitStore,
        platform: config.messagingPlatform,
        messaging,
        webhookAppSecret: config.webhookAppSecret,
        webhookVerifyToken: config.webhookVerifyToken,
        adminToken: config.adminToken,
        mediaFetchAllowHosts: config.mediaFetchAllowHosts,
        loggerInstance: log,
      })
    : { app: undefined };

  if (!app && messaging.sandbox) {
    // A worker without the HTTP server still hears the sandbox's reports, through the same webhook processing.
    const processor = createWebhookProcessor({
      db: database.db,
      clock: systemClock,
      appSecret: config.webhookAppSecret,
      log,
      messageStatusListeners: [recipientStatusListener],
    });
    connectSandbox(messaging.sandbox, processor, database.db, config.webhookAppSecret);
  }

  const worker: Worker | undefined = options.worker
    ? startWorker([...fanoutTasks(config, database, messaging, log, metrics), ...maintenanceTasks(database)], log)
    : undefined;

  if (app) {
    const address = await app.listen({ port: config.port, host: config.host });
    const port = app.server.address();
    const baseUrl =
      config.publicBaseUrl ??
      (typeof port === 'object' && port
        ? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port.port}`
        : address);
    log.info({ address, worker: options.worker }, 'listening');
    if (demo) process.stdout.write(`${demoBanner(demo, baseUrl)}\n`);
  } else log.info('worker running');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      log.error('shutdown grace period over; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    try {
      // Fastify stops accepting connections and waits for in-flight requests before resolving; the worker stops
      // claiming and finishes the hand-offs it has started, so none is left with an unknown outcome.
      await Promise.all([app?.close(), worker?.stop()]);
      if (!app) messaging.sandbox?.close();
      await rateLimitStore.close();
      await database.close();
      log.info('shut down cleanly');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

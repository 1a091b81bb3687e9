// The running process: open the database, migrate, build the app, listen, run the worker, drain on SIGTERM.

import { Redis } from 'ioredis';
import { type DestinationStream, type LoggerOptions, pino } from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { type Database, isDatabaseUnavailable, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { demoBanner, seedDemo } from './demo.ts';
import { createMetrics } from './http/metrics.ts';
import { createMemoryRateLimitStore, createRedisRateLimitStore, type RateLimitStore } from './http/rate-limit.ts';
import { systemClock } from './lib/clock.ts';
import { redactUrl } from './lib/redact-url.ts';
import { type Keyring, loadKeyring } from './lib/secrets-box.ts';
import { messagingFromConfig } from './messaging/platform-factory.ts';
import { resealAssistantKeys } from './modules/automation/assistant/assistant-settings.ts';
import { resealWebhookSecrets } from './modules/webhook-endpoints/endpoint-secrets.ts';
import { type Wiring, wire } from './wiring.ts';
import type { Worker } from './worker/worker.ts';

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream) {
  const options: LoggerOptions = {
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
    serializers: {
      // Fastify's request serializer, with the URL's secrets (verify token, `oak_` values) taken out.
      req: (req: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export async function openConfiguredDatabase(config: Config, log?: ReturnType<typeof createLogger>): Promise<Database> {
  return openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.database.poolSize,
    poolWaitMs: config.database.poolWaitMs,
    poolQueue: config.database.poolQueue,
    // Connection-level errors are handled where they happen; the log tells the operator.
    ...(log
      ? { onError: (error: Error, where: string) => log.warn({ err: error, where }, 'database connection error') }
      : {}),
  });
}

const MAX_MIGRATE_RETRY_MS = 5000;

/** With the database unreachable at start, waits and retries instead of exiting (decisions D24). */
async function migrateWhenReachable(database: Database, log: ReturnType<typeof createLogger>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrateToLatest(database.db);
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waitMs = Math.min(MAX_MIGRATE_RETRY_MS, 250 * 2 ** Math.min(attempt, 5));
      log.warn({ err: error, attempt, retryInMs: waitMs }, 'database unreachable at start; retrying migrations');
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/** Redis commands that take longer than this count as an outage: the request goes on with a local budget. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * The rate-limit store (and access generation): Redis when REDIS_URL is set, else this process's memory. An
 * unreachable Redis never fails a request nor crashes the process (decisions D23).
 */
export function openRateLimitStore(
  config: Config,
  log: ReturnType<typeof createLogger>,
): { store: RateLimitStore; ready?: () => Promise<boolean> } {
  if (!config.redisUrl) return { store: createMemoryRateLimitStore() };
  const redis = new Redis(config.redisUrl, {
    // Fail at once while disconnected (no queue to wait in), and give up on a Redis that stopped answering.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    // The budget scripts of the requests that arrive in one turn of the event loop leave in one write and come
    // back in one read (still one round trip per request, shared): fewer system calls per request under load.
    enableAutoPipelining: true,
  });
  redis.on('error', (error) => log.debug({ err: error }, 'redis error'));
  const store = createRedisRateLimitStore(redis, {
    onOutage: (down, error) =>
      down
        ? log.warn({ err: error }, 'redis unreachable: rate limits per process and API keys read from the database')
        : log.info('redis reachable again: shared rate limits and key cache resumed'),
  });
  // /readyz: requests are still answered while Redis is away, but the organization's budget is no longer shared.
  return { store, ready: async () => (await redis.ping()) === 'PONG' };
}

/**
 * The product wired from the process configuration: Redis-backed rate limits when REDIS_URL is set, the configured
 * messaging platform (decisions §10: on the embedded database without ADMIN_TOKEN the sandbox reviews and reports by
 * itself), the fan-out settings and the process metrics.
 */
export function wireFromConfig(
  config: Config,
  database: Database,
  log: ReturnType<typeof createLogger>,
  http = true,
  keyring?: Keyring,
): Wiring {
  const { store: rateLimitStore, ready: redisReady } = openRateLimitStore(config, log);
  const demoMode = database.kind === 'pglite' && !config.adminToken;
  const messaging = messagingFromConfig(
    config,
    systemClock,
    demoMode,
    (error, what) => log.warn({ err: error }, `${what} failed`),
    http,
  );
  return wire({
    database,
    log,
    metrics: createMetrics(database.poolStats, { defaultMetrics: true }),
    messaging,
    rateLimitStore,
    adminToken: config.adminToken,
    webhookAppSecret: config.webhookAppSecret,
    webhookVerifyToken: config.webhookVerifyToken,
    mediaFetchAllowHosts: config.mediaFetchAllowHosts,
    publicBaseUrl: config.publicBaseUrl,
    publicUrl: config.publicUrl,
    metricsToken: config.metricsToken,
    webhookAllowHosts: config.webhookAllowHosts,
    ai: config.ai,
    ...(keyring ? { keyring } : {}),
    webhookDeliveries: config.webhooks,
    bulkhead: config.bulkhead,
    fanout: config.fanout,
    worker: {
      pollMs: config.fanout.pollMs,
      batchesInFlight: config.fanout.batchesInFlight,
      audienceChunk: config.fanout.audienceChunk,
      retention: config.retention,
    },
    ...(redisReady ? { readinessChecks: { redis: redisReady } } : {}),
  });
}

/** The HTTP port cannot be taken (in use, or not allowed): `npm start` and `crm serve` say so in one line, exit 1. */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError';
}

async function listenOrExplain(app: Awaited<ReturnType<typeof buildApp>>, config: Config): Promise<string> {
  try {
    return await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    const where = `${config.host}:${config.port}`;
    throw new PortUnavailableError(
      code === 'EADDRINUSE'
        ? `Port ${where} is already in use (another server, or an earlier start still running): stop it or choose another port with PORT=...`
        : `Cannot listen on ${where} (${code}): choose another port with PORT=... or another address with HOST=...`,
    );
  }
}

export interface RunOptions {
  http: boolean;
  worker: boolean;
}

export async function run(config: Config, options: RunOptions): Promise<void> {
  const log = createLogger(config);
  const database = await openConfiguredDatabase(config, log);
  await migrateWhenReachable(database, log);
  log.info({ database: database.kind }, 'migrations applied');

  // Secrets at rest (decisions: "Deliveries"): rows in clear or under an older key are sealed again at each start.
  const { keyring, source } = loadKeyring({ secretsKey: config.secretsKey, dataDir: config.dataDir });
  if (source !== 'SECRETS_KEY' && database.kind === 'postgres')
    log.warn(
      { keyFile: source },
      'SECRETS_KEY is not set: secrets are sealed with a key file that every process must share',
    );
  const resealed = await resealWebhookSecrets(database.db, keyring);
  if (resealed > 0) log.info({ endpoints: resealed, keyId: keyring.currentId }, 'webhook secrets sealed');
  // decisions §20 (D264): the AI providers' keys, sealed the same way.
  const assistantKeys = await resealAssistantKeys(database.db, keyring);
  if (assistantKeys > 0) log.info({ assistants: assistantKeys, keyId: keyring.currentId }, 'AI provider keys sealed');

  const wiring = wireFromConfig(config, database, log, options.http, keyring);
  const app = options.http ? await buildApp(wiring) : undefined;
  const address = app ? await listenOrExplain(app, config) : undefined;
  const worker: Worker | undefined = options.worker ? wiring.startWorker() : undefined;

  if (app && address !== undefined) {
    // decisions §10, §17: the demo of a first start (its sandbox number needs the sandbox platform), made once the
    // server listens: a start that cannot listen (the port taken) leaves the database empty, so that the next start
    // makes the demo and shows its key, which is shown only once.
    const demo =
      database.kind === 'pglite' && !config.adminToken && config.messagingPlatform === 'sandbox'
        ? await seedDemo({ db: database.db, now: () => systemClock.now(), ...wiring.services })
        : undefined;
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
      await wiring.close();
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

// Environment -> a typed Config, read once in main.ts/cli/main.ts and passed down.
import { projectPath } from './lib/project-dir.ts';
import { parseKeyring } from './lib/secrets-box.ts';

/**
 * decisions §20: the deployment's model as the environment gives it (AI_PROVIDER, AI_BASE_URL, AI_MODEL, AI_API_KEY,
 * AI_TIMEOUT_MS). Declared here, where it is read; the assistant (modules/automation/assistant/) reads it (D331).
 */
export interface DeploymentModel {
  /** `sandbox` answers from the FAQs when no model is configured; `none` has no model then. */
  provider: 'sandbox' | 'none';
  baseUrl?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
  /** decisions §20: 30 s. */
  timeoutMs: number;
}

/** decisions §20: how long the assistant waits for a model's answer unless AI_TIMEOUT_MS says otherwise. */
export const AI_TIMEOUT_MS = 30_000;

/**
 * DATA_DIR's default: `data` in the project's directory, whatever the working directory (D291): the
 * server that `npm start` runs there and `bin/crm` run from anywhere open the same database.
 */
export const DEFAULT_DATA_DIR = projectPath('data');

/** decisions §16: contacts per chunk of an audience broadcast (one statement; about 0.1 s at the bench's rate). */
export const DEFAULT_AUDIENCE_CHUNK = 5000;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Whether DATA_DIR was set (the CLI names the directory it uses, and says when it is the default). */
  dataDirFromEnv: boolean;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  adminToken: string | undefined;
  logLevel: string;
  messagingPlatform: 'sandbox' | 'cloud';
  cloudApiBaseUrl: string;
  cloudApiToken: string | undefined;
  webhookAppSecret: string;
  webhookVerifyToken: string | undefined;
  sandboxAutoReviewMs: number | undefined;
  sandboxAutoReportsMs: number | undefined;
  sandboxNameCooldownMs: number;
  mediaFetchAllowHosts: string[];
  webhookAllowHosts: string[];
  /** SECRETS_KEY: the keys that seal secrets at rest (`id:base64[,id:base64…]`); DATA_DIR's key file when unset. */
  secretsKey: string | undefined;
  /** Deliveries of events to API clients' webhook endpoints (decisions §11). */
  webhooks: {
    /** Delays before each retry; WEBHOOK_RETRY_SCHEDULE_MS replaces decisions §11's schedule. */
    retryScheduleMs: number[];
    timeoutMs: number;
    leaseMs: number;
    concurrency: number;
    perEndpointConcurrency: number;
  };
  publicBaseUrl: string | undefined;
  /** PUBLIC_URL: where people reach the console (sign-in links are absolute under it); http://HOST:PORT by default. */
  publicUrl: string;
  /** METRICS_TOKEN: /metrics requires `Authorization: Bearer <token>` when set. */
  metricsToken: string | undefined;
  shutdownGraceMs: number;
  /** The database connections (D129): the pool, and the bounded wait for a busy pool's connection. */
  database: {
    poolSize: number;
    /** DATABASE_POOL_WAIT_MS: past it a request is answered 503 `service_busy` (the database is not marked down). */
    poolWaitMs: number;
    poolQueue: number;
  };
  /** The per-organization bulkhead (D132): expensive requests of one organization at once, per process. */
  bulkhead: { limit: number; queue: number; waitMs: number; share: number };
  /** Retention (D182): how long webhook history and the platform's webhook ids are kept. */
  retention: { webhookHistoryMs: number; platformEventsMs: number };
  /**
   * decisions §20: the deployment's model for AI assistants without their own provider — AI_BASE_URL, AI_MODEL,
   * AI_API_KEY; else AI_PROVIDER=sandbox (the default with the sandbox platform) answers from the FAQs.
   */
  ai: DeploymentModel;
  fanout: {
    batchSize: number;
    concurrency: number;
    leaseMs: number;
    /** Hand-offs per connected number per second; null lifts the cap. */
    perNumberPerSecond: number | null;
    reconcileAfterMs: number;
    pollMs: number;
    /** Batches a worker process hands off at once. */
    batchesInFlight: number;
    /** decisions §16: AUDIENCE_CHUNK_SIZE. */
    audienceChunk: number;
  };
}

export class ConfigError extends Error {}

/** decisions §11: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then failed. */
export const WEBHOOK_RETRY_SCHEDULE_MS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000].map((seconds) => seconds * 1000);

// The worker's defaults, written here alone: loadConfig falls back to them, and the loops that a test or a bench
// builds without a Config (createFanout, createWebhookDeliverer, workerTasks) start from the same objects.

/** How often an idle loop (the fan-out, the deliveries) looks for work; WORKER_POLL_MS. */
export const WORKER_POLL_MS = 200;

export const FANOUT_DEFAULTS = {
  batchSize: 64,
  /** Hand-offs in flight per batch (FANOUT_CONCURRENCY), which also bounds the group (D212). */
  concurrency: 32,
  /**
   * Rows marked, sent and recorded together: the most a killed worker leaves unknown per batch in flight. 32 (D212):
   * a group costs about seven round trips to the database whatever its size.
   */
  groupSize: 32,
  leaseMs: 60_000,
  /** Per connected number; the platform's per-number throughput. */
  perNumberPerSecond: 80,
  /** How long a hand-off whose answer was lost waits for the platform's report before it fails. */
  reconcileAfterMs: 15 * 60_000,
  maxAttempts: 8,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
  /** Batches a worker process hands off at once. */
  batchesInFlight: 3,
  pollMs: WORKER_POLL_MS,
};

export const WEBHOOK_DEFAULTS = {
  retryScheduleMs: WEBHOOK_RETRY_SCHEDULE_MS,
  /** decisions §11: 10 s. */
  timeoutMs: 10_000,
  /**
   * A kept-alive connection idle this long is closed by us: below the 5 s keep-alive of Node's and Apache's servers
   * (nginx 75 s, AWS load balancers 60 s), so that we do not write to one the server is closing (D97).
   */
  idleSocketMs: 4_000,
  leaseMs: 60_000,
  /** Attempts in flight in a process. */
  concurrency: 32,
  /** Attempts in flight per endpoint. */
  perEndpointConcurrency: 4,
  batchSize: 32,
  /** decisions §11: an endpoint whose attempts have all failed for this long is disabled (`failing`). */
  failingDisableAfterMs: 5 * 24 * 60 * 60 * 1000,
  pollMs: WORKER_POLL_MS,
};

const DAY_MS = 24 * 60 * 60 * 1000;

/** Retention (D182): how long history is kept, and how the pruning task works it off. */
export const RETENTION_DEFAULTS = {
  /** WEBHOOK_RETENTION_DAYS: finished webhook deliveries and their events (Stripe keeps events 30 days). */
  webhookHistoryMs: 30 * DAY_MS,
  /** PLATFORM_EVENT_RETENTION_DAYS: the platform's webhook ids, kept past its days of redelivery. */
  platformEventsMs: 14 * DAY_MS,
  batch: 5000,
  budgetMs: 30_000,
  intervalMs: 60 * 60 * 1000,
};

/** The database connections (D129); openDatabase falls back to them too. */
export const DATABASE_DEFAULTS = {
  poolSize: 10,
  /** How long a request waits for a busy pool's connection before 503 `service_busy`. */
  poolWaitMs: 2000,
  /** Requests waiting for a connection at once; one more is answered 503 `service_busy` at once. */
  poolQueue: 200,
};

/** The per-organization bulkhead (D132): expensive requests of one organization at once, per process. */
export const BULKHEAD_DEFAULTS = {
  /**
   * One expensive request per organization and process: on a 2-CPU machine two of them already take every CPU
   * (measured: `npm run bench:noisy`, decisions D133); raise it with the machine's CPUs.
   */
  limit: 1,
  /** Requests of one organization waiting for a place. */
  queue: 8,
  /** How long one waits for a place before 503 `service_busy`. */
  waitMs: 1000,
  /**
   * The share of its place's time one organization may keep busy while others are active (D184: a third, measured
   * on this 2-CPU machine by `npm run bench:noisy`).
   */
  share: 0.33,
};

function hostList(env: NodeJS.ProcessEnv, name: string): string[] {
  return (text(env, name) ?? '')
    .split(',')
    .map((host) =>
      host
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, ''),
    )
    .filter(Boolean);
}

function schedule(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 0)) {
    throw new ConfigError(`${name} must be comma-separated non-negative integers (milliseconds), got "${raw}"`);
  }
  return values;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined, min = 0): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** A whole percentage from 1 to 100, as a share (0.01–1). */
function percent(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = integer(env, name, Math.round(fallback * 100), 1) as number;
  if (value > 100) throw new ConfigError(`${name} must be an integer from 1 to 100, got "${env[name]}"`);
  return value / 100;
}

/** A whole number of days (at least 1), as milliseconds. */
const days = (env: NodeJS.ProcessEnv, name: string, fallbackMs: number): number =>
  (integer(env, name, fallbackMs / DAY_MS, 1) as number) * DAY_MS;

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

/** SECRETS_KEY, checked now so that a bad value stops the start with a clear message. */
function secretsKey(env: NodeJS.ProcessEnv): string | undefined {
  const value = text(env, 'SECRETS_KEY');
  if (value === undefined) return undefined;
  try {
    parseKeyring(value);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return value;
}

/** decisions §17: PUBLIC_URL, else http://HOST:PORT (a wildcard host is reached as localhost). */
function publicUrl(env: NodeJS.ProcessEnv): string {
  const given = text(env, 'PUBLIC_URL');
  if (given !== undefined) {
    try {
      const url = new URL(given);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an http(s) URL, got "${given}"`);
    }
    return given.replace(/\/+$/, '');
  }
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const reachable = ['0.0.0.0', '::'].includes(host) ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${integer(env, 'PORT', 8080)}`;
}

/** decisions §20: the deployment's model; AI_PROVIDER is `sandbox` by default with the sandbox platform. */
function aiModel(env: NodeJS.ProcessEnv, platform: 'sandbox' | 'cloud'): DeploymentModel {
  const provider = text(env, 'AI_PROVIDER') ?? (platform === 'sandbox' ? 'sandbox' : 'none');
  if (provider !== 'sandbox' && provider !== 'none') {
    throw new ConfigError(`AI_PROVIDER must be "sandbox" or "none", got "${provider}"`);
  }
  const baseUrl = text(env, 'AI_BASE_URL');
  if (baseUrl !== undefined) {
    try {
      const url = new URL(baseUrl);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new ConfigError(`AI_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
    }
    if (text(env, 'AI_MODEL') === undefined) throw new ConfigError('AI_BASE_URL needs AI_MODEL (the model to ask)');
  }
  return {
    provider,
    baseUrl,
    model: text(env, 'AI_MODEL'),
    apiKey: text(env, 'AI_API_KEY'),
    timeoutMs: integer(env, 'AI_TIMEOUT_MS', AI_TIMEOUT_MS, 1) as number,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const platform = text(env, 'MESSAGING_PLATFORM') ?? 'sandbox';
  if (platform !== 'sandbox' && platform !== 'cloud') {
    throw new ConfigError(`MESSAGING_PLATFORM must be "sandbox" or "cloud", got "${platform}"`);
  }
  const cloudApiToken = text(env, 'CLOUD_API_TOKEN');
  const webhookAppSecret = text(env, 'WEBHOOK_APP_SECRET');
  if (platform === 'cloud' && (!cloudApiToken || !webhookAppSecret)) {
    throw new ConfigError('MESSAGING_PLATFORM=cloud needs CLOUD_API_TOKEN and WEBHOOK_APP_SECRET');
  }
  return {
    port: integer(env, 'PORT', 8080) as number,
    host: text(env, 'HOST') ?? '127.0.0.1',
    dataDir: text(env, 'DATA_DIR') ?? DEFAULT_DATA_DIR,
    dataDirFromEnv: text(env, 'DATA_DIR') !== undefined,
    databaseUrl: text(env, 'DATABASE_URL'),
    redisUrl: text(env, 'REDIS_URL'),
    adminToken: text(env, 'ADMIN_TOKEN'),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    messagingPlatform: platform,
    cloudApiBaseUrl: text(env, 'CLOUD_API_BASE_URL') ?? 'https://graph.facebook.com/v21.0',
    cloudApiToken,
    // The sandbox signs its webhooks too; without a configured secret it uses a per-process one.
    webhookAppSecret: webhookAppSecret ?? `sandbox-${process.pid}-${Date.now()}`,
    webhookVerifyToken: text(env, 'WEBHOOK_VERIFY_TOKEN'),
    sandboxAutoReviewMs: integer(env, 'SANDBOX_AUTO_REVIEW_MS', undefined),
    sandboxAutoReportsMs: integer(env, 'SANDBOX_AUTO_REPORTS_MS', undefined),
    sandboxNameCooldownMs: integer(env, 'SANDBOX_NAME_COOLDOWN_MS', 60_000) as number,
    mediaFetchAllowHosts: (text(env, 'MEDIA_FETCH_ALLOW_HOSTS') ?? '')
      .split(',')
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    webhookAllowHosts: hostList(env, 'WEBHOOK_ALLOW_HOSTS'),
    secretsKey: secretsKey(env),
    webhooks: {
      retryScheduleMs: schedule(env, 'WEBHOOK_RETRY_SCHEDULE_MS', WEBHOOK_DEFAULTS.retryScheduleMs),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', WEBHOOK_DEFAULTS.timeoutMs, 100) as number,
      leaseMs: integer(env, 'WEBHOOK_LEASE_MS', WEBHOOK_DEFAULTS.leaseMs, 100) as number,
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', WEBHOOK_DEFAULTS.concurrency, 1) as number,
      perEndpointConcurrency: integer(
        env,
        'WEBHOOK_ENDPOINT_CONCURRENCY',
        WEBHOOK_DEFAULTS.perEndpointConcurrency,
        1,
      ) as number,
    },
    publicBaseUrl: text(env, 'PUBLIC_BASE_URL'),
    publicUrl: publicUrl(env),
    metricsToken: text(env, 'METRICS_TOKEN'),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000) as number,
    database: {
      poolSize: integer(env, 'DATABASE_POOL_SIZE', DATABASE_DEFAULTS.poolSize, 1) as number,
      poolWaitMs: integer(env, 'DATABASE_POOL_WAIT_MS', DATABASE_DEFAULTS.poolWaitMs, 1) as number,
      poolQueue: integer(env, 'DATABASE_POOL_QUEUE', DATABASE_DEFAULTS.poolQueue, 0) as number,
    },
    bulkhead: {
      limit: integer(env, 'ORG_CONCURRENCY', BULKHEAD_DEFAULTS.limit, 1) as number,
      queue: integer(env, 'ORG_QUEUE', BULKHEAD_DEFAULTS.queue, 0) as number,
      waitMs: integer(env, 'ORG_QUEUE_WAIT_MS', BULKHEAD_DEFAULTS.waitMs, 1) as number,
      share: percent(env, 'ORG_BUSY_PERCENT', BULKHEAD_DEFAULTS.share),
    },
    ai: aiModel(env, platform),
    retention: {
      webhookHistoryMs: days(env, 'WEBHOOK_RETENTION_DAYS', RETENTION_DEFAULTS.webhookHistoryMs),
      platformEventsMs: days(env, 'PLATFORM_EVENT_RETENTION_DAYS', RETENTION_DEFAULTS.platformEventsMs),
    },
    fanout: {
      batchSize: integer(env, 'FANOUT_BATCH_SIZE', FANOUT_DEFAULTS.batchSize, 1) as number,
      concurrency: integer(env, 'FANOUT_CONCURRENCY', FANOUT_DEFAULTS.concurrency, 1) as number,
      leaseMs: integer(env, 'FANOUT_LEASE_MS', FANOUT_DEFAULTS.leaseMs, 100) as number,
      // 0 lifts the cap (benchmarks); the default follows the platform's per-number throughput.
      perNumberPerSecond: ((value) => (value === 0 ? null : value))(
        integer(env, 'FANOUT_PER_NUMBER_PER_SECOND', FANOUT_DEFAULTS.perNumberPerSecond) as number,
      ),
      reconcileAfterMs: integer(env, 'FANOUT_RECONCILE_AFTER_MS', FANOUT_DEFAULTS.reconcileAfterMs, 0) as number,
      pollMs: integer(env, 'WORKER_POLL_MS', WORKER_POLL_MS, 10) as number,
      batchesInFlight: integer(env, 'FANOUT_BATCHES_IN_FLIGHT', FANOUT_DEFAULTS.batchesInFlight, 1) as number,
      // decisions §16: contacts added per chunk (one INSERT … SELECT) of an audience broadcast.
      audienceChunk: integer(env, 'AUDIENCE_CHUNK_SIZE', DEFAULT_AUDIENCE_CHUNK, 1) as number,
    },
  };
}

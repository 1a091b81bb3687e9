// Environment -> a typed Config, read once in main.ts/cli.ts and passed down.

export interface Config {
  port: number;
  host: string;
  dataDir: string;
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
  /** METRICS_TOKEN: /metrics requires `Authorization: Bearer <token>` when set. */
  metricsToken: string | undefined;
  shutdownGraceMs: number;
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
  };
}

export class ConfigError extends Error {}

/** decisions §11: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then failed. */
export const WEBHOOK_RETRY_SCHEDULE_MS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000].map((seconds) => seconds * 1000);

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

function text(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
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
    dataDir: text(env, 'DATA_DIR') ?? './data',
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
    webhooks: {
      retryScheduleMs: schedule(env, 'WEBHOOK_RETRY_SCHEDULE_MS', WEBHOOK_RETRY_SCHEDULE_MS),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100) as number,
      leaseMs: integer(env, 'WEBHOOK_LEASE_MS', 60_000, 100) as number,
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 32, 1) as number,
      perEndpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1) as number,
    },
    publicBaseUrl: text(env, 'PUBLIC_BASE_URL'),
    metricsToken: text(env, 'METRICS_TOKEN'),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000) as number,
    fanout: {
      batchSize: integer(env, 'FANOUT_BATCH_SIZE', 64, 1) as number,
      concurrency: integer(env, 'FANOUT_CONCURRENCY', 16, 1) as number,
      leaseMs: integer(env, 'FANOUT_LEASE_MS', 60_000, 100) as number,
      // 0 lifts the cap (benchmarks); the default follows the platform's per-number throughput.
      perNumberPerSecond: ((value) => (value === 0 ? null : value))(
        integer(env, 'FANOUT_PER_NUMBER_PER_SECOND', 80) as number,
      ),
      reconcileAfterMs: integer(env, 'FANOUT_RECONCILE_AFTER_MS', 15 * 60_000, 0) as number,
      pollMs: integer(env, 'WORKER_POLL_MS', 200, 10) as number,
      batchesInFlight: integer(env, 'FANOUT_BATCHES_IN_FLIGHT', 3, 1) as number,
    },
  };
}

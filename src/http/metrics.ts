// Prometheus metrics, one registry per app (no global state), served at /metrics.
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/database.ts';
import { ApiError } from './api-error.ts';
import { bearerToken, secretMatcher } from './bearer.ts';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: Histogram<'method' | 'route' | 'status'>;
  rateLimitRejections: Counter<'scope'>;
  /** Hand-offs to the messaging platform by outcome (sent, failed, retry, uncertain). */
  handoffs: Counter<'outcome'>;
  /** Webhook delivery attempts by outcome (succeeded, retry, failed), decisions §11. */
  webhookDeliveries: Counter<'outcome'>;
  /** Webhook deliveries waiting (due or scheduled for a retry), as last measured by this process's worker. */
  webhookPending: Gauge;
  depthGauge(name: string, help: string, read: () => Promise<number>): void;
}

export function createMetrics(poolStats: () => PoolStats, options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429, by budget scope',
    labelNames: ['scope'] as const,
    registers: [registry],
  });
  const pool = new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  void pool;
  const handoffs = new Counter({
    name: 'fanout_handoffs_total',
    help: 'Broadcast messages handed to the messaging platform, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts to API clients, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookPending = new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be attempted (due or scheduled for a retry)',
    registers: [registry],
  });
  return {
    registry,
    requests,
    duration,
    rateLimitRejections,
    handoffs,
    webhookDeliveries,
    webhookPending,
    /** Adds a gauge read at each scrape (a queue's depth); a failed read keeps the last value. */
    depthGauge(name: string, help: string, read: () => Promise<number>): void {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          try {
            this.set(await read());
          } catch {
            // The database is away: the scrape still answers, with the last known depth.
          }
        },
      });
    },
  };
}

/** `token` (METRICS_TOKEN): when set, a scrape must carry `Authorization: Bearer <token>`. */
export function registerMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  options: { token?: string | undefined } = {},
): void {
  // A callback hook (not async): no promise per request on the read path.
  app.addHook('onResponse', (request, reply, done) => {
    // Label by route pattern, never by raw URL, so ids do not explode the series count.
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
  const matches = secretMatcher(options.token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (options.token !== undefined && !matches(bearerToken(request.headers.authorization))) {
      throw new ApiError(401, 'invalid_metrics_token', { 'WWW-Authenticate': 'Bearer' });
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

// The test harness: a real app on a real database (PostgreSQL or PGlite), driven through HTTP with app.inject.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import type { DeploymentModel } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createMemoryRateLimitStore, type RateLimitStore } from '../../src/http/rate-limit.ts';
import { type Clock, systemClock } from '../../src/lib/clock.ts';
import { signPayload } from '../../src/messaging/cloud/webhook-signature.ts';
import { createMessaging, type Messaging } from '../../src/messaging/platform-factory.ts';
import type { PropertyKeysSource } from '../../src/modules/templates/property-keys.ts';
import { type Wiring, wire } from '../../src/wiring.ts';
import type { Fanout, FanoutOptions } from '../../src/worker/fanout.ts';
import type { WebhookDeliverer, WebhookDelivererOptions } from '../../src/worker/webhook-deliveries.ts';
import { createConformanceChecker, type RecordedResponse } from './conformance.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const ADMIN_TOKEN = 'test-admin-token';
export const WEBHOOK_APP_SECRET = 'test-webhook-secret';
export const WEBHOOK_VERIFY_TOKEN = 'test-verify-token';

export interface HarnessOptions {
  clock?: Clock;
  rateLimitStore?: RateLimitStore;
  /**
   * Lift the rate limit and the organizations' bulkhead (for tests that fire many requests at once and are about
   * neither; `bulkhead` sets the latter explicitly).
   */
  unlimited?: boolean;
  /** Reuse a database (for tests that need two apps on one database). */
  database?: Database;
  /** The messaging platform: the sandbox (default), or the cloud adapter (point it at the fake Graph API server). */
  platform?: 'sandbox' | 'cloud';
  cloud?: { baseUrl: string; token: string; timeoutMs?: number };
  sandbox?: { nameCooldownMs?: number; autoReviewMs?: number; autoReportsMs?: number };
  propertyKeys?: PropertyKeysSource;
  /** How often an open console stream checks its session (D358). */
  consoleSessionCheckMs?: number;
  /** Hosts media fetching may reach on private addresses (the tests' local media server). */
  mediaFetchAllowHosts?: string[];
  /** Options of the fan-out that `h.fanout` runs. */
  fanout?: Partial<FanoutOptions>;
  /** Hosts webhook endpoints may use with http:// or on private addresses (default: the tests' 127.0.0.1). */
  webhookAllowHosts?: string[];
  /** Options of the webhook deliverer that `h.deliveries` runs. */
  webhooks?: Partial<WebhookDelivererOptions>;
  /** decisions §16: contacts per chunk of an audience broadcast (small ones make several chunks). */
  audienceChunk?: number;
  /** How often the worker's idle loops poll (for tests that start the worker with `wiring.startWorker()`). */
  pollMs?: number;
  /** The per-organization bulkhead's limits (D132). */
  bulkhead?: { limit?: number; queue?: number; waitMs?: number; share?: number };
  /** decisions §20: the deployment's model (a short `timeoutMs` for timeout tests). */
  ai?: Partial<DeploymentModel>;
}

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  rawBody?: string;
}

export const unlimitedStore: RateLimitStore = { hit: async () => 1, close: async () => {} };

export interface Harness {
  app: FastifyInstance;
  /** Every part of the product this harness runs, as the one wiring built it. */
  wiring: Wiring;
  database: Database;
  api<T = any>(method: string, url: string, options?: RequestOptions): Promise<Response<T>>;
  admin<T = any>(method: string, url: string, body?: unknown): Promise<Response<T>>;
  /** A fresh organization (Scale plan unless overridden) with one API key. */
  createOrg(overrides?: Record<string, unknown>): Promise<{ org: any; key: string; keyId: string }>;
  /** A messaging account with the given numbers (default one number) for an organization. */
  createAccount(orgId: string, body?: Record<string, unknown>): Promise<any>;
  /** POSTs a webhook signed with WEBHOOK_APP_SECRET (or with `signature`; null sends none). */
  webhook(payload: unknown, options?: { signature?: string | null; raw?: string }): Promise<Response>;
  messaging: Messaging;
  /** The fan-out worker on this harness's database and platform; `drain()` runs it until the queue is empty. */
  fanout: Fanout & { drain(): Promise<number> };
  /** decisions §16: the audience broadcasts' worker step; `drain()` runs it until it finds nothing to do. */
  audiences: { runOnce(): Promise<number>; drain(): Promise<number> };
  /** The webhook deliverer on this harness's database; `drain()` attempts every due delivery until none is due. */
  deliveries: WebhookDeliverer & { drain(): Promise<number> };
  recorded: RecordedResponse[];
  close(): Promise<void>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  let testDatabase: TestDatabase | undefined;
  let database = options.database;
  if (!database) {
    testDatabase = await createTestDatabase();
    database = testDatabase.database;
  }
  const platform = options.platform ?? 'sandbox';
  const messaging = createMessaging({
    kind: platform,
    clock: options.clock ?? systemClock,
    ...(options.cloud ? { cloud: options.cloud } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const wiring = wire({
    database,
    rateLimitStore: options.rateLimitStore ?? (options.unlimited ? unlimitedStore : createMemoryRateLimitStore()),
    adminToken: ADMIN_TOKEN,
    messaging,
    webhookAppSecret: WEBHOOK_APP_SECRET,
    mediaFetchAllowHosts: options.mediaFetchAllowHosts ?? ['127.0.0.1'],
    webhookVerifyToken: WEBHOOK_VERIFY_TOKEN,
    fanout: { perNumberPerSecond: null, ...options.fanout },
    webhookAllowHosts: options.webhookAllowHosts ?? ['127.0.0.1'],
    ...(options.webhooks ? { webhookDeliveries: options.webhooks } : {}),
    ...(options.audienceChunk || options.pollMs
      ? {
          worker: {
            ...(options.audienceChunk ? { audienceChunk: options.audienceChunk } : {}),
            ...(options.pollMs ? { pollMs: options.pollMs } : {}),
          },
        }
      : {}),
    ...(options.bulkhead
      ? { bulkhead: options.bulkhead }
      : options.unlimited
        ? { bulkhead: { limit: 10_000, queue: 10_000 } }
        : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.propertyKeys ? { propertyKeys: options.propertyKeys } : {}),
    ...(options.consoleSessionCheckMs ? { consoleSessionCheckMs: options.consoleSessionCheckMs } : {}),
    ...(options.ai ? { ai: options.ai } : {}),
  });
  const app = await buildApp(wiring);
  const recorded: RecordedResponse[] = [];

  async function call<T>(method: string, url: string, headers: Record<string, string>, body: unknown, raw?: string) {
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(payload !== undefined && raw === undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(payload !== undefined ? { payload } : {}),
    });
    let parsed: unknown;
    try {
      parsed = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      parsed = response.body;
    }
    // The console's copy of a /v1 operation (/app/api/v1/…) is checked against the /v1 entry it shares.
    const documented = url.startsWith('/app/api/v1/') ? url.slice('/app/api'.length) : url;
    if ((documented.startsWith('/v1/') && documented !== '/v1/openapi.json') || documented.startsWith('/app/api/')) {
      recorded.push({
        method,
        url: documented,
        status: response.statusCode,
        body: parsed,
        requestHeaders: {
          ...(payload !== undefined && raw === undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        // What was sent, parsed again: the caller's object may change after the call.
        requestBody: raw ?? (payload === undefined ? undefined : JSON.parse(payload)),
        responseHeaders: response.headers,
      });
    }
    return { status: response.statusCode, body: parsed as T, headers: response.headers, text: response.body };
  }

  const { fanout } = wiring;
  const drain = async () => {
    let total = 0;
    for (let handled = await fanout.runOnce(); handled > 0; handled = await fanout.runOnce()) total += handled;
    return total;
  };

  const { deliveries } = wiring;
  const drainDeliveries = async () => {
    let total = 0;
    for (let handled = await deliveries.runOnce(); handled > 0; handled = await deliveries.runOnce()) total += handled;
    return total;
  };

  const { audiences } = wiring;
  const drainAudiences = async () => {
    let total = 0;
    for (let done = await audiences.runOnce(); done > 0; done = await audiences.runOnce()) total += done;
    return total;
  };

  const harness: Harness = {
    fanout: { ...fanout, drain },
    audiences: { ...audiences, drain: drainAudiences },
    deliveries: { ...deliveries, drain: drainDeliveries },
    app,
    wiring,
    database,
    recorded,
    api(method, url, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.key) headers.authorization = `Bearer ${requestOptions.key}`;
      return call(method, url, headers, requestOptions.body, requestOptions.rawBody);
    },
    admin(method, url, body) {
      return call(method, `/admin/v1${url}`, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);
    },
    async createOrg(overrides = {}) {
      const org = await harness.admin('POST', '/organizations', { name: 'Test organization', ...overrides });
      if (org.status !== 201) throw new Error(`createOrg failed: ${org.status} ${org.text}`);
      const key = await harness.admin('POST', `/organizations/${org.body.id}/api-keys`, { name: 'test' });
      if (key.status !== 201) throw new Error(`createKey failed: ${key.status} ${key.text}`);
      return { org: org.body, key: key.body.key, keyId: key.body.id };
    },
    async createAccount(orgId, body = { numbers: [{ phone: '+15550100001' }] }) {
      const account = await harness.admin('POST', `/organizations/${orgId}/messaging-accounts`, body);
      if (account.status !== 201) throw new Error(`createAccount failed: ${account.status} ${account.text}`);
      return account.body;
    },
    async webhook(payload, webhookOptions = {}) {
      const raw = webhookOptions.raw ?? JSON.stringify(payload);
      const signature =
        webhookOptions.signature === undefined ? signPayload(raw, WEBHOOK_APP_SECRET) : webhookOptions.signature;
      const response = await app.inject({
        method: 'POST',
        url: '/webhooks/messaging',
        headers: {
          'content-type': 'application/json',
          ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
        },
        payload: raw,
      });
      let body: unknown;
      try {
        body = JSON.parse(response.body);
      } catch {
        body = response.body;
      }
      return { status: response.statusCode, body, headers: response.headers, text: response.body };
    },
    messaging,
    async close() {
      const check = await createConformanceChecker(app.swagger());
      await deliveries.stop();
      await app.close();
      await testDatabase?.drop();
      const problems = [...new Set(recorded.map(check).filter((problem): problem is string => Boolean(problem)))];
      if (problems.length > 0)
        throw new Error(`Responses that do not match the OpenAPI document:\n${problems.join('\n')}`);
    },
  };
  return harness;
}

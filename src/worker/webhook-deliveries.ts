// The loop of deliveries of events to API clients' webhook endpoints (decisions §11). The delivery rows are the
// queue: any number of worker processes claim them (FOR UPDATE SKIP LOCKED) and hold each under a lease, which is
// the row's `next_attempt_at` pushed past the attempt's deadline, so a worker killed mid-delivery loses nothing: the
// row comes due again and another worker delivers it (at least once; receivers deduplicate by `webhook-id`).
// Fairness: deliveries run in their own task, apart from the fan-out; each claim takes at most
// `perEndpointConcurrency` rows per endpoint, counting those already in flight, so a slow or dead endpoint holds a
// few slots of the pool and never a whole batch; the pool refills as each attempt ends, never waiting for a batch.
// Lanes (D99, D229): conversational deliveries (`message.*`) are claimed before bulk ones, with their own
// per-endpoint allowance, and bulk ones never take the last quarter of the pool, so an inbound message is not
// queued behind an import's `contact.*` backlog, at its endpoint or in the process.
// What a claim, an attempt and its record are: modules/webhook-endpoints/deliveries.service.ts.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { WEBHOOK_DEFAULTS } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { Keyring } from '../lib/secrets-box.ts';
import {
  type ClaimedDelivery,
  createDeliveryService,
  type DeliveryOptions,
} from '../modules/webhook-endpoints/deliveries.service.ts';
import type { DeliveryOutcome } from '../modules/webhook-endpoints/delivery-rules.ts';
import type { WorkerTask } from './worker.ts';

export interface WebhookDelivererOptions extends DeliveryOptions {
  /** Attempts in flight in this process. */
  concurrency: number;
  batchSize: number;
  pollMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERER_OPTIONS: WebhookDelivererOptions = WEBHOOK_DEFAULTS;

export interface WebhookDelivererDeps {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_HOSTS, applied again at connect time. */
  allowHosts: readonly string[];
  /** Opens the endpoints' signing secrets (SECRETS_KEY). */
  keyring: Keyring;
  options?: Partial<WebhookDelivererOptions> | undefined;
  onOutcome?: (outcome: DeliveryOutcome) => void;
  onPendingDepth?: (depth: number) => void;
}

export interface WebhookDeliverer {
  /** Claims one batch and delivers it, waiting for every attempt; returns how many were attempted. */
  runOnce(): Promise<number>;
  /** The worker task: keeps the pool of attempts full without waiting for them. */
  task: WorkerTask;
  /** Deliveries waiting (due or scheduled), for the metrics. */
  pendingDepth(): Promise<number>;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

const DEPTH_INTERVAL_MS = 5000;

export function createWebhookDeliverer(deps: WebhookDelivererDeps): WebhookDeliverer {
  const options = { ...DEFAULT_WEBHOOK_DELIVERER_OPTIONS, ...deps.options };
  const { log } = deps;
  const refillAt = Math.max(1, Math.floor(options.concurrency / 4));
  // Slots of the pool that bulk deliveries leave to conversational ones.
  const conversationalReserve = Math.max(1, Math.floor(options.concurrency / 4));
  let bulkInFlight = 0;
  const deliveries = createDeliveryService({
    db: deps.db,
    log,
    allowHosts: deps.allowHosts,
    keyring: deps.keyring,
    options,
  });

  let stopped = false;
  let claiming = false;
  const inFlight = new Set<Promise<void>>();

  function start(row: ClaimedDelivery, refill: boolean): Promise<void> {
    const bulk = row.lane !== 0;
    if (bulk) bulkInFlight++;
    const run = deliveries
      .attempt(row)
      .then((outcome) => {
        if (outcome) deps.onOutcome?.(outcome);
      })
      .catch((error: unknown) => {
        // The lease runs out and the delivery is attempted again.
        log.error({ err: error, delivery: row.id }, 'webhook delivery failed to record');
      })
      .finally(() => {
        inFlight.delete(run);
        if (bulk) bulkInFlight--;
        // Refill in groups rather than one claim per finished attempt: claims are cheaper by the batch.
        if (refill && !stopped && options.concurrency - inFlight.size >= refillAt) void fill();
      });
    inFlight.add(run);
    return run;
  }

  /** Tops the pool up to `concurrency` attempts in flight. */
  async function fill(): Promise<void> {
    if (claiming || stopped) return;
    claiming = true;
    try {
      for (;;) {
        const free = Math.min(options.batchSize, options.concurrency - inFlight.size);
        if (free <= 0 || stopped) return;
        const bulkFree = Math.max(0, options.concurrency - conversationalReserve - bulkInFlight);
        const claimed = await deliveries.claim(free, Math.min(free, bulkFree));
        for (const row of claimed) start(row, true);
        if (claimed.length < free) return;
      }
    } catch (error) {
      log.error({ err: error }, 'claiming webhook deliveries failed');
    } finally {
      claiming = false;
    }
  }

  let depthMeasuredAt = 0;
  return {
    async runOnce() {
      const claimed = await deliveries.claim(Math.min(options.batchSize, options.concurrency));
      await Promise.all(claimed.map((row) => start(row, false)));
      return claimed.length;
    },
    task: {
      name: 'webhook-deliveries',
      intervalMs: options.pollMs,
      async run() {
        await fill();
        if (deps.onPendingDepth && Date.now() - depthMeasuredAt >= DEPTH_INTERVAL_MS) {
          depthMeasuredAt = Date.now();
          deps.onPendingDepth(await deliveries.pendingDepth());
        }
      },
    },
    pendingDepth: deliveries.pendingDepth,
    async stop() {
      stopped = true;
      await Promise.all(inFlight);
      deliveries.close();
    },
  };
}

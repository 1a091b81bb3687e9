// The loop of deliveries of events to API clients' webhook endpoints (decisions §11). The delivery rows are the
// queue: any number of worker processes claim them (FOR UPDATE SKIP LOCKED) and hold each under a lease, which is
// the row's `next_attempt_at` pushed past the attempt's deadline, so a worker killed mid-delivery loses nothing: the
// row comes due again and another worker delivers it (at least once; receivers deduplicate by `webhook-id`).
// Fairness: deliveries run in their own task, apart from the fan-out; each claim takes at most
// `perEndpointConcurrency` rows per endpoint, counting those already in flight, so a slow or dead endpoint holds a
// few slots of the pool and never a whole batch; the pool refills as attempts end, by the statement that records
// them (D297, D298), never waiting for a batch.
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
  type FinishedAttempt,
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

/** Finished attempts recorded by one statement at most. */
const RECORD_GROUP_MOST = 256;

export function createWebhookDeliverer(deps: WebhookDelivererDeps): WebhookDeliverer {
  const options = { ...DEFAULT_WEBHOOK_DELIVERER_OPTIONS, ...deps.options };
  const { log } = deps;
  // Slots of the pool that bulk deliveries leave to conversational ones.
  const conversationalReserve = Math.max(1, Math.floor(options.concurrency / 4));
  const deliveries = createDeliveryService({
    db: deps.db,
    log,
    allowHosts: deps.allowHosts,
    keyring: deps.keyring,
    options,
  });

  let stopped = false;
  let claiming = false;
  /** Attempts claimed and not yet recorded: the pool. */
  let held = 0;
  let bulkHeld = 0;
  const inFlight = new Set<Promise<void>>();

  // Answered attempts wait here for their record (D297): while one group's statement runs, the attempts that end
  // meanwhile wait for the next, so a group is whatever ended during one round trip and no attempt waits for a group
  // to fill. The statement that records a group also claims what the pool then has room for (D298), so an attempt's
  // slot is refilled in the round trip that frees it. A worker killed before its group is recorded loses nothing:
  // the rows' leases run out and they are attempted again (at least once), as when it is killed mid-request.
  const answered: { finished: FinishedAttempt; refill: boolean; done: () => void }[] = [];
  let recording = false;

  /** Room in the pool once `freed` attempts (`bulkFreed` of them bulk) are recorded: a claim, or none. */
  function room(freed: number, bulkFreed: number) {
    const limit = Math.min(options.batchSize, options.concurrency - held + freed);
    if (limit <= 0 || stopped) return undefined;
    const bulkFree = Math.max(0, options.concurrency - conversationalReserve - bulkHeld + bulkFreed);
    return { limit, bulkLimit: Math.min(limit, bulkFree) };
  }

  function release(row: ClaimedDelivery) {
    held--;
    if (row.lane !== 0) bulkHeld--;
  }

  function start(row: ClaimedDelivery, refill: boolean): Promise<void> {
    held++;
    if (row.lane !== 0) bulkHeld++;
    const run = new Promise<void>((done) => {
      deliveries.attempt(row).then(
        (finished) => {
          answered.push({ finished, refill, done });
          if (!recording) {
            recording = true;
            // After this turn's other answers, so that they join the group.
            setImmediate(recordAnswered);
          }
        },
        (error: unknown) => {
          // The lease runs out and the delivery is attempted again.
          log.error({ err: error, delivery: row.id }, 'webhook delivery failed');
          release(row);
          done();
        },
      );
    }).finally(() => inFlight.delete(run));
    inFlight.add(run);
    return run;
  }

  async function recordAnswered() {
    while (answered.length > 0) {
      const group = answered.splice(0, RECORD_GROUP_MOST);
      const bulkFreed = group.filter((item) => item.finished.row.lane !== 0).length;
      const claim = !claiming && group.some((item) => item.refill) ? room(group.length, bulkFreed) : undefined;
      if (claim) claiming = true;
      let claimed: ClaimedDelivery[] = [];
      try {
        const result = await deliveries.recordAndClaim(
          group.map((item) => item.finished),
          claim,
        );
        claimed = result.claimed;
        for (const { finished } of group) {
          if (result.recorded.has(finished.row.id)) deps.onOutcome?.(finished.outcome);
        }
      } catch (error) {
        // Their leases run out and they are attempted again.
        log.error({ err: error }, 'webhook deliveries failed to record');
      } finally {
        if (claim) claiming = false;
      }
      for (const item of group) {
        release(item.finished.row);
        item.done();
      }
      for (const row of claimed) start(row, true);
    }
    recording = false;
  }

  /** Tops the pool up to `concurrency` attempts in flight; answers how many it claimed. */
  async function fill(): Promise<number> {
    if (claiming || stopped) return 0;
    claiming = true;
    let started = 0;
    try {
      for (;;) {
        const claim = room(0, 0);
        if (!claim) return started;
        const claimed = await deliveries.claim(claim.limit, claim.bulkLimit);
        for (const row of claimed) start(row, true);
        started += claimed.length;
        if (claimed.length < claim.limit) return started;
      }
    } catch (error) {
      log.error({ err: error }, 'claiming webhook deliveries failed');
      return started;
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
        const claimed = await fill();
        if (deps.onPendingDepth && Date.now() - depthMeasuredAt >= DEPTH_INTERVAL_MS) {
          depthMeasuredAt = Date.now();
          deps.onPendingDepth(await deliveries.pendingDepth());
        }
        // Nothing claimed (D354): the poll may slow down when nothing is due, or when this worker has attempts in
        // flight, whose records claim again (D298). Due work it could not take with nothing in flight (the endpoint's
        // places held by another worker) keeps the poll at its interval.
        return claimed === 0 && (held > 0 || !deliveries.dueFound()) ? 'idle' : undefined;
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

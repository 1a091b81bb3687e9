// The loop of deliveries of events to API clients' webhook endpoints (decisions §11). The delivery rows are the
// queue: any number of worker processes claim them (FOR UPDATE SKIP LOCKED) and hold each under a lease, which is
// the row's `next_attempt_at` pushed past the attempt's deadline, so a worker killed mid-delivery loses nothing: the
// row comes due again and another worker delivers it (at least once; receivers deduplicate by `webhook-id`).
// Fairness: deliveries run in their own task, apart from the fan-out; a worker has at most `perEndpointConcurrency`
// attempts in flight per endpoint and lane, and leases at most LEASED_AHEAD times that, of lanes no other worker
// holds (D364), so a slow or dead endpoint holds a few slots of the pool and never a whole batch; the pool refills
// as attempts end, by the statement that records them (D297, D298), never waiting for a batch.
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
  LEASED_AHEAD,
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

/** A claimed row is attempted only while its lease outlasts the attempt's deadline by this much (D364), or by half
 * of what the lease leaves beyond the deadline when that is less. */
const LEASE_MARGIN_MS = 5000;

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
  /** Rows claimed and not yet recorded: the pool, leased up to LEASED_AHEAD times `concurrency` (D364). */
  let held = 0;
  let bulkHeld = 0;
  const leasedMost = options.concurrency * LEASED_AHEAD;
  const inFlight = new Set<Promise<void>>();

  // D364: claimed rows wait here for a place, in the order claimed; an attempt starts as soon as its endpoint's lane
  // has fewer than `perEndpointConcurrency` in flight (the claim leased up to LEASED_AHEAD times that) and the process
  // fewer than `concurrency`, bulk ones leaving `conversationalReserve` of them. So the next attempt starts when one
  // is answered, not when its record has freed the lease. A row whose lease would not outlast an attempt begun now
  // (plus a margin) is not attempted here: its lease runs out and it comes due again (at least once; the log exact).
  const waiting: { row: ClaimedDelivery; claimedAt: number; refill: boolean; done: () => void }[] = [];
  const sendingAt = new Map<string, number>();
  let sending = 0;
  let bulkSending = 0;
  const spare = deliveries.leaseMs - options.timeoutMs;
  const startBy = spare - Math.min(LEASE_MARGIN_MS, spare / 2);
  const laneOf = (row: ClaimedDelivery) => `${row.endpoint_id}\n${row.lane}`;

  // Answered attempts wait here for their record (D297): while one group's statement runs, the attempts that end
  // meanwhile wait for the next, so a group is whatever ended during one round trip and no attempt waits for a group
  // to fill. The statement that records a group also claims what the pool then has room for (D298), so an attempt's
  // slot is refilled in the round trip that frees it. A worker killed before its group is recorded loses nothing:
  // the rows' leases run out and they are attempted again (at least once), as when it is killed mid-request.
  const answered: { finished: FinishedAttempt; refill: boolean; done: () => void }[] = [];
  let recording = false;

  /** Room in the pool once `freed` attempts (`bulkFreed` of them bulk) are recorded: a claim, or none. */
  function room(freed: number, bulkFreed: number) {
    const limit = Math.min(options.batchSize, leasedMost - held + freed);
    if (limit <= 0 || stopped) return undefined;
    const bulkFree = Math.max(0, leasedMost - conversationalReserve * LEASED_AHEAD - bulkHeld + bulkFreed);
    return { limit, bulkLimit: Math.min(limit, bulkFree) };
  }

  function release(row: ClaimedDelivery) {
    held--;
    if (row.lane !== 0) bulkHeld--;
  }

  function start(row: ClaimedDelivery, refill: boolean, claimedAt: number): Promise<void> {
    held++;
    if (row.lane !== 0) bulkHeld++;
    const run = new Promise<void>((done) => {
      waiting.push({ row, claimedAt, refill, done });
    }).finally(() => inFlight.delete(run));
    inFlight.add(run);
    pump();
    return run;
  }

  /** Starts the waiting rows that have a place: conversational ones first, then the others, each in claim order. */
  function pump() {
    for (const conversational of [true, false]) {
      for (let i = 0; i < waiting.length && sending < options.concurrency; ) {
        const item = waiting[i] as (typeof waiting)[number];
        const { row } = item;
        const lane = laneOf(row);
        if (
          (row.lane === 0) !== conversational ||
          (row.lane !== 0 && bulkSending >= options.concurrency - conversationalReserve) ||
          (sendingAt.get(lane) ?? 0) >= options.perEndpointConcurrency
        ) {
          i++;
          continue;
        }
        waiting.splice(i, 1);
        if (performance.now() - item.claimedAt > startBy) {
          release(row);
          item.done();
          continue;
        }
        send(item, lane);
      }
    }
  }

  function send(item: (typeof waiting)[number], lane: string) {
    const { row, refill, done } = item;
    sending++;
    if (row.lane !== 0) bulkSending++;
    sendingAt.set(lane, (sendingAt.get(lane) ?? 0) + 1);
    const answer = () => {
      sending--;
      if (row.lane !== 0) bulkSending--;
      const left = (sendingAt.get(lane) ?? 1) - 1;
      if (left > 0) sendingAt.set(lane, left);
      else sendingAt.delete(lane);
    };
    deliveries.attempt(row).then(
      (finished) => {
        answer();
        answered.push({ finished, refill, done });
        if (!recording) {
          recording = true;
          // After this turn's other answers, so that they join the group.
          setImmediate(recordAnswered);
        }
        pump();
      },
      (error: unknown) => {
        // The lease runs out and the delivery is attempted again.
        log.error({ err: error, delivery: row.id }, 'webhook delivery failed');
        answer();
        release(row);
        done();
        pump();
      },
    );
  }

  async function recordAnswered() {
    while (answered.length > 0) {
      const group = answered.splice(0, RECORD_GROUP_MOST);
      const bulkFreed = group.filter((item) => item.finished.row.lane !== 0).length;
      const claim = !claiming && group.some((item) => item.refill) ? room(group.length, bulkFreed) : undefined;
      if (claim) claiming = true;
      let claimed: ClaimedDelivery[] = [];
      const claimedAt = performance.now();
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
      for (const row of claimed) start(row, true, claimedAt);
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
        const claimedAt = performance.now();
        const claimed = await deliveries.claim(claim.limit, claim.bulkLimit);
        for (const row of claimed) start(row, true, claimedAt);
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
      const claimedAt = performance.now();
      const claimed = await deliveries.claim(Math.min(options.batchSize, options.concurrency));
      await Promise.all(claimed.map((row) => start(row, false, claimedAt)));
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
        // Nothing claimed (D354): the poll may slow down. Nothing is due, or this worker has attempts in flight, whose
        // records claim again (D298), or what is due is at endpoints another worker holds (D364: left to it while it
        // holds their leases; polled at the interval, a second worker's claims doubled PostgreSQL's CPU a delivery).
        return claimed === 0 ? 'idle' : undefined;
      },
    },
    pendingDepth: deliveries.pendingDepth,
    async stop() {
      stopped = true;
      // Until none is left: a claim under way when stopping (a group's record claims too) starts its rows after
      // the ones awaited here; closing the pools under them failed each at once (UND_ERR_DESTROYED), a retry and a
      // second request for every one (D364).
      while (inFlight.size > 0) await Promise.all(inFlight);
      deliveries.close();
    },
  };
}

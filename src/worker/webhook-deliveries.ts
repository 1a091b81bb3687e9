// Deliveries of events to API clients' webhook endpoints (decisions §11). The delivery rows are the queue: any
// number of worker processes claim them (FOR UPDATE SKIP LOCKED) and hold each under a lease, which is the row's
// `next_attempt_at` pushed past the attempt's deadline, so a worker killed mid-delivery loses nothing: the row
// comes due again and another worker delivers it (at least once; receivers deduplicate by `webhook-id`).
// Fairness: deliveries run in their own task, apart from the fan-out; each claim takes at most
// `perEndpointConcurrency` rows per endpoint, counting those already in flight, so a slow or dead endpoint holds a
// few slots of the pool and never a whole batch; the pool refills as each attempt ends, never waiting for a batch.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { WEBHOOK_RETRY_SCHEDULE_MS } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { failPendingDeliveries } from '../modules/webhook-endpoints/webhook-endpoints.repo.ts';
import { type AttemptResult, createWebhookSender, type WebhookSender } from './webhook-http.ts';
import type { WorkerTask } from './worker.ts';

export interface WebhookDelivererOptions {
  /** Delays before each retry (decisions §11; WEBHOOK_RETRY_SCHEDULE_MS). */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** How long a claim holds a row; at least the attempt's deadline plus a margin. */
  leaseMs: number;
  /** Attempts in flight in this process. */
  concurrency: number;
  /** Attempts in flight per endpoint, per claim. */
  perEndpointConcurrency: number;
  batchSize: number;
  /** decisions §11: an endpoint whose attempts have all failed for this long is disabled (`failing`). */
  failingDisableAfterMs: number;
  pollMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERER_OPTIONS: WebhookDelivererOptions = {
  retryScheduleMs: WEBHOOK_RETRY_SCHEDULE_MS,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  concurrency: 32,
  perEndpointConcurrency: 4,
  batchSize: 32,
  failingDisableAfterMs: 5 * 24 * 60 * 60 * 1000,
  pollMs: 200,
};

export type DeliveryOutcome = 'succeeded' | 'retry' | 'failed';

export interface WebhookDelivererDeps {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_HOSTS, applied again at connect time. */
  allowHosts: readonly string[];
  options?: Partial<WebhookDelivererOptions>;
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

interface ClaimedDelivery {
  org_id: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  attempt_limit: number | null;
  url: string;
  secret: string;
  previous_secret: string | null;
  payload: string;
  lease_token: string;
  /** The endpoint had failed attempts since its last success when claimed. */
  endpoint_failing: boolean;
}

const DEPTH_INTERVAL_MS = 5000;

export function createWebhookDeliverer(deps: WebhookDelivererDeps): WebhookDeliverer {
  const options = { ...DEFAULT_WEBHOOK_DELIVERER_OPTIONS, ...deps.options };
  const { db, log } = deps;
  const leaseMs = Math.max(options.leaseMs, options.timeoutMs + 5000);
  const refillAt = Math.max(1, Math.floor(options.concurrency / 4));
  const sender: WebhookSender = createWebhookSender({ allowHosts: deps.allowHosts, timeoutMs: options.timeoutMs });

  async function claim(limit: number): Promise<ClaimedDelivery[]> {
    const token = randomUUID();
    const result = await sql<ClaimedDelivery>`
      with recursive pending_endpoints as (
        -- Each endpoint with pending deliveries, found by skipping through the per-endpoint index: the cost follows
        -- the number of such endpoints, not the size of the backlog.
        (select org_id, endpoint_id from webhook_deliveries where status = 'pending'
          order by org_id, endpoint_id limit 1)
        union all
        select n.org_id, n.endpoint_id from pending_endpoints p
        cross join lateral (
          select d.org_id, d.endpoint_id from webhook_deliveries d
          where d.status = 'pending' and (d.org_id, d.endpoint_id) > (p.org_id, p.endpoint_id)
          order by d.org_id, d.endpoint_id limit 1
        ) n
      ),
      ready as (
        -- The endpoints with something due, the longest-waiting first.
        select p.org_id, p.endpoint_id, due.at as due
        from pending_endpoints p
        cross join lateral (
          select min(d.next_attempt_at) as at from webhook_deliveries d
          where d.org_id = p.org_id and d.endpoint_id = p.endpoint_id and d.status = 'pending'
            and d.next_attempt_at <= now()
        ) due
        where due.at is not null
        order by due.at
        limit ${Math.max(limit * 4, 64)}
      ),
      picked as (
        select d.org_id, d.id
        from ready r
        cross join lateral (
          select e.id from webhook_endpoints e
          where e.org_id = r.org_id and e.id = r.endpoint_id and e.enabled
          for no key update skip locked
        ) e
        cross join lateral (
          select d.org_id, d.id from webhook_deliveries d
          where d.org_id = r.org_id and d.endpoint_id = r.endpoint_id
            and d.status = 'pending' and d.next_attempt_at <= now()
          order by d.next_attempt_at
          limit greatest(0, ${options.perEndpointConcurrency} - (
            select count(*) from webhook_deliveries f
            where f.org_id = r.org_id and f.endpoint_id = r.endpoint_id and f.status = 'pending'
              and f.lease_token is not null and f.next_attempt_at > now()))
          for update skip locked
        ) d
        order by r.due
        limit ${limit}
      )
      update webhook_deliveries w
      set lease_token = ${token}, next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}),
        updated_at = now()
      from picked p, webhook_endpoints e, webhook_events ev
      where w.org_id = p.org_id and w.id = p.id
        and e.org_id = w.org_id and e.id = w.endpoint_id
        and ev.org_id = w.org_id and ev.id = w.event_id
      returning w.org_id, w.id, w.endpoint_id, w.event_id, w.attempts, w.attempt_limit, w.lease_token, e.url,
        e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
        ev.payload, e.failing_since is not null as endpoint_failing
    `.execute(db);
    return result.rows;
  }

  /** Records an attempt's result under the claim's lease; a lost lease (another worker took over) records nothing. */
  async function record(row: ClaimedDelivery, result: AttemptResult): Promise<DeliveryOutcome | undefined> {
    const attempts = row.attempts + 1;
    const ok = result.error === null;
    const gone = result.statusCode === 410;
    const limit = row.attempt_limit ?? options.retryScheduleMs.length + 1;
    const outcome: DeliveryOutcome = ok ? 'succeeded' : gone || attempts >= limit ? 'failed' : 'retry';
    const delayMs = options.retryScheduleMs[attempts - 1] ?? 0;
    // The common case, a success at an endpoint that was not failing, is one statement.
    const simple = ok && !row.endpoint_failing;
    const write = (work: (trx: Kysely<DB>) => Promise<DeliveryOutcome | undefined>) =>
      simple ? work(db) : db.transaction().execute(work);
    return write(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: outcome === 'retry' ? 'pending' : outcome,
          attempts,
          last_status_code: result.statusCode,
          last_error: result.error,
          lease_token: null,
          next_attempt_at:
            outcome === 'retry' ? sql`now() + make_interval(secs => ${delayMs / 1000})` : sql`next_attempt_at`,
          updated_at: sql`now()`,
        })
        .where('org_id', '=', row.org_id)
        .where('id', '=', row.id)
        .where('lease_token', '=', row.lease_token)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return undefined;
      const endpoint = trx
        .updateTable('webhook_endpoints')
        .where('org_id', '=', row.org_id)
        .where('id', '=', row.endpoint_id);
      if (ok) {
        if (row.endpoint_failing) {
          await endpoint.set({ failing_since: null }).where('failing_since', 'is not', null).execute();
        }
        return outcome;
      }
      const failing = await endpoint
        .set({ failing_since: sql`coalesce(failing_since, now())` })
        .returning([
          'enabled',
          sql<boolean>`failing_since <= now() - make_interval(secs => ${options.failingDisableAfterMs / 1000})`.as(
            'expired',
          ),
        ])
        .executeTakeFirst();
      // decisions §11: a 410 disables the endpoint; so do five days of nothing but failures.
      const reason = gone ? 'gone' : failing?.expired ? 'failing' : null;
      if (reason && failing?.enabled) {
        await endpoint.set({ enabled: false, disabled_reason: reason, updated_at: sql`now()` }).execute();
        await failPendingDeliveries(trx, row.org_id, row.endpoint_id);
        log.warn({ endpoint: row.endpoint_id, reason }, 'webhook endpoint disabled');
      }
      return outcome;
    });
  }

  async function attempt(row: ClaimedDelivery): Promise<void> {
    const secrets = [row.secret, ...(row.previous_secret ? [row.previous_secret] : [])];
    const result = await sender.send({ url: row.url, eventId: row.event_id, body: row.payload, secrets });
    const outcome = await record(row, result);
    if (outcome) deps.onOutcome?.(outcome);
  }

  let stopped = false;
  let claiming = false;
  const inFlight = new Set<Promise<void>>();

  function start(row: ClaimedDelivery, refill: boolean): Promise<void> {
    const run = attempt(row)
      .catch((error: unknown) => {
        // The lease runs out and the delivery is attempted again.
        log.error({ err: error, delivery: row.id }, 'webhook delivery failed to record');
      })
      .finally(() => {
        inFlight.delete(run);
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
        const claimed = await claim(free);
        for (const row of claimed) start(row, true);
        if (claimed.length < free) return;
      }
    } catch (error) {
      log.error({ err: error }, 'claiming webhook deliveries failed');
    } finally {
      claiming = false;
    }
  }

  async function pendingDepth(): Promise<number> {
    const row = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  let depthMeasuredAt = 0;
  return {
    async runOnce() {
      const claimed = await claim(Math.min(options.batchSize, options.concurrency));
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
          deps.onPendingDepth(await pendingDepth());
        }
      },
    },
    pendingDepth,
    async stop() {
      stopped = true;
      await Promise.all(inFlight);
      sender.close();
    },
  };
}

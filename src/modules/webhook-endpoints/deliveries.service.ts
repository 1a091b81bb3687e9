// One delivery attempt, from claim to record (decisions §11): claim due rows under a lease, POST each in the
// Standard Webhooks format, and record the answer under the same lease with the rules of delivery-rules.ts. The
// worker's loop (worker/webhook-deliveries.ts) decides only when and how many.

import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { CONFLICT_RETRIES, isTransientConflict, transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB, DeliveryAttempt } from '../../db/schema.ts';
import { type Keyring, SecretsKeyError } from '../../lib/secrets-box.ts';
import * as repo from './deliveries.repo.ts';
import { createWebhookSender } from './delivery-http.ts';
import { type AttemptAnswer, type DeliveryOutcome, disableReasonOf, outcomeOf } from './delivery-rules.ts';
import { openSecrets } from './endpoint-secrets.ts';

export interface DeliveryOptions {
  /** Delays before each retry (decisions §11; WEBHOOK_RETRY_SCHEDULE_MS). */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** How long a kept-alive connection may stay idle before we close it. */
  idleSocketMs: number;
  /** How long a claim holds a row; at least the attempt's deadline plus a margin. */
  leaseMs: number;
  /** Attempts in flight per endpoint, per claim. */
  perEndpointConcurrency: number;
  /** decisions §11: an endpoint whose attempts have all failed for this long is disabled (`failing`). */
  failingDisableAfterMs: number;
}

export type ClaimedDelivery = repo.ClaimedDelivery;

/** Finished attempts recorded by one statement at most. */
const RECORD_GROUP_MOST = 256;

interface Finished extends repo.Recorded {
  outcome: DeliveryOutcome;
  statusCode: number | null;
  resolve: (outcome: DeliveryOutcome | undefined) => void;
  reject: (error: unknown) => void;
}

/** Runs one statement again when PostgreSQL chose it as a deadlock's victim (D74): it wrote nothing. */
async function retryOnConflict<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (!isTransientConflict(error) || attempt > CONFLICT_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/** Endpoints whose opened secrets a process keeps (more: it starts over). */
const OPENED_SECRETS_KEPT = 1000;

export function createDeliveryService(deps: {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** WEBHOOK_ALLOW_HOSTS, applied again at connect time. */
  allowHosts: readonly string[];
  /** Opens the endpoints' signing secrets. */
  keyring: Keyring;
  options: DeliveryOptions;
}) {
  const { db, log, options } = deps;
  const leaseMs = Math.max(options.leaseMs, options.timeoutMs + 5000);
  const sender = createWebhookSender({
    allowHosts: deps.allowHosts,
    timeoutMs: options.timeoutMs,
    idleSocketMs: options.idleSocketMs,
  });

  // Finished attempts are recorded in groups (D297): while one group's statement runs, the attempts that finish
  // meanwhile wait for the next, so a group is whatever finished during one round trip, and no attempt waits for a
  // group to fill. A worker killed before its group is recorded loses nothing: the rows' leases run out and they
  // are attempted again (at least once), as when it is killed mid-request.
  const waiting: Finished[] = [];
  let recording = false;

  /** Records an attempt's answer under the claim's lease; undefined when the lease was lost (another worker took over). */
  function record(row: ClaimedDelivery, answer: AttemptAnswer, attempt: DeliveryAttempt) {
    const attempts = row.attempts + 1;
    const { outcome, retryInMs } = outcomeOf(answer, attempts, row.attempt_limit, options.retryScheduleMs);
    const record: repo.AttemptRecord = {
      attempt,
      status: outcome === 'retry' ? 'pending' : outcome,
      attempts,
      statusCode: answer.statusCode,
      error: answer.error,
      retryInMs,
    };
    return new Promise<DeliveryOutcome | undefined>((resolve, reject) => {
      waiting.push({ row, record, outcome, statusCode: answer.statusCode, resolve, reject });
      if (!recording) {
        recording = true;
        // After this turn's other answers, so that they join the group.
        setImmediate(recordWaiting);
      }
    });
  }

  async function recordWaiting() {
    while (waiting.length > 0) {
      const group = waiting.splice(0, RECORD_GROUP_MOST);
      const byOrganization = Map.groupBy(group, (item) => item.row.org_id);
      await Promise.all(
        [...byOrganization].map(async ([orgId, items]) => {
          try {
            const recorded = await recordGroup(orgId, items);
            for (const item of items) item.resolve(recorded.has(item.row.id) ? item.outcome : undefined);
          } catch (error) {
            for (const item of items) item.reject(error);
          }
        }),
      );
    }
    recording = false;
  }

  /**
   * One organization's finished attempts. Successes at endpoints that were not failing, the common case, are one
   * statement; the attempts at an endpoint with a failure in the group, or failing when claimed, are recorded with
   * the endpoint's failing state in one transaction, retried as a deadlock's victim (D74), in the order they ended.
   */
  async function recordGroup(orgId: string, items: Finished[]): Promise<Set<string>> {
    const eventful = new Set(
      items.filter((item) => item.outcome !== 'succeeded' || item.row.endpoint_failing).map((i) => i.row.endpoint_id),
    );
    const plain = items.filter((item) => !eventful.has(item.row.endpoint_id));
    const rest = items.filter((item) => eventful.has(item.row.endpoint_id));
    const [recorded, recordedRest] = await Promise.all([
      plain.length > 0 ? retryOnConflict(() => repo.recordAttempts(db, orgId, plain)) : new Set<string>(),
      rest.length > 0 ? transactionWithRetry(db, (trx) => recordWithEndpoints(trx, orgId, rest)) : new Set<string>(),
    ]);
    for (const id of recordedRest) recorded.add(id);
    return recorded;
  }

  async function recordWithEndpoints(trx: Transaction<DB>, orgId: string, items: Finished[]) {
    const recorded = await repo.recordAttempts(trx, orgId, items);
    for (const item of items) {
      if (!recorded.has(item.row.id)) continue;
      const endpointId = item.row.endpoint_id;
      if (item.outcome === 'succeeded') {
        await repo.clearEndpointFailing(trx, orgId, endpointId);
        continue;
      }
      const failing = await repo.markEndpointFailing(trx, orgId, endpointId);
      const reason =
        failing && disableReasonOf(item.statusCode, failing.failing_since, failing.now, options.failingDisableAfterMs);
      if (reason && failing?.enabled) {
        await repo.disableEndpoint(trx, orgId, endpointId, reason);
        log.warn({ endpoint: endpointId, reason }, 'webhook endpoint disabled');
      }
    }
    return recorded;
  }

  // Endpoints' secrets as opened, by what is stored: a rotation or a reseal stores new text, so a new entry. Opening
  // (AES-GCM under the keyring's key) took 6 % of a delivering worker's CPU when done for every attempt.
  const openedSecrets = new Map<string, { secret: string; previous: string | null }>();
  function secretsOf(row: ClaimedDelivery) {
    const key = `${row.org_id}\n${row.endpoint_id}\n${row.secrets_key_id}\n${row.secret}\n${row.previous_secret}`;
    let opened = openedSecrets.get(key);
    if (!opened) {
      opened = openSecrets(deps.keyring, row.org_id, row.endpoint_id, row);
      if (openedSecrets.size >= OPENED_SECRETS_KEPT) openedSecrets.clear();
      openedSecrets.set(key, opened);
    }
    return opened;
  }

  /** Signs with the endpoint's secrets, opened here; a secret this process cannot open fails the attempt unsent. */
  async function send(row: ClaimedDelivery): Promise<AttemptAnswer> {
    let opened: { secret: string; previous: string | null };
    try {
      opened = secretsOf(row);
    } catch (error) {
      if (!(error instanceof SecretsKeyError)) throw error;
      log.error(
        { err: error, endpoint: row.endpoint_id },
        'webhook signing secret cannot be opened: check SECRETS_KEY',
      );
      return { statusCode: null, error: 'signing secret unavailable (SECRETS_KEY)' };
    }
    const secrets = [opened.secret, ...(opened.previous ? [opened.previous] : [])];
    return sender.send({ url: row.url, eventId: row.event_id, body: row.payload, secrets });
  }

  return {
    /** Claims up to `limit` due deliveries (of which at most `bulkLimit` bulk ones), a few per endpoint and lane. */
    claim: (limit: number, bulkLimit = limit) =>
      repo.claimDeliveries(db, {
        token: randomUUID(),
        limit,
        bulkLimit,
        perEndpoint: options.perEndpointConcurrency,
        leaseMs,
      }),

    /** Attempts one claimed delivery and records the answer; undefined when the lease was lost meanwhile. */
    async attempt(row: ClaimedDelivery): Promise<DeliveryOutcome | undefined> {
      const started = performance.now();
      const attemptedAt = new Date().toISOString();
      const answer = await send(row);
      const duration = Math.round(performance.now() - started);
      return record(row, answer, {
        attempted_at: attemptedAt,
        duration_ms: duration,
        status_code: answer.statusCode,
        error: answer.error,
      });
    },

    pendingDepth: () => repo.countPendingDeliveries(db),

    /** Closes the kept-alive connections. */
    close: () => sender.close(),
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;

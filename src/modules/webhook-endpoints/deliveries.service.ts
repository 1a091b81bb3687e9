// One delivery attempt, from claim to record (decisions §11): claim due rows under a lease, POST each in the
// Standard Webhooks format, and record the answer under the same lease with the rules of delivery-rules.ts. The
// worker's loop (worker/webhook-deliveries.ts) decides only when and how many.

import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
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

  /** Records an attempt's answer under the claim's lease; a lost lease (another worker took over) records nothing. */
  async function record(row: ClaimedDelivery, answer: AttemptAnswer, attempt: DeliveryAttempt) {
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
    // The common case, a success at an endpoint that was not failing, is one statement.
    if (outcome === 'succeeded' && !row.endpoint_failing) {
      return (await repo.recordAttempt(db, row, record)) ? outcome : undefined;
    }
    // The attempt and its endpoint's failing state: retried as a deadlock's victim (D74).
    return transactionWithRetry(db, async (trx) => {
      if (!(await repo.recordAttempt(trx, row, record))) return undefined;
      if (outcome === 'succeeded') {
        await repo.clearEndpointFailing(trx, row.org_id, row.endpoint_id);
        return outcome;
      }
      const failing = await repo.markEndpointFailing(trx, row.org_id, row.endpoint_id);
      const reason =
        failing &&
        disableReasonOf(answer.statusCode, failing.failing_since, failing.now, options.failingDisableAfterMs);
      if (reason && failing?.enabled) {
        await repo.disableEndpoint(trx, row.org_id, row.endpoint_id, reason);
        log.warn({ endpoint: row.endpoint_id, reason }, 'webhook endpoint disabled');
      }
      return outcome;
    });
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

// One delivery attempt, from claim to record (decisions §11): claim due rows under a lease, POST each in the
// Standard Webhooks format, and record the answer under the same lease with the rules of delivery-rules.ts. The
// worker's loop (worker/webhook-deliveries.ts) decides only when and how many.

import { type KeyObject, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { CONFLICT_RETRIES, isTransientConflict, transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB, DeliveryAttempt } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import { type Keyring, SecretsKeyError } from '../../lib/secrets-box.ts';
import * as repo from './deliveries.repo.ts';
import { createWebhookSender, signingKey } from './delivery-http.ts';
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

/** An attempt made, to record: its claimed row, what became of it, and the answer's status. */
export interface FinishedAttempt extends repo.Recorded {
  outcome: DeliveryOutcome;
  statusCode: number | null;
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

/** The finished attempts of each organization, in the order they ended. */
function byOrg(finished: readonly FinishedAttempt[]): Map<string, FinishedAttempt[]> {
  const groups = new Map<string, FinishedAttempt[]>();
  for (const item of finished) {
    const group = groups.get(item.row.org_id);
    if (group) group.push(item);
    else groups.set(item.row.org_id, [item]);
  }
  return groups;
}

/** How old the list of organizations with due deliveries may get before a claim searches again (D342). */
const DUE_ORGS_EVERY_MS = 250;

/** Rows an endpoint's lane a worker may hold leased, in multiples of the attempts in flight it allows (D364). */
export const LEASED_AHEAD = 2;

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

  /** What an attempt's answer makes of the delivery, to record under the claim's lease. */
  function finish(row: ClaimedDelivery, answer: AttemptAnswer, attempt: DeliveryAttempt): FinishedAttempt {
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
    return { row, record, outcome, statusCode: answer.statusCode };
  }

  // The organizations with due deliveries, as last found (D342): a claim visits them in turn, starting one further
  // each time, an even share each (lib/fair-claims.ts). A poll's claim (`claim`) searches first (an idle poll: one
  // statement, as the claim was); the claim that refills a recorded group's slots searches again when the list is
  // empty or DUE_ORGS_EVERY_MS old, and visits the organizations of the attempts it records too (after the others),
  // so a busy one's freed slots are refilled without a search.
  let dueOrgs: string[] = [];
  let dueOrgsFoundAt = Number.NEGATIVE_INFINITY;
  let turn = 0;
  async function orgsToClaim(fresh: boolean): Promise<string[]> {
    if (fresh || dueOrgs.length === 0 || performance.now() - dueOrgsFoundAt >= DUE_ORGS_EVERY_MS) {
      dueOrgs = await repo.findDueOrgs(db);
      dueOrgsFoundAt = performance.now();
    }
    if (dueOrgs.length < 2) return dueOrgs;
    const start = turn++ % dueOrgs.length;
    return [...dueOrgs.slice(start), ...dueOrgs.slice(0, start)];
  }

  /**
   * Records finished attempts (D297) and, when `claim` is given, claims more in the same round trips (D298), one
   * organization per statement (D342). Successes at endpoints that were not failing, the common case, ride in the
   * claim of their organization; the attempts at an endpoint with a failure in the group, or failing when claimed,
   * are recorded with the endpoint's failing state in one transaction per organization beside it, retried as a
   * deadlock's victim (D74), in the order they ended. Answers the ids recorded (a lost lease records nothing) and
   * the rows claimed.
   */
  async function recordAndClaim(
    finished: readonly FinishedAttempt[],
    claim?: { limit: number; bulkLimit: number; fresh?: boolean },
  ) {
    const eventful = new Set(
      finished
        .filter((item) => item.outcome !== 'succeeded' || item.row.endpoint_failing)
        .map((i) => i.row.endpoint_id),
    );
    const plain = byOrg(finished.filter((item) => !eventful.has(item.row.endpoint_id)));
    const rest = byOrg(finished.filter((item) => eventful.has(item.row.endpoint_id)));
    const recorded = new Set<string>();
    const [claimed] = await Promise.all([
      (async () => {
        const visited = new Set<string>();
        let rows: ClaimedDelivery[] = [];
        if (claim) {
          const found = await orgsToClaim(claim.fresh === true);
          const orgs = [...found, ...[...plain.keys()].filter((org) => !found.includes(org))];
          let bulkLeft = claim.bulkLimit;
          rows = await claimFairly(orgs, claim.limit, async (orgId, max) => {
            visited.add(orgId);
            const result = await retryOnConflict(() =>
              repo.recordAndClaim(db, {
                ...claimInput(orgId, max, Math.min(max, bulkLeft)),
                recorded: plain.get(orgId) ?? [],
              }),
            );
            for (const id of result.recorded) recorded.add(id);
            for (const row of result.claimed) if (row.lane !== 0) bulkLeft--;
            return result.claimed;
          });
        }
        await Promise.all(
          [...plain]
            .filter(([orgId]) => !visited.has(orgId))
            .map(async ([orgId, group]) => {
              for (const id of await retryOnConflict(() => repo.recordAttempts(db, orgId, group))) recorded.add(id);
            }),
        );
        return rows;
      })(),
      ...[...rest].map(async ([orgId, group]) => {
        for (const id of await transactionWithRetry(db, (trx) => recordWithEndpoints(trx, orgId, group)))
          recorded.add(id);
      }),
    ]);
    return { claimed, recorded };
  }

  async function recordWithEndpoints(trx: Transaction<DB>, orgId: string, finished: FinishedAttempt[]) {
    const recorded = await repo.recordAttempts(trx, orgId, finished);
    for (const item of finished) {
      if (!recorded.has(item.row.id)) continue;
      const { endpoint_id: endpointId } = item.row;
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

  // D364: this process's leases carry its id, so that its claims leave another worker's endpoints alone and lease
  // ahead of their own: up to LEASED_AHEAD times the allowance per endpoint and lane, the worker sending at most the
  // allowance at once (worker/webhook-deliveries.ts), the next attempt starting as one ends, not after its record.
  const workerId = randomUUID();
  let claims = 0;
  const claimInput = (orgId: string, limit: number, bulkLimit: number) => ({
    orgId,
    token: `${workerId}.${++claims}`,
    limit,
    bulkLimit,
    perEndpoint: options.perEndpointConcurrency * LEASED_AHEAD,
    leaseMs,
  });

  // Endpoints' secrets as opened, by what is stored: a rotation or a reseal stores new text, so a new entry. Opening
  // (AES-GCM under the keyring's key) took 6 % of a delivering worker's CPU when done for every attempt.
  // Kept as the signing keys themselves (D300), decoded once rather than for every attempt.
  const openedSecrets = new Map<string, KeyObject[]>();
  function secretsOf(row: ClaimedDelivery) {
    const key = `${row.org_id}\n${row.endpoint_id}\n${row.secrets_key_id}\n${row.secret}\n${row.previous_secret}`;
    let opened = openedSecrets.get(key);
    if (!opened) {
      const { secret, previous } = openSecrets(deps.keyring, row.org_id, row.endpoint_id, row);
      opened = [signingKey(secret), ...(previous ? [signingKey(previous)] : [])];
      if (openedSecrets.size >= OPENED_SECRETS_KEPT) openedSecrets.clear();
      openedSecrets.set(key, opened);
    }
    return opened;
  }

  /** Signs with the endpoint's secrets, opened here; a secret this process cannot open fails the attempt unsent. */
  async function send(row: ClaimedDelivery): Promise<AttemptAnswer> {
    let secrets: KeyObject[];
    try {
      secrets = secretsOf(row);
    } catch (error) {
      if (!(error instanceof SecretsKeyError)) throw error;
      log.error(
        { err: error, endpoint: row.endpoint_id },
        'webhook signing secret cannot be opened: check SECRETS_KEY',
      );
      return { statusCode: null, error: 'signing secret unavailable (SECRETS_KEY)' };
    }
    return sender.send({ url: row.url, eventId: row.event_id, body: row.payload, secrets });
  }

  return {
    /** Claims up to `limit` due deliveries (of which at most `bulkLimit` bulk ones), a few per endpoint and lane. */
    claim: async (limit: number, bulkLimit = limit) =>
      (await recordAndClaim([], { limit, bulkLimit, fresh: true })).claimed,

    /** Attempts one claimed delivery: what to record (recordAndClaim). */
    async attempt(row: ClaimedDelivery): Promise<FinishedAttempt> {
      const started = performance.now();
      const attemptedAt = new Date().toISOString();
      const answer = await send(row);
      const duration = Math.round(performance.now() - started);
      return finish(row, answer, {
        attempted_at: attemptedAt,
        duration_ms: duration,
        status_code: answer.statusCode,
        error: answer.error,
      });
    },

    recordAndClaim,

    /** How long a claim holds its rows (an attempt starts only while its lease outlasts it, D364). */
    leaseMs,

    pendingDepth: () => repo.countPendingDeliveries(db),

    /** Closes the kept-alive connections. */
    close: () => sender.close(),
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;

// The fan-out loop: broadcast recipient rows are the queue. A worker claims a batch (SKIP LOCKED, leased, paid for),
// and hands it off in small groups: mark the group, call the platform for each of its rows at once, record the
// group's answers in one transaction. Any number of workers share the queue; a worker that dies leaves leases that
// expire:
// - claimed but never marked: claimed again by anyone (nothing was sent; the reservation is given back first);
// - marked with no recorded answer: never sent again. A status webhook carrying our callback reference settles it;
//   if none arrives within `reconcileAfterMs`, it fails as `handoff_unconfirmed` and is refunded.
// Every step's SQL is a named step of the queue engine (modules/recipients/: the claim, the hand-offs, the
// reconciler's fail of unconfirmed hand-offs), imported from the step's own file; this file keeps only the loop.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { FANOUT_DEFAULTS } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { groupBy } from '../lib/group-by.ts';
import type { MessagingPlatform, SendComponent, SendResult } from '../messaging/platform.ts';
import type { BroadcastMoves } from '../modules/recipients/broadcast-moves.ts';
import type { ClaimedRow } from '../modules/recipients/claim-charge.ts';
import { claimRecipients, dueOrganizations } from '../modules/recipients/recipient-claim.ts';
import { finishEndedBroadcasts, organizationsWithOpenBroadcasts } from '../modules/recipients/recipient-events.ts';
import { type HandoffOutcome, recordOutcomes } from '../modules/recipients/recipient-handoffs.ts';
import { callbackReference, type RetryPolicy, verdictOf } from '../modules/recipients/recipient-rules.ts';
import { failUnconfirmed } from '../modules/recipients/recipients.repo.ts';
import { renderedBody } from '../modules/templates/rendered-body.ts';
import { findTemplateComponents } from '../modules/templates/templates.repo.ts';

export interface FanoutOptions extends RetryPolicy {
  batchSize: number;
  /** Hand-offs in flight per batch: caps the group size. */
  concurrency: number;
  /**
   * Rows marked, sent and recorded together, one group of a batch at a time: the most a killed worker can leave
   * with an unknown outcome per batch in flight.
   */
  groupSize: number;
  leaseMs: number;
  /** Per connected number; null lifts the cap. */
  perNumberPerSecond: number | null;
  reconcileAfterMs: number;
}

export const DEFAULT_FANOUT_OPTIONS: FanoutOptions = FANOUT_DEFAULTS;

/** Templates whose components a worker keeps (then it starts over). */
const TEMPLATE_CACHE_SIZE = 1_000;

export type HandoffMetric = 'sent' | 'failed' | 'retry' | 'uncertain';

export interface FanoutDeps {
  db: Kysely<DB>;
  platform: MessagingPlatform;
  /** The broadcasts' owner's writes of the queue's moves (a stop, a pause, an end; D349), given by the wiring. */
  moves: BroadcastMoves;
  log: FastifyBaseLogger;
  options?: Partial<FanoutOptions>;
  /** Counts hand-offs by outcome (the process's metrics). */
  onOutcome?: (outcome: HandoffMetric) => void;
}

export interface Fanout {
  /** Claims and hands off one batch; returns how many recipients it handled. */
  runOnce(): Promise<number>;
  /** Settles hand-offs whose answer was lost and that no webhook settled in time. */
  reconcile(): Promise<number>;
  /** How long a hand-off waits for its report before `reconcile` fails it (the reconciler's schedule follows it). */
  reconcileAfterMs: number;
  /** D359: finishes broadcasts that ended unseen (two moves of their last rows, each seeing the other's pending). */
  finishEnded(): Promise<number>;
}

const METRIC: Record<HandoffOutcome['verdict']['kind'], HandoffMetric> = {
  accepted: 'sent',
  refused: 'failed',
  retry: 'retry',
  uncertain: 'uncertain',
};

function chunks<T>(items: T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** A batch's groups: each organization's rows in chunks of `size` (D318: a group is one organization's). */
const groupsOf = (rows: ClaimedRow[], size: number) =>
  [...groupBy(rows, (row) => row.org_id).values()].flatMap((ofOrg) => chunks(ofOrg, size));

/**
 * How long a worker keeps the organizations with due recipients it found (D318) before it looks again, so that the
 * look costs once a second, not once a batch; a claim that finds less than it asked for looks again at once.
 */
const DUE_ORGANIZATIONS_MS = 1_000;

export function createFanout(deps: FanoutDeps): Fanout {
  const options = { ...DEFAULT_FANOUT_OPTIONS, ...deps.options };
  const { db, platform, log, moves } = deps;
  const groupSize = Math.max(1, Math.min(options.groupSize, options.concurrency));

  async function send(row: ClaimedRow): Promise<SendResult> {
    try {
      return await platform.sendTemplate({
        phoneNumberId: row.phone_number_id,
        to: row.phone,
        templateName: row.template_name,
        language: row.template_language,
        components: row.send_components as SendComponent[],
        callbackData: callbackReference(row.org_id, row.broadcast_id, row.position),
      });
    } catch (error) {
      // An adapter that throws has not told us whether the platform took the message.
      return { ok: false, reason: 'platform_error', retryable: false, uncertain: true, message: String(error) };
    }
  }

  // Templates' components never change once created: each is read once per worker, for the text of its messages.
  const bodies = new Map<string, readonly Record<string, unknown>[]>();
  async function loadBodies(group: ClaimedRow[]): Promise<void> {
    const missing = group.filter((row) => !bodies.has(`${row.org_id} ${row.template_id}`));
    for (const [orgId, rows] of groupBy(missing, (row) => row.org_id)) {
      if (bodies.size >= TEMPLATE_CACHE_SIZE) bodies.clear();
      const ids = [...new Set(rows.map((row) => row.template_id))];
      for (const found of await findTemplateComponents(db, orgId, ids))
        bodies.set(`${orgId} ${found.id}`, found.components);
    }
  }
  const textOf = (row: ClaimedRow) => {
    const components = bodies.get(`${row.org_id} ${row.template_id}`);
    return components ? renderedBody(components, row.send_components as SendComponent[]) : null;
  };

  /** Sends a marked group; answers its outcomes, with the text each message carried (D240). */
  async function handOff(group: ClaimedRow[]): Promise<HandoffOutcome[]> {
    await loadBodies(group).catch((error: unknown) => log.warn({ err: error }, 'template bodies not read'));
    const outcomes = await Promise.all(
      group.map(async (row) => ({
        row,
        verdict: verdictOf(await send(row), row.attempts, options),
        text: textOf(row),
      })),
    );
    for (const { row, verdict } of outcomes) {
      deps.onOutcome?.(METRIC[verdict.kind]);
      if (verdict.kind === 'uncertain') {
        // Unknown outcome: kept in `sending` with its hand-off mark; a webhook or the reconciler settles it.
        log.warn(
          { broadcast: row.broadcast_id, position: row.position, reason: verdict.reason },
          'hand-off outcome unknown',
        );
      }
    }
    return outcomes;
  }

  let due: { orgs: Promise<string[]>; at: number } | undefined;
  const dueOrgs = () => {
    if (!due || performance.now() - due.at > DUE_ORGANIZATIONS_MS) {
      const orgs = dueOrganizations(db, options.batchSize);
      due = { orgs, at: performance.now() };
      orgs.catch(() => {
        due = undefined;
      });
    }
    return due.orgs;
  };

  return {
    async runOnce() {
      // The claim marks the first group; each group's record marks the next: one group of the batch is in flight
      // at a time, so a killed worker leaves at most `groupSize` rows per batch with an unknown outcome.
      const claimed = await claimRecipients(db, {
        limit: options.batchSize,
        leaseMs: options.leaseMs,
        token: randomUUID(),
        perNumberPerSecond: options.perNumberPerSecond,
        markFirst: groupSize,
        orgs: await dueOrgs(),
        moves,
      });
      if (claimed.length < options.batchSize) due = undefined;
      const groups = groupsOf(claimed, groupSize);
      let marked = groups[0] ?? [];
      for (let index = 0; index < groups.length; index++) {
        const next = groups[index + 1] ?? [];
        try {
          marked = await recordOutcomes(db, moves, await handOff(marked), next);
        } catch (error) {
          // The leases will expire: unmarked rows are claimed again, marked ones settled by report or reconciler.
          log.error({ err: error, broadcast: groups[index]?.[0]?.broadcast_id }, 'hand-off group failed');
          break;
        }
      }
      return claimed.length;
    },

    reconcile: () => failUnconfirmed(db, moves, options.reconcileAfterMs),
    reconcileAfterMs: options.reconcileAfterMs,
    finishEnded: async () => {
      let finished = 0;
      for (const orgId of await organizationsWithOpenBroadcasts(db)) {
        finished += await finishEndedBroadcasts(db, moves, orgId); // D318: one organization's statements at a time
      }
      return finished;
    },
  };
}

// The fan-out: broadcast recipient rows are the queue. A worker claims a batch (FOR UPDATE SKIP LOCKED, with a
// lease), charges each message, marks each hand-off just before calling the platform, and records the answer.
// Any number of workers can share the queue; a worker that dies leaves leases that expire:
// - claimed but never handed off: claimed again by anyone (nothing was sent);
// - handed off with no recorded answer: never sent again. A status webhook carrying our callback reference
//   settles it; if none arrives within `reconcileAfterMs`, it fails as `handoff_unconfirmed` and is refunded.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { MessagingPlatform, SendComponent, SendResult } from '../messaging/platform.ts';
import {
  callbackReference,
  updateContactReachability,
  updateRecipient,
} from '../modules/broadcasts/recipient-status.ts';
import { type ClaimedRow, chargeClaims, claimBatch } from './fanout-claim.ts';

export interface FanoutOptions {
  batchSize: number;
  concurrency: number;
  leaseMs: number;
  /** Per connected number; null lifts the cap. */
  perNumberPerSecond: number | null;
  reconcileAfterMs: number;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_FANOUT_OPTIONS: FanoutOptions = {
  batchSize: 50,
  concurrency: 16,
  leaseMs: 60_000,
  perNumberPerSecond: 80,
  reconcileAfterMs: 15 * 60_000,
  maxAttempts: 8,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60_000,
};

/** The recipient as recorded after an accepted hand-off (a status report may have moved it on already). */
export interface SettledRecipient {
  status: string;
  delivered_at: Date | null;
  read_at: Date | null;
}

/** Called in the transaction that records an accepted hand-off (the conversation history hooks in here). */
export type AcceptedHook = (
  trx: Transaction<DB>,
  row: ClaimedRow,
  platformMessageId: string,
  recipient: SettledRecipient,
) => Promise<void>;

export interface FanoutDeps {
  db: Kysely<DB>;
  platform: MessagingPlatform;
  log: FastifyBaseLogger;
  options?: Partial<FanoutOptions>;
  onAccepted?: AcceptedHook;
  /** Counts hand-offs by outcome (the process's metrics). */
  onOutcome?: (outcome: 'sent' | 'failed' | 'retry' | 'uncertain') => void;
}

export interface Fanout {
  /** Claims and hands off one batch; returns how many recipients it handled. */
  runOnce(): Promise<number>;
  /** Settles hand-offs whose answer was lost and that no webhook settled in time. */
  reconcile(): Promise<number>;
}

export function backoffMs(attempt: number, options: FanoutOptions): number {
  const exponential = Math.min(options.backoffMaxMs, options.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential / 2 + Math.random() * (exponential / 2));
}

async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(runners);
}

export function createFanout(deps: FanoutDeps): Fanout {
  const options = { ...DEFAULT_FANOUT_OPTIONS, ...deps.options };
  const { db, platform, log } = deps;
  async function refund(
    trx: Transaction<DB>,
    row: Pick<ClaimedRow, 'org_id' | 'account_id' | 'charged'>,
  ): Promise<void> {
    if (!row.charged) return;
    await trx
      .updateTable('messaging_accounts')
      .set({ balance: sql`balance + ${row.charged}` })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.account_id)
      .execute();
  }

  /** Marks the hand-off as started, unless the lease was lost or the broadcast was cancelled meanwhile. */
  async function startHandoff(row: ClaimedRow): Promise<boolean> {
    const started = await updateRecipient(db, row)
      .set({ handoff_started_at: sql`now()`, updated_at: sql`now()` })
      .where('status', '=', 'sending')
      .where('lease_token', '=', row.lease_token)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('broadcasts')
              .select('id')
              .where('broadcasts.org_id', '=', row.org_id)
              .where('broadcasts.id', '=', row.broadcast_id)
              .where('broadcasts.stored_status', '=', 'cancelled'),
          ),
        ),
      )
      .executeTakeFirst();
    if (Number(started.numUpdatedRows) === 1) return true;
    // Cancelled while claimed: the row joins the abandoned tail and its charge goes back.
    await db.transaction().execute(async (trx) => {
      const released = await updateRecipient(trx, row)
        .set({ status: 'cancelled', lease_until: null, lease_token: null, charged: 0, updated_at: sql`now()` })
        .where('status', '=', 'sending')
        .where('lease_token', '=', row.lease_token)
        .where('handoff_started_at', 'is', null)
        .executeTakeFirst();
      if (Number(released.numUpdatedRows) === 1) await refund(trx, row);
    });
    return false;
  }

  async function record(row: ClaimedRow, result: SendResult): Promise<void> {
    deps.onOutcome?.(
      result.ok
        ? 'sent'
        : result.uncertain
          ? 'uncertain'
          : result.retryable && row.attempts < options.maxAttempts
            ? 'retry'
            : 'failed',
    );
    await db.transaction().execute(async (trx) => {
      const mine = updateRecipient(trx, row).where('lease_token', '=', row.lease_token);
      if (result.ok) {
        // A status webhook may have settled this row already; then only the message id is filled in.
        const settled = await mine
          .set({
            status: sql`case when status = 'sending' then 'sent' else status end`,
            platform_message_id: result.platformMessageId,
            sent_at: sql`coalesce(sent_at, now())`,
            lease_until: null,
            updated_at: sql`now()`,
          })
          .returning(['status', 'delivered_at', 'read_at'])
          .executeTakeFirst();
        // contract (messaging_status): a successful send makes an `unverified` contact `verified`.
        await trx
          .updateTable('contacts')
          .set({
            last_contacted_at: sql`now()`,
            messaging_status: sql`case when messaging_status = 'unverified' then 'verified' else messaging_status end`,
            updated_at: sql`case when messaging_status = 'unverified' then now() else updated_at end`,
          })
          .where('org_id', '=', row.org_id)
          .where('id', '=', row.contact_id)
          .execute();
        if (settled) await deps.onAccepted?.(trx, row, result.platformMessageId, settled);
        return;
      }
      if (result.uncertain) {
        // Unknown outcome: keep it in `sending` with its hand-off mark; a webhook or the reconciler settles it.
        log.warn(
          { broadcast: row.broadcast_id, position: row.position, reason: result.message },
          'hand-off outcome unknown',
        );
        return;
      }
      if (result.retryable && row.attempts < options.maxAttempts) {
        await mine
          .set({
            status: 'queued',
            handoff_started_at: null,
            lease_until: null,
            lease_token: null,
            charged: 0,
            error: result.message,
            error_code: result.code ?? null,
            next_attempt_at: sql`now() + make_interval(secs => ${backoffMs(row.attempts, options) / 1000})`,
            updated_at: sql`now()`,
          })
          .where('status', '=', 'sending')
          .execute();
        await refund(trx, row);
        return;
      }
      // The platform refused it: nothing was accepted, so nothing is charged.
      const failed = await mine
        .set({
          status: 'failed',
          error: result.reason === 'platform_error' ? result.message : `${result.reason}: ${result.message}`,
          error_code: result.code ?? null,
          failed_at: sql`now()`,
          lease_until: null,
          charged: 0,
          updated_at: sql`now()`,
        })
        .where('status', '=', 'sending')
        .executeTakeFirst();
      if (Number(failed.numUpdatedRows) === 1) await refund(trx, row);
      await updateContactReachability(
        trx,
        row.org_id,
        row.contact_id,
        result.reason === 'not_on_network' ? 'not_on_network' : 'failed',
      );
    });
  }

  async function handOff(row: ClaimedRow): Promise<void> {
    if (!(await startHandoff(row))) return;
    let result: SendResult;
    try {
      result = await platform.sendTemplate({
        phoneNumberId: row.phone_number_id,
        to: row.phone,
        templateName: row.template_name,
        language: row.template_language,
        components: row.send_components as SendComponent[],
        callbackData: callbackReference(row.org_id, row.broadcast_id, row.position),
      });
    } catch (error) {
      // An adapter that throws has not told us whether the platform took the message.
      result = { ok: false, reason: 'platform_error', retryable: false, uncertain: true, message: String(error) };
    }
    await record(row, result);
  }

  return {
    async runOnce() {
      const token = randomUUID();
      const claimed = await db.transaction().execute(async (trx) => {
        const rows = await claimBatch(trx, { limit: options.batchSize, leaseMs: options.leaseMs, token });
        return chargeClaims(trx, rows, {
          perNumberPerSecond: options.perNumberPerSecond,
          leaseMs: options.leaseMs,
          token,
        });
      });
      await pool(claimed, options.concurrency, async (row) => {
        try {
          await handOff(row);
        } catch (error) {
          // The lease will expire and the row will be claimed again (or reconciled if its hand-off had started).
          log.error({ err: error, broadcast: row.broadcast_id, position: row.position }, 'hand-off failed');
        }
      });
      return claimed.length;
    },

    async reconcile() {
      return db.transaction().execute(async (trx) => {
        const stale = await trx
          .selectFrom('broadcast_recipients')
          .select(['org_id', 'broadcast_id', 'position', 'account_id', 'charged'])
          .where('status', '=', 'sending')
          .where('handoff_started_at', 'is not', null)
          .where(
            'handoff_started_at',
            '<',
            sql<Date>`now() - make_interval(secs => ${options.reconcileAfterMs / 1000})`,
          )
          .forUpdate()
          .skipLocked()
          .limit(500)
          .execute();
        for (const row of stale) {
          await updateRecipient(trx, row)
            .set({
              status: 'failed',
              error: 'handoff_unconfirmed: the platform never confirmed this message',
              failed_at: sql`now()`,
              lease_until: null,
              charged: 0,
              updated_at: sql`now()`,
            })
            .execute();
          await refund(trx, row);
        }
        return stale.length;
      });
    },
  };
}

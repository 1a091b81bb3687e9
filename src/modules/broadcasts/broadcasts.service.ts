// Reading broadcasts, and moving them: cancel, pause and resume (decisions §7, §16). Counts and status are
// derived (decisions §7) on every read.
import type { Kysely, Transaction } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import { admitMessage } from '../messaging-accounts/admission.ts';
import { broadcastView } from '../recipients/broadcast-view.ts';
import { recordFinished } from '../recipients/recipient-events.ts';
import { RECIPIENT_LISTED_STATUSES } from '../recipients/recipient-rules.ts';
import { cancelTail, listRecipients, unparkRemainder } from '../recipients/recipients.repo.ts';
import { findTemplate } from '../templates/templates.repo.ts';
import {
  type BroadcastRow,
  broadcastMoves,
  findBroadcast,
  findBroadcastAccount,
  listBroadcasts,
  lockBroadcast,
  lookAgainAtHeld,
  markCancelled,
  markStored,
} from './broadcasts.repo.ts';
import type {
  BroadcastListQuery,
  BroadcastStatus,
  RECIPIENT_STATUSES,
  RecipientListQuery,
} from './broadcasts.schemas.ts';

export type { BroadcastStatus };

type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export type BroadcastListFilter = BroadcastListQuery & { limit: number };
export type RecipientListFilter = RecipientListQuery & { limit: number };

const CANCELLABLE: readonly BroadcastStatus[] = ['scheduled', 'preparing', 'in_progress', 'paused'];
const PAUSABLE: readonly BroadcastStatus[] = ['scheduled', 'preparing', 'in_progress'];
const RESUMABLE: readonly BroadcastStatus[] = ['paused', 'stopped_low_balance'];

export function createBroadcastsService(db: Kysely<DB>) {
  async function get(orgId: string, broadcastId: string) {
    const row = await findBroadcast(db, orgId, broadcastId);
    if (!row) throw notFound();
    return broadcastView(row);
  }

  /** Under the broadcast's lock (the worker's steps take it too): from one of `from`, else 409 `code`. */
  async function transition(
    orgId: string,
    broadcastId: string,
    from: readonly BroadcastStatus[],
    code: string,
    change: (trx: Transaction<DB>, current: BroadcastRow) => Promise<void>,
  ) {
    await transactionWithRetry(db, async (trx) => {
      if (!(await lockBroadcast(trx, orgId, broadcastId))) throw notFound();
      const row = (await findBroadcast(trx, orgId, broadcastId)) as BroadcastRow;
      const current = broadcastView(row);
      if (!from.includes(current.status)) throw new ApiError(409, { code, status: current.status });
      await change(trx, row);
    });
  }

  return {
    get,

    async list(orgId: string, filter: BroadcastListFilter) {
      const scope = 'broadcasts';
      const shape = { status: filter.status?.slice().sort() ?? null, template_id: filter.template_id ?? null };
      let after: [Date, string] | undefined;
      if (filter.cursor) {
        const [createdAt, id] = decodeCursor(filter.cursor, scope, shape) as [string, string];
        after = [new Date(createdAt), id];
      }
      const rows = await listBroadcasts(db, orgId, {
        status: filter.status,
        template_id: filter.template_id,
        after,
        limit: filter.limit + 1,
      });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        items: page.map(broadcastView),
        next_cursor:
          rows.length > filter.limit && last
            ? encodeCursor(scope, shape, [last.created_at.toISOString(), last.id])
            : null,
      };
    },

    async recipients(orgId: string, broadcastId: string, filter: RecipientListFilter) {
      // contract: only recipients the worker has reached are listed.
      const listed: readonly string[] = RECIPIENT_LISTED_STATUSES;
      const statuses = filter.status?.length ? filter.status.filter((status) => listed.includes(status)) : listed;
      const scope = `recipients:${broadcastId}`;
      const shape = { status: filter.status?.slice().sort() ?? null };
      // A missing broadcast answers 404 before a bad cursor's 422, as when the broadcast was read first.
      let afterPosition: number | undefined;
      let badCursor: unknown;
      try {
        afterPosition = filter.cursor ? Number((decodeCursor(filter.cursor, scope, shape) as [number])[0]) : undefined;
      } catch (error) {
        badCursor = error;
      }
      // The broadcast's existence, the page and the count: one statement.
      const { found, rows, total } = await listRecipients(db, orgId, broadcastId, {
        statuses,
        afterPosition,
        limit: filter.limit + 1,
      });
      if (!found) throw notFound();
      if (badCursor !== undefined) throw badCursor;
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        items: page.map((row) => ({
          contact_id: row.contact_id,
          contact: {
            id: row.contact_id,
            first_name: row.contact_first_name ?? null,
            last_name: row.contact_last_name ?? null,
            phone: row.contact_phone ?? null,
          },
          phone: row.phone,
          status: row.status as RecipientStatus,
          error: row.status === 'failed' ? row.error : null,
          error_message: row.status === 'failed' ? row.error_message : null,
          platform_message_id: row.platform_message_id,
          delivered_at: row.delivered_at,
          read_at: row.read_at,
          created_at: row.reached_at ?? row.queued_at,
        })),
        next_cursor: rows.length > filter.limit && last ? encodeCursor(scope, shape, [last.position]) : null,
        total_count: total,
      };
    },

    /** decisions §7, §16: from `scheduled`, `preparing`, `in_progress` or `paused`; the unsent remainder is abandoned. */
    async cancel(orgId: string, broadcastId: string) {
      await transition(orgId, broadcastId, CANCELLABLE, 'broadcast_not_cancellable', async (trx) => {
        await markCancelled(trx, orgId, broadcastId);
        await cancelTail(trx, orgId, broadcastId);
        await recordFinished(trx, broadcastMoves, orgId, [broadcastId]); // decisions §11: `broadcast.finished`
      });
      return get(orgId, broadcastId);
    },

    /** decisions §16: hand-offs stop (the claim takes rows of live broadcasts only); those under way keep reporting. */
    async pause(orgId: string, broadcastId: string) {
      await transition(orgId, broadcastId, PAUSABLE, 'broadcast_not_pausable', async (trx) => {
        await markStored(trx, orgId, broadcastId, { stored_status: 'paused', status_reason: 'requested' });
      });
      return get(orgId, broadcastId);
    },

    /**
     * decisions §16: back to `scheduled` while `send_at` is ahead (its phase never left it), otherwise on. D227: a
     * broadcast stopped by the balance resumes too, once the balance pays one message of it (else 402); its unsent
     * remainder goes on and it finishes again (a second `broadcast.finished`) when nothing is pending.
     */
    async resume(orgId: string, broadcastId: string) {
      await transition(orgId, broadcastId, RESUMABLE, 'broadcast_not_resumable', async (trx, current) => {
        const template = await findTemplate(trx, orgId, current.template_id);
        if (template?.status !== 'APPROVED') {
          throw new ApiError(409, {
            code: 'template_not_sendable',
            status: template?.status ?? 'DELETED',
            reason: 'only a broadcast of an APPROVED template can resume',
          });
        }
        if (current.stored_status === 'stopped_low_balance') {
          const sending = await findBroadcastAccount(trx, orgId, broadcastId);
          // The balance pays one message of it (402 otherwise), as at an audience broadcast's admission.
          await admitMessage(trx, {
            orgId,
            accountId: sending.account_id,
            category: sending.template_category,
            phones: [],
            limit: 'pace',
            payment: 'at-claim',
          });
          await unparkRemainder(trx, orgId, broadcastId);
        }
        await markStored(trx, orgId, broadcastId, { stored_status: null, status_reason: null, finished_at: null });
        // Recipients held for the 24-hour limit are looked at again now, not at `held_until` (D226).
        await lookAgainAtHeld(trx, orgId, { id: broadcastId });
        // A broadcast whose last recipients ended while it was paused ends now.
        await recordFinished(trx, broadcastMoves, orgId, [broadcastId]);
      });
      return get(orgId, broadcastId);
    },
  };
}

export type BroadcastsService = ReturnType<typeof createBroadcastsService>;

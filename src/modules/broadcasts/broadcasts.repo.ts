// SQL for broadcasts: listing and reading them (with the counts their recipients derive, recipients/broadcast-view.ts),
// creating them, marking the stored states a request sets, and the queue's moves of its broadcast (D349: the port
// `BroadcastMoves` of recipients/broadcast-moves.ts, handed to the queue engine and the worker by the wiring).
import { type Insertable, type Kysely, sql, type UpdateObject } from 'kysely';
import type { BroadcastsTable, DB } from '../../db/schema.ts';
import type { BroadcastMoves } from '../recipients/broadcast-moves.ts';
import { type BroadcastRow, STORED_STATUSES, selectBroadcasts } from '../recipients/broadcast-view.ts';

export type { BroadcastRow };

export interface BroadcastListFilter {
  status?: readonly string[] | undefined;
  template_id?: string | undefined;
  /** Keyset position after which the page starts (newest first). */
  after?: [Date, string] | undefined;
  limit: number;
}

/** Newest first (decisions §1); the status filter follows the derived status of decisions §7 and §16. */
export function listBroadcasts(db: Kysely<DB>, orgId: string, filter: BroadcastListFilter) {
  // Always true: it lets the list use its index, which is partial on it so that lookups by key never take it (D208).
  // A literal, not a parameter, so that a generic plan proves it too.
  let query = selectBroadcasts(db, orgId).where('broadcasts.created_at', '>', sql<Date>`'-infinity'::timestamptz`);
  if (filter.template_id) query = query.where('broadcasts.template_id', '=', filter.template_id);
  const wanted = new Set(filter.status ?? []);
  if (wanted.size > 0) {
    query = query.where((eb) => {
      const pending = sql<number>`broadcasts.requested - coalesce(c.sent, 0) - coalesce(c.failed, 0)`;
      const stored = [...wanted].filter((status) => (STORED_STATUSES as readonly string[]).includes(status));
      const phases = [...wanted].filter((status) => status === 'scheduled' || status === 'preparing');
      const options = [];
      if (stored.length) options.push(eb('broadcasts.stored_status', 'in', stored));
      const live = eb('broadcasts.stored_status', 'is', null);
      if (phases.length) options.push(eb.and([live, eb('broadcasts.phase', 'in', phases)]));
      const ready = eb.or([eb('broadcasts.phase', 'is', null), eb('broadcasts.phase', '=', 'ready')]);
      if (wanted.has('completed')) options.push(eb.and([live, ready, eb(pending, '=', 0)]));
      if (wanted.has('in_progress')) options.push(eb.and([live, ready, eb(pending, '>', 0)]));
      return eb.or(options);
    });
  }
  const after = filter.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([
        eb('broadcasts.created_at', '<', after[0]),
        eb.and([eb('broadcasts.created_at', '=', after[0]), eb('broadcasts.id', '<', after[1])]),
      ]),
    );
  }
  return query.orderBy('broadcasts.created_at', 'desc').orderBy('broadcasts.id', 'desc').limit(filter.limit).execute();
}

export const findBroadcast = (db: Kysely<DB>, orgId: string, broadcastId: string) =>
  selectBroadcasts(db, orgId).where('broadcasts.id', '=', broadcastId).executeTakeFirst();

/** Locks the broadcast row (cancel and the fan-out's stops serialise on it); undefined when it does not exist. */
export const lockBroadcast = (db: Kysely<DB>, orgId: string, broadcastId: string) =>
  db
    .selectFrom('broadcasts')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .forUpdate()
    .executeTakeFirst();

/** Answers the new row as the view reads it, before any recipient moves (`created_at` is the database's clock). */
export const insertBroadcast = (db: Kysely<DB>, row: Insertable<BroadcastsTable>) =>
  db
    .insertInto('broadcasts')
    .values(row)
    .returning([
      'id',
      'template_id',
      'template_name',
      'template_language',
      'channel_id',
      'stored_status',
      'requested',
      'origin',
      'retry_of',
      'created_at',
      'name',
      'audience',
      'send_at',
      'started_at',
      'status_reason',
      'held_until',
      'phase',
    ])
    .executeTakeFirstOrThrow();

export const markCancelled = (db: Kysely<DB>, orgId: string, broadcastId: string, reason: string | null = null) =>
  db
    .updateTable('broadcasts')
    .set({ stored_status: 'cancelled', status_reason: reason, held_until: null, updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .execute();

/** The account a broadcast sends from and its template's category (what one of its messages costs, D227). */
export const findBroadcastAccount = (db: Kysely<DB>, orgId: string, broadcastId: string) =>
  db
    .selectFrom('broadcasts')
    .select(['account_id', 'template_category'])
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .executeTakeFirstOrThrow();

/** Sets the stored status and its reason (decisions §16: `paused` with `requested` or `template_not_sendable`). */
export const markStored = (
  db: Kysely<DB>,
  orgId: string,
  broadcastId: string,
  stored: { stored_status: string | null; status_reason: string | null; finished_at?: null },
) =>
  db
    .updateTable('broadcasts')
    .set({ ...stored, updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .execute();

/**
 * decisions §16 (D226): room may come before `held_until` — the operator raises the limit, a broadcast resumes — so
 * the held broadcasts of an account (or one broadcast) are looked at again now, in the transaction of that change:
 * the worker's next round (recipients/audience-materialize.ts `releaseHeld`, every poll) queues what the window has
 * room for and sets `held_until` again for the rest.
 */
export async function lookAgainAtHeld(
  db: Kysely<DB>,
  orgId: string,
  which: { account_id: string } | { id: string },
): Promise<void> {
  const [column, value] = Object.entries(which)[0] as ['account_id' | 'id', string];
  await db
    .updateTable('broadcasts')
    .set({ held_until: sql<Date>`now()` })
    .where('org_id', '=', orgId)
    .where(column, '=', value)
    .where('held_until', '>', sql<Date>`now()`)
    .execute();
}

/** One broadcast's row, by its key, set to `changes` (each of the queue's moves below). */
const updateOne = (trx: Kysely<DB>, orgId: string, broadcastId: string, changes: UpdateObject<DB, 'broadcasts'>) =>
  trx.updateTable('broadcasts').set(changes).where('org_id', '=', orgId).where('id', '=', broadcastId).execute();

/** The queue's moves of its broadcast, written here (D349); each in the caller's transaction. */
export const broadcastMoves: BroadcastMoves = {
  async startAudience(trx, orgId, broadcastId, prepared) {
    await updateOne(trx, orgId, broadcastId, {
      phase: 'preparing',
      started_at: sql`now()`,
      snapshot_at: sql`now()`,
      base_components: JSON.stringify(prepared.components),
      contact_tokens: JSON.stringify(prepared.tokens),
      updated_at: sql`now()`,
    });
  },

  async cancelAtStart(trx, orgId, broadcastId) {
    await updateOne(trx, orgId, broadcastId, {
      stored_status: 'cancelled',
      status_reason: 'template_not_sendable',
      held_until: null,
      phase: 'ready',
      started_at: sql`now()`,
      updated_at: sql`now()`,
    });
  },

  async advanceAudience(trx, orgId, broadcastId, chunk) {
    await updateOne(trx, orgId, broadcastId, {
      requested: sql`requested + ${chunk.added}`,
      // The checkpoint moves only with the rows the chunk wrote; its time as the text the chunk read (D189).
      ...(chunk.last
        ? { checkpoint_created_at: sql<Date>`${chunk.last.createdAt}::timestamptz`, checkpoint_id: chunk.last.id }
        : {}),
      phase: chunk.done ? 'ready' : 'preparing',
      updated_at: sql`now()`,
    });
  },

  async setHeldUntil(trx, orgId, broadcastId, at) {
    await updateOne(trx, orgId, broadcastId, { held_until: at });
  },

  async stopForBalance(trx, orgId, broadcastIds) {
    if (broadcastIds.length === 0) return;
    await trx
      .updateTable('broadcasts')
      .set({ stored_status: 'stopped_low_balance', updated_at: sql`now()` })
      .where('org_id', '=', orgId)
      .where('id', 'in', [...broadcastIds])
      .where('stored_status', 'is', null)
      .execute();
  },

  async pauseForTemplates(trx, orgId, templateIds) {
    if (templateIds.length === 0) return 0;
    const paused = await trx
      .updateTable('broadcasts')
      .set({ stored_status: 'paused', status_reason: 'template_not_sendable', updated_at: sql`now()` })
      .where('org_id', '=', orgId)
      .where('template_id', 'in', [...templateIds])
      .where('stored_status', 'is', null)
      .where('finished_at', 'is', null)
      // A broadcast not started yet is checked at its start instead.
      .where((eb) => eb.or([eb('phase', 'is', null), eb('started_at', 'is not', null)]))
      .executeTakeFirst();
    return Number(paused.numUpdatedRows);
  },

  async markFinished(trx, orgId, broadcastIds) {
    if (broadcastIds.length === 0) return [];
    const rows = await trx
      .updateTable('broadcasts')
      .set({ finished_at: sql`now()` })
      .where('org_id', '=', orgId)
      .where('id', 'in', [...broadcastIds])
      .where('finished_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((row) => row.id);
  },
};

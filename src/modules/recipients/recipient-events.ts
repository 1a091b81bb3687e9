// A broadcast's events to API clients (decisions §11), recorded in the transaction of the move that
// causes them: `broadcast.recipient.updated` each time recipients move to sent, delivered, read or failed (one
// read and one recordEvents per recorded batch), and `broadcast.finished` exactly once when a broadcast ends.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { groupBy } from '../../lib/group-by.ts';
import type { EventInput } from '../events/event-types.ts';
import { recordEvents } from '../events/events.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { broadcastView, type RECIPIENT_STATUSES, selectBroadcasts } from './broadcast-view.ts';

export interface MovedRecipient {
  org_id: string;
  broadcast_id: string;
  position: number;
}

/** What a recipient's event says about it, as an UPDATE of `broadcast_recipients as r` can return it. */
export const RECIPIENT_EVENT_COLUMNS = sql`r.contact_id, r.phone, r.status, r.error, r.error_message, r.platform_message_id,
  r.delivered_at, r.read_at, coalesce(r.reached_at, r.queued_at) as created_at`;

export interface RecipientEventRow {
  org_id: string;
  broadcast_id: string;
  contact_id: string;
  phone: string;
  status: string;
  error: string | null;
  error_message: string | null;
  platform_message_id: string | null;
  delivered_at: Date | null;
  read_at: Date | null;
  created_at: Date;
}

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

/**
 * Records `broadcast.recipient.updated` for recipients that just moved (pass the transaction of the move): one
 * statement reads them as the recipients list shows them, one recordEvents per organization. With `finish` (the
 * move took recipients out of the pending count: the broadcasts' writer of their end, D349), their broadcasts are
 * checked for their end; null when the move cannot end one.
 */
export async function recordRecipientMoves(
  trx: Kysely<DB>,
  moved: readonly MovedRecipient[],
  finish: BroadcastMoves | null,
): Promise<void> {
  // D318: a statement per organization, which it names (on Citus, its shard).
  for (const [orgId, ofOrg] of groupBy(moved, (row) => row.org_id)) {
    const result = await sql<RecipientEventRow>`
    select r.org_id, r.broadcast_id, ${RECIPIENT_EVENT_COLUMNS}
    from unnest(${ofOrg.map((row) => row.broadcast_id)}::text[], ${ofOrg.map((row) => row.position)}::int[])
      as v(broadcast_id, position)
    join broadcast_recipients r on r.org_id = ${orgId} and r.broadcast_id = v.broadcast_id and r.position = v.position
    order by r.broadcast_id, r.position`.execute(trx);
    const rows = result.rows;
    if (rows.length === 0) continue;
    const events = recipientEvents(rows);
    await recordEvents(trx, orgId, events);
    if (finish) await recordFinished(trx, finish, orgId, [...new Set(rows.map((row) => row.broadcast_id))]);
  }
}

/** decisions §11: the `broadcast.recipient.updated` events of recipients as they stand after their move. */
export function recipientEvents(rows: readonly RecipientEventRow[]): EventInput[] {
  return rows
    .filter((row) => ['sent', 'delivered', 'read', 'failed'].includes(row.status))
    .map((row) => ({
      type: 'broadcast.recipient.updated',
      data: {
        broadcast_id: row.broadcast_id,
        contact_id: row.contact_id,
        phone: row.phone,
        status: row.status as (typeof RECIPIENT_STATUSES)[number],
        // As the recipients list shows it: the error only on a failed recipient.
        error: row.status === 'failed' ? row.error : null,
        error_message: row.status === 'failed' ? row.error_message : null,
        platform_message_id: row.platform_message_id,
        delivered_at: iso(row.delivered_at),
        read_at: iso(row.read_at),
        created_at: iso(row.created_at) as string,
      },
    }));
}

/**
 * Records `broadcast.finished` for those of the given broadcasts that have just ended: `cancelled` or
 * `stopped_low_balance` (stored), or `completed` (derived: nothing pending). Exactly once: `finished_at` is set where
 * it is still null, under the broadcast's lock, by the broadcasts' owner (`moves.markFinished`, D349).
 * D359: the end is read first without a lock; a broadcast that still has pending recipients in this transaction's
 * view (the usual answer while it runs) is left alone, so two workers moving one broadcast's rows never take turns
 * for its row. Only one that looks ended is locked (in id order) and looked at again by a fresh statement, which
 * sees every move committed before the lock was granted. Two transactions that each move a broadcast's last rows
 * may each see the other's as pending and both leave it: finishEndedBroadcasts, the worker's sweep, finishes it.
 */
export async function recordFinished(
  trx: Kysely<DB>,
  moves: BroadcastMoves,
  orgId: string,
  broadcastIds: readonly string[],
): Promise<void> {
  if (broadcastIds.length === 0) return;
  const ids = [...new Set(broadcastIds)].sort();
  const looksEnded = await executePrepared(trx, endedBroadcasts(orgId, oneOf(sql.ref('b.id'), ids)));
  if (looksEnded.rows.length === 0) return;
  const open = await executePrepared(
    trx,
    lockOpenBroadcasts(
      orgId,
      looksEnded.rows.map((row) => row.id),
    ),
  );
  await finishLocked(
    trx,
    moves,
    orgId,
    open.rows.map((row) => row.id),
  );
}

/**
 * D359: the sweep of an organization's broadcasts that ended unseen (the race above; or a move whose transaction
 * checked no end): those unfinished ones that look ended now are finished, in one transaction of statements that
 * each name the organization (D318). Answers how many finished.
 */
export async function finishEndedBroadcasts(db: Kysely<DB>, moves: BroadcastMoves, orgId: string): Promise<number> {
  return transactionWithRetry(db, async (trx) => {
    // By the partial index of unfinished broadcasts (migration 0047): the organization's running and scheduled ones.
    const ended = await endedBroadcasts(orgId, sql`true`).execute(trx);
    if (ended.rows.length === 0) return 0;
    const open = await executePrepared(
      trx,
      lockOpenBroadcasts(
        orgId,
        ended.rows.map((row) => row.id),
      ),
    );
    return (
      await finishLocked(
        trx,
        moves,
        orgId,
        open.rows.map((row) => row.id),
      )
    ).length;
  });
}

/** D359: the organizations that have unfinished broadcasts (a read of every shard on Citus), for the sweep. */
export async function organizationsWithOpenBroadcasts(db: Kysely<DB>): Promise<string[]> {
  // D318's shape of a worker's look across organizations: a read without locks, grouped by organization.
  const result = await sql<{ org_id: string }>`select org_id from broadcasts where finished_at is null
    group by org_id order by min(created_at)`.execute(db);
  return result.rows.map((row) => row.org_id);
}

/**
 * recordFinished's first half: locks the given broadcasts that have not finished, in id order. The second half
 * (finishLocked) must be a later statement.
 */
function lockOpenBroadcasts(orgId: string, broadcastIds: readonly string[]) {
  return sql<{ id: string }>`select id from broadcasts where org_id = ${orgId}
    and ${oneOf(sql.ref('id'), [...new Set(broadcastIds)].sort())} and finished_at is null order by id for update`;
}

/**
 * `column` is one of `ids`: an equality when there is one (the usual case: a group's recipients share their
 * broadcast), whose generic plan estimates one row like its custom ones, so that a named statement stops being
 * planned (D209); `= any(array)` otherwise.
 */
const oneOf = (column: RawBuilder<unknown>, ids: readonly string[]) =>
  ids.length === 1 ? sql`${column} = ${ids[0]}` : sql`${column} = any(${ids}::text[])`;

/**
 * Which of an organization's unfinished broadcasts (`which`, a condition on `b.id`) have ended, read without a lock:
 * stored as ended, or nothing pending (D200's probes).
 */
function endedBroadcasts(orgId: string, which: RawBuilder<unknown>) {
  return sql<{ id: string }>`
    select b.id from broadcasts b
    where b.org_id = ${orgId} and ${which} and b.finished_at is null
      and (b.stored_status in ('cancelled', 'stopped_low_balance')
        -- decisions §16: a paused broadcast, or one whose recipients are still being added, has not ended.
        -- D200: one probe per pending status, each from the highest position down. The fan-out moves a broadcast's
        -- recipients on in order of position, so the index entries of its lowest positions under 'queued' or
        -- 'sending' are the dead versions of rows that moved on (until a vacuum): read from the top, the first
        -- entry is a live one. A scalar subquery keeps its ORDER BY (EXISTS drops it). As one condition on the
        -- four statuses the planner read the broadcast's every entry (16–28 ms at 100,000 recipients).
        -- D318: a probe per status, each naming the organization (on Citus, its shard; a lateral over the statuses
        -- was refused there).
        or (b.stored_status is null and coalesce(b.phase, 'ready') = 'ready'
          and ${sql.join(
            ['queued', 'sending', 'cancelled', 'held'].map(
              (status) => sql`(select r.position from broadcast_recipients r
              where r.org_id = ${orgId} and r.broadcast_id = b.id and r.status = ${sql.lit(status)}
              order by r.position desc limit 1) is null`,
            ),
            sql` and `,
          )}))`;
}

/**
 * recordFinished's second half: of the broadcasts the transaction has locked, those that have ended finish. The
 * check is a read; the end's write, once per broadcast, is the owner's (D349). Answers those it finished.
 */
async function finishLocked(
  trx: Kysely<DB>,
  moves: BroadcastMoves,
  orgId: string,
  open: readonly string[],
): Promise<string[]> {
  if (open.length === 0) return [];
  // A new statement: under READ COMMITTED it sees every move committed before the lock above was granted.
  const ended = await executePrepared(trx, endedBroadcasts(orgId, oneOf(sql.ref('b.id'), open)));
  if (ended.rows.length === 0) return [];
  const finished = await moves.markFinished(
    trx,
    orgId,
    ended.rows.map((row) => row.id),
  );
  if (finished.length === 0) return [];
  const rows = await selectBroadcasts(trx, orgId)
    .where('broadcasts.id', 'in', finished)
    .orderBy('broadcasts.id')
    .execute();
  await recordEvents(
    trx,
    orgId,
    rows.map((row) => ({ type: 'broadcast.finished', data: broadcastView(row) })),
  );
  return finished;
}

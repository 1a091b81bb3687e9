// SQL for broadcasts: reading them with their derived counts, listing, creating, and marking stored states.
import { type Insertable, type Kysely, sql } from 'kysely';
import type { BroadcastsTable, DB } from '../../db/schema.ts';

// contract: `sent` counts recipients in sent, delivered or read; `failed` those in failed. One statement reads a
// broadcast and its counts, so a read is always a consistent snapshot. Each count reads its statuses' ranges of the
// listing index (org, status, broadcast, position; D211), not every recipient of the broadcast.
// The organization is named in each count (D317: a statement Citus routes to one shard).
const countOf = (orgId: string, statuses: readonly string[]) =>
  sql<number>`(select count(*)::int from broadcast_recipients r where r.org_id = ${orgId}
    and r.status in (${sql.join(statuses.map((status) => sql.lit(status)))}) and r.broadcast_id = broadcasts.id)`;
const counts = (orgId: string) =>
  sql<{ sent: number; failed: number }>`(select ${countOf(orgId, ['sent', 'delivered', 'read'])} as sent,
  ${countOf(orgId, ['failed'])} as failed)`.as('c');

export function selectBroadcasts(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('broadcasts')
    .leftJoinLateral(counts(orgId), (join) => join.onTrue())
    .select([
      'broadcasts.id',
      'broadcasts.template_id',
      'broadcasts.template_name',
      'broadcasts.template_language',
      'broadcasts.channel_id',
      'broadcasts.stored_status',
      'broadcasts.requested',
      'broadcasts.origin',
      'broadcasts.retry_of',
      'broadcasts.created_at',
      'broadcasts.name',
      'broadcasts.audience',
      'broadcasts.send_at',
      'broadcasts.started_at',
      'broadcasts.status_reason',
      'broadcasts.held_until',
      'broadcasts.phase',
      sql<number>`coalesce(c.sent, 0)`.as('sent'),
      sql<number>`coalesce(c.failed, 0)`.as('failed'),
    ])
    .where('broadcasts.org_id', '=', orgId);
}

export type BroadcastRow = Awaited<ReturnType<ReturnType<typeof selectBroadcasts>['executeTakeFirstOrThrow']>>;

export interface BroadcastListFilter {
  status?: readonly string[] | undefined;
  template_id?: string | undefined;
  /** Keyset position after which the page starts (newest first). */
  after?: [Date, string] | undefined;
  limit: number;
}

/** Statuses a broadcast row stores; the others are derived (decisions §7, §16). */
export const STORED_STATUSES = ['cancelled', 'stopped_low_balance', 'paused'] as const;

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

// SQL for broadcasts: reading them with their derived counts, listing, creating, and marking stored states.
import { type ExpressionBuilder, type Insertable, type Kysely, sql } from 'kysely';
import type { BroadcastsTable, DB } from '../../db/schema.ts';

// contract: `sent` counts recipients in sent, delivered or read; `failed` those in failed. One statement reads a
// broadcast and its counts, so a read is always a consistent snapshot.
const counts = (eb: ExpressionBuilder<DB, 'broadcasts'>) =>
  eb
    .selectFrom('broadcast_recipients as r')
    .whereRef('r.org_id', '=', 'broadcasts.org_id')
    .whereRef('r.broadcast_id', '=', 'broadcasts.id')
    .select([
      sql<number>`count(*) filter (where r.status in ('sent', 'delivered', 'read'))::int`.as('sent'),
      sql<number>`count(*) filter (where r.status = 'failed')::int`.as('failed'),
    ])
    .as('c');

export function selectBroadcasts(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('broadcasts')
    .leftJoinLateral(counts, (join) => join.onTrue())
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

/** Newest first (decisions §1); the status filter follows the derived status of decisions §7. */
export function listBroadcasts(db: Kysely<DB>, orgId: string, filter: BroadcastListFilter) {
  let query = selectBroadcasts(db, orgId);
  if (filter.template_id) query = query.where('broadcasts.template_id', '=', filter.template_id);
  const wanted = new Set(filter.status ?? []);
  if (wanted.size > 0) {
    query = query.where((eb) => {
      const pending = sql<number>`broadcasts.requested - coalesce(c.sent, 0) - coalesce(c.failed, 0)`;
      const stored = [...wanted].filter((status) => status === 'cancelled' || status === 'stopped_low_balance');
      const options = [];
      if (stored.length) options.push(eb('broadcasts.stored_status', 'in', stored));
      if (wanted.has('completed'))
        options.push(eb.and([eb('broadcasts.stored_status', 'is', null), eb(pending, '=', 0)]));
      if (wanted.has('in_progress'))
        options.push(eb.and([eb('broadcasts.stored_status', 'is', null), eb(pending, '>', 0)]));
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

/** Answers the new row's `created_at` (the database's clock). */
export const insertBroadcast = (db: Kysely<DB>, row: Insertable<BroadcastsTable>) =>
  db.insertInto('broadcasts').values(row).returning('created_at').executeTakeFirstOrThrow();

export const markCancelled = (db: Kysely<DB>, orgId: string, broadcastId: string) =>
  db
    .updateTable('broadcasts')
    .set({ stored_status: 'cancelled', updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .execute();

// Reading and cancelling broadcasts. Counts and status are derived (decisions §7) on every read.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import { type BroadcastRow, selectBroadcasts } from './broadcasts.repo.ts';
import type { BroadcastListQuery, BroadcastStatus, RecipientListQuery } from './broadcasts.schemas.ts';
import { RECIPIENT_LISTED_STATUSES } from './recipient-status.ts';

export function broadcastView(row: BroadcastRow) {
  const sent = Number(row.sent);
  const failed = Number(row.failed);
  // contract: sent + failed + pending == requested.
  const pending = row.requested - sent - failed;
  const status: BroadcastStatus =
    row.stored_status === 'cancelled' || row.stored_status === 'stopped_low_balance'
      ? row.stored_status
      : pending === 0
        ? 'completed'
        : 'in_progress';
  return {
    id: row.id,
    template_id: row.template_id,
    template_name: row.template_name,
    template_language: row.template_language,
    channel_id: row.channel_id,
    status,
    requested: row.requested,
    sent,
    failed,
    pending,
    // The ContactOrigin vocabulary (`API`); rows store the lower-case `api` they always had (CHANGELOG).
    origin: row.origin.toUpperCase(),
    created_at: row.created_at,
  };
}

export type { BroadcastStatus };
export type BroadcastListFilter = BroadcastListQuery & { limit: number };
export type RecipientListFilter = RecipientListQuery & { limit: number };

export function createBroadcastsService(db: Kysely<DB>) {
  async function get(orgId: string, broadcastId: string) {
    const row = await selectBroadcasts(db, orgId).where('broadcasts.id', '=', broadcastId).executeTakeFirst();
    if (!row) throw notFound();
    return broadcastView(row);
  }

  return {
    get,

    async list(orgId: string, filter: BroadcastListFilter) {
      const scope = 'broadcasts';
      const shape = { status: filter.status?.slice().sort() ?? null, template_id: filter.template_id ?? null };
      let query = selectBroadcasts(db, orgId);
      if (filter.template_id) query = query.where('broadcasts.template_id', '=', filter.template_id);
      if (filter.status?.length) {
        const wanted = new Set(filter.status);
        query = query.where((eb) => {
          const pending = sql<number>`broadcasts.requested - coalesce(c.sent, 0) - coalesce(c.failed, 0)`;
          const stored =
            filter.status?.filter((status) => status === 'cancelled' || status === 'stopped_low_balance') ?? [];
          const options = [];
          if (stored.length) options.push(eb('broadcasts.stored_status', 'in', stored));
          if (wanted.has('completed'))
            options.push(eb.and([eb('broadcasts.stored_status', 'is', null), eb(pending, '=', 0)]));
          if (wanted.has('in_progress'))
            options.push(eb.and([eb('broadcasts.stored_status', 'is', null), eb(pending, '>', 0)]));
          return eb.or(options);
        });
      }
      if (filter.cursor) {
        const [createdAt, id] = decodeCursor(filter.cursor, scope, shape) as [string, string];
        query = query.where((eb) =>
          eb.or([
            eb('broadcasts.created_at', '<', new Date(createdAt)),
            eb.and([eb('broadcasts.created_at', '=', new Date(createdAt)), eb('broadcasts.id', '<', id)]),
          ]),
        );
      }
      // Newest first (decisions §1).
      const rows = await query
        .orderBy('broadcasts.created_at', 'desc')
        .orderBy('broadcasts.id', 'desc')
        .limit(filter.limit + 1)
        .execute();
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
      await get(orgId, broadcastId);
      // contract: only recipients the worker has reached are listed.
      const listed = RECIPIENT_LISTED_STATUSES as readonly string[];
      const statuses = filter.status?.length ? filter.status.filter((status) => listed.includes(status)) : [...listed];
      const scope = `recipients:${broadcastId}`;
      const shape = { status: filter.status?.slice().sort() ?? null };
      const base = db
        .selectFrom('broadcast_recipients')
        .where('org_id', '=', orgId)
        .where('broadcast_id', '=', broadcastId)
        .where('status', 'in', statuses.length ? statuses : ['-']);
      let query = base.select([
        'position',
        'contact_id',
        'phone',
        'status',
        'error',
        'platform_message_id',
        'delivered_at',
        'read_at',
        'reached_at',
        'queued_at',
      ]);
      if (filter.cursor) {
        const [position] = decodeCursor(filter.cursor, scope, shape) as [number];
        query = query.where('position', '>', Number(position));
      }
      const [rows, total] = await Promise.all([
        query
          .orderBy('position')
          .limit(filter.limit + 1)
          .execute(),
        base.select(sql<number>`count(*)::int`.as('count')).executeTakeFirstOrThrow(),
      ]);
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        items: page.map((row) => ({
          contact_id: row.contact_id,
          phone: row.phone,
          status: row.status,
          error: row.status === 'failed' ? row.error : null,
          platform_message_id: row.platform_message_id,
          delivered_at: row.delivered_at,
          read_at: row.read_at,
          created_at: row.reached_at ?? row.queued_at,
        })),
        next_cursor: rows.length > filter.limit && last ? encodeCursor(scope, shape, [last.position]) : null,
        total_count: Number(total.count),
      };
    },

    async cancel(orgId: string, broadcastId: string) {
      await db.transaction().execute(async (trx) => {
        const locked = await trx
          .selectFrom('broadcasts')
          .select('id')
          .where('org_id', '=', orgId)
          .where('id', '=', broadcastId)
          .forUpdate()
          .executeTakeFirst();
        if (!locked) throw notFound();
        const current = await selectBroadcasts(trx, orgId)
          .where('broadcasts.id', '=', broadcastId)
          .executeTakeFirstOrThrow();
        if (broadcastView(current).status !== 'in_progress') {
          throw new ApiError(409, { code: 'broadcast_not_cancellable', status: broadcastView(current).status });
        }
        await trx
          .updateTable('broadcasts')
          .set({ stored_status: 'cancelled', updated_at: sql`now()` })
          .where('org_id', '=', orgId)
          .where('id', '=', broadcastId)
          .execute();
        // The unsent remainder is abandoned; hand-offs already under way cannot be recalled.
        await trx
          .updateTable('broadcast_recipients')
          .set({ status: 'cancelled', updated_at: sql`now()` })
          .where('org_id', '=', orgId)
          .where('broadcast_id', '=', broadcastId)
          .where('status', '=', 'queued')
          .execute();
      });
      return get(orgId, broadcastId);
    },
  };
}

export type BroadcastsService = ReturnType<typeof createBroadcastsService>;

// A broadcast recipient's life outside the fan-out's claim and hand-off: fail unconfirmed hand-offs, cancel the
// tail, unpark a stopped remainder, list, count. The other steps that write broadcast_recipients are this folder's
// too: the queue (recipient-queue.ts), the claim (recipient-claim.ts), the hand-offs (recipient-handoffs.ts), a
// platform report (recipient-reports.ts), an audience's chunks (audience-materialize.ts). Their rules are in
// recipient-rules.ts.

import { type Kysely, sql } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import type { ClaimedRow } from './claim-charge.ts';
import { recordRecipientMoves } from './recipient-events.ts';
import { refund } from './recipient-held.ts';

/**
 * Hand-offs whose answer was lost and that no status report settled within `olderThanMs` fail as
 * `handoff_unconfirmed` and are refunded (never sent again: the platform may have taken them). The refunded price
 * stays in `unconfirmed_charge`: a later report that the platform took it charges it again (D176, applyReport).
 */
export async function failUnconfirmed(
  db: Kysely<DB>,
  moves: BroadcastMoves,
  olderThanMs: number,
  limit = 500,
): Promise<number> {
  // At least that old (<=): PGlite's clock counts milliseconds, and with 0 a mark made in the millisecond this
  // transaction began was missed.
  const stale = sql<boolean>`status = 'sending' and handoff_started_at is not null
    and handoff_started_at <= now() - make_interval(secs => ${olderThanMs / 1000})`;
  // D318: the organizations with such hand-offs (a read without locks), then each organization's in its own
  // transaction, an even share each, the oldest first.
  const orgs = await sql<{ org_id: string }>`select org_id from broadcast_recipients where ${stale}
    group by org_id order by min(handoff_started_at), org_id limit ${limit}`.execute(db);
  const failed = await claimFairly(
    orgs.rows.map((row) => row.org_id),
    limit,
    (orgId, max) =>
      transactionWithRetry(db, async (trx) => {
        const rows = await sql<ClaimedRow>`
      update broadcast_recipients as r set status = 'failed',
        error = 'handoff_unconfirmed', error_message = 'the platform never confirmed this message',
        failed_at = now(), lease_until = null, charged = 0, unconfirmed_charge = old.charged, updated_at = now()
      from (select org_id, broadcast_id, position, charged from broadcast_recipients
            where org_id = ${orgId} and ${stale}
            limit ${max} for update skip locked) as old
      where r.org_id = ${orgId} and r.broadcast_id = old.broadcast_id and r.position = old.position
      returning r.org_id, r.broadcast_id, r.position, r.account_id, old.charged`.execute(trx);
        await refund(trx, rows.rows);
        await recordRecipientMoves(trx, rows.rows, moves);
        return rows.rows;
      }),
  );
  return failed.length;
}

/** Cancel: the unsent remainder is abandoned; hand-offs already under way cannot be recalled. */
export async function cancelTail(db: Kysely<DB>, orgId: string, broadcastId: string): Promise<void> {
  await db
    .updateTable('broadcast_recipients')
    .set({ status: 'cancelled', updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', 'in', ['queued', 'held'])
    .execute();
}

/**
 * D227: a broadcast stopped by the balance goes on: its parked remainder (queued, never due; claim-charge.ts's
 * stopForBalance) is due again now.
 */
export async function unparkRemainder(db: Kysely<DB>, orgId: string, broadcastId: string): Promise<void> {
  await db
    .updateTable('broadcast_recipients')
    .set({ next_attempt_at: sql`now()`, updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('broadcast_id', '=', broadcastId)
    .where('status', '=', 'queued')
    .where('next_attempt_at', '=', sql<Date>`'infinity'::timestamptz`)
    .execute();
}

/** What a listed recipient shows (the page of `GET /v1/broadcasts/{id}/recipients`). */
const LISTED_COLUMNS = [
  'position',
  'contact_id',
  'phone',
  'status',
  'error',
  'error_message',
  'platform_message_id',
  'delivered_at',
  'read_at',
  'reached_at',
  'queued_at',
] as const;

/**
 * contract: only recipients the worker has reached are listed; the page and the exact count side by side. A page of
 * a broadcast's recipients (in position order) with the total of the filter, in one statement (D22: one round trip
 * per read): the broadcast row leads, so `found` is false when it does not exist for `orgId`; the
 * page and the count join it laterally (an empty page is one row of nulls beside the broadcast).
 */
export async function listRecipients(
  db: Kysely<DB>,
  orgId: string,
  broadcastId: string,
  filter: { statuses: readonly string[]; afterPosition?: number | undefined; limit: number },
) {
  const statuses = filter.statuses.length ? [...filter.statuses] : ['-'];
  const rows = await db
    .selectFrom('broadcasts as b')
    .crossJoinLateral((eb) =>
      eb
        .selectFrom('broadcast_recipients')
        .select(sql<number>`count(*)::int`.as('total'))
        .where('org_id', '=', orgId)
        .where('broadcast_id', '=', broadcastId)
        .where('status', 'in', statuses)
        .as('t'),
    )
    .leftJoinLateral(
      (eb) => {
        let page = eb
          .selectFrom('broadcast_recipients as br')
          // The contact's name beside each recipient (D242): same statement, by the contact's primary key.
          .leftJoin('contacts as c', (join) =>
            join.onRef('c.org_id', '=', 'br.org_id').onRef('c.id', '=', 'br.contact_id'),
          )
          .select([
            ...LISTED_COLUMNS.map((column) => `br.${column}` as const),
            'c.first_name as contact_first_name',
            'c.last_name as contact_last_name',
            'c.phone as contact_phone',
          ])
          .where('br.org_id', '=', orgId)
          .where('br.broadcast_id', '=', broadcastId)
          .where('br.status', 'in', statuses);
        if (filter.afterPosition !== undefined) page = page.where('br.position', '>', filter.afterPosition);
        return page.orderBy('br.position').limit(filter.limit).as('r');
      },
      (join) => join.onTrue(),
    )
    .select([
      't.total',
      ...LISTED_COLUMNS.map((column) => `r.${column}` as const),
      'r.contact_first_name',
      'r.contact_last_name',
      'r.contact_phone',
    ])
    .where('b.org_id', '=', orgId)
    .where('b.id', '=', broadcastId)
    .orderBy('r.position')
    .execute();
  const first = rows[0];
  const page = rows.flatMap(({ total: _total, position, contact_id, phone, status, queued_at, ...rest }) =>
    position === null || contact_id === null || phone === null || status === null || queued_at === null
      ? []
      : [{ position, contact_id, phone, status, queued_at, ...rest }],
  );
  return { found: first !== undefined, rows: page, total: Number(first?.total ?? 0) };
}

/** Recipients waiting for the fan-out, all organizations together (queued, or held by a claim): the queue's depth. */
export async function countPendingRecipients(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('broadcast_recipients')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('status', 'in', ['queued', 'sending'])
    .where('next_attempt_at', '<', sql<Date>`'infinity'::timestamptz`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// One owner for a broadcast recipient's life. Every write of broadcast_recipients is one of these named steps:
// queue (the send), claim (recipient-claim.ts), start hand-offs, record outcomes (in batches), fail unconfirmed
// hand-offs, cancel the tail, apply a platform report. The rules they follow are in recipient-rules.ts.

import { type Kysely, sql } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import type { PlatformEventOf } from '../../messaging/webhooks.ts';
import { recordReachability } from '../contacts/contact-intake.ts';
import { recordOutboundMessages } from '../conversations/conversations.repo.ts';
import { adjustBalance } from '../messaging-accounts/accounts.repo.ts';
import { MARKETING_CAP, MARKETING_CAP_BACKOFF_MS } from './platform-pacing.ts';
import type { ClaimedRow } from './recipient-claim.ts';
import { recordRecipientMoves } from './recipient-events.ts';
import { refund, updateRecipient } from './recipient-held.ts';
import { isForward, parseCallbackReference } from './recipient-rules.ts';

export { type ClaimedRow, type ClaimOptions, claimRecipients } from './recipient-claim.ts';
export { type HandoffOutcome, recordOutcomes, startHandoffs } from './recipient-handoffs.ts';

export interface QueuedRecipient {
  contactId: string;
  phone: string;
  /** The send components, resolved when the request was accepted: the worker needs nothing else. */
  sendComponents: unknown;
  /** decisions §14: a recipient that is never handed off is `failed` at once with this error (`opted_out`). */
  failure?: string | undefined;
  /** decisions §13: the original recipient that this one retries. */
  retryOf?: { broadcastId: string; position: number } | undefined;
}

/**
 * The send: a broadcast's recipients join the queue (`queued`, due now), in request order; those with a `failure`
 * are `failed` at once, uncharged. Answers the rows failed at once (for their events).
 */
export async function queueRecipients(
  db: Kysely<DB>,
  orgId: string,
  broadcast: { id: string; accountId: string; channelId: string },
  recipients: QueuedRecipient[],
) {
  const rows = await db
    .insertInto('broadcast_recipients')
    .values(
      recipients.map((recipient, position) => ({
        org_id: orgId,
        broadcast_id: broadcast.id,
        position,
        account_id: broadcast.accountId,
        channel_id: broadcast.channelId,
        contact_id: recipient.contactId,
        phone: recipient.phone,
        send_components: JSON.stringify(recipient.sendComponents),
        ...(recipient.failure ? { status: 'failed', error: recipient.failure, failed_at: sql<Date>`now()` } : {}),
        ...(recipient.retryOf
          ? { retry_of_broadcast_id: recipient.retryOf.broadcastId, retry_of_position: recipient.retryOf.position }
          : {}),
      })),
    )
    .returning(['org_id', 'broadcast_id', 'position', 'status'])
    .execute();
  return rows.filter((row) => row.status === 'failed');
}

/**
 * Hand-offs whose answer was lost and that no status report settled within `olderThanMs` fail as
 * `handoff_unconfirmed` and are refunded (never sent again: the platform may have taken them). The refunded price
 * stays in `unconfirmed_charge`: a later report that the platform took it charges it again (D176, applyReport).
 */
export async function failUnconfirmed(db: Kysely<DB>, olderThanMs: number, limit = 500): Promise<number> {
  return transactionWithRetry(db, async (trx) => {
    const stale = await sql<ClaimedRow>`
      update broadcast_recipients as r set status = 'failed',
        error = 'handoff_unconfirmed', error_message = 'the platform never confirmed this message',
        failed_at = now(), lease_until = null, charged = 0, unconfirmed_charge = old.charged, updated_at = now()
      from (select org_id, broadcast_id, position, charged from broadcast_recipients
            where status = 'sending' and handoff_started_at is not null
              -- At least that old (<=): PGlite's clock counts milliseconds, and with 0 a mark made in the
              -- millisecond this transaction began was missed.
              and handoff_started_at <= now() - make_interval(secs => ${olderThanMs / 1000})
            limit ${limit} for update skip locked) as old
      where r.org_id = old.org_id and r.broadcast_id = old.broadcast_id and r.position = old.position
      returning r.org_id, r.broadcast_id, r.position, r.account_id, old.charged`.execute(trx);
    await refund(trx, stale.rows);
    await recordRecipientMoves(trx, stale.rows);
    return stale.rows.length;
  });
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
 * D227: a broadcast stopped by the balance goes on: its parked remainder (queued, never due; recipient-claim.ts's
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

type StatusReport = PlatformEventOf<'message_status'>;

const lockRecipient = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('broadcast_recipients')
    .select([
      'broadcast_id',
      'position',
      'status',
      'error',
      'platform_message_id',
      'contact_id',
      'account_id',
      'charged',
      'unconfirmed_charge',
    ])
    .where('org_id', '=', orgId)
    .forUpdate();

/**
 * Applies a platform status report to a broadcast recipient, found by the platform's message id or, for a
 * hand-off whose answer was lost, by our callback reference; the contact's reachability follows. Never moves a
 * recipient backwards (decisions §7). The conversation message follows the same report on its own.
 */
export async function applyReport(
  db: Kysely<DB>,
  orgId: string,
  report: StatusReport,
  at: Date,
): Promise<'applied' | 'stale' | 'unmatched'> {
  let row = await lockRecipient(db, orgId)
    .where('platform_message_id', '=', report.platformMessageId)
    .executeTakeFirst();
  if (!row) {
    const reference = parseCallbackReference(report.callbackData, orgId);
    if (!reference) return 'unmatched';
    row = await lockRecipient(db, orgId)
      .where('broadcast_id', '=', reference.broadcastId)
      .where('position', '=', reference.position)
      .executeTakeFirst();
    if (!row || (row.platform_message_id !== null && row.platform_message_id !== report.platformMessageId)) {
      return 'unmatched';
    }
  }
  const key = { org_id: orgId, broadcast_id: row.broadcast_id, position: row.position };
  // decisions §16: the platform's per-user marketing cap (131049) is no failure: the person is tried again after a
  // long backoff, uncharged meanwhile (the platform charges no undelivered message).
  if (report.status === 'failed' && report.error?.code === MARKETING_CAP && ['sending', 'sent'].includes(row.status)) {
    await updateRecipient(db, key)
      .set({
        status: 'queued',
        platform_message_id: null,
        sent_at: null,
        handoff_started_at: null,
        lease_until: null,
        lease_token: null,
        charged: 0,
        error: 'marketing_cap',
        error_message: report.error.message ?? report.error.title ?? null,
        error_code: MARKETING_CAP,
        next_attempt_at: sql`now() + make_interval(secs => ${MARKETING_CAP_BACKOFF_MS / 1000})`,
        updated_at: at,
      })
      .execute();
    await refund(db, [{ ...key, account_id: row.account_id, charged: Number(row.charged), lease_token: '' }]);
    return 'applied';
  }
  const target = report.status;
  const when = report.timestamp;
  if (target !== 'failed' && row.status === 'failed' && row.error === 'handoff_unconfirmed') {
    await applyLateReport(db, { ...key, account_id: row.account_id, contact_id: row.contact_id }, row, report, at);
    await recordSettledMessage(db, key, report, at);
    return 'applied';
  }
  if (!isForward(row.status, target)) {
    // A delivery report that arrives after the read report still tells when it was delivered.
    if (target === 'delivered' && row.status === 'read') {
      await updateRecipient(db, key)
        .set({ delivered_at: sql`coalesce(delivered_at, ${when})` })
        .execute();
    }
    return 'stale';
  }
  const errorMessage = report.error?.message ?? report.error?.title ?? null;
  const changes: Record<string, unknown> = {
    status: target,
    platform_message_id: report.platformMessageId,
    updated_at: at,
  };
  // A report about a message still held in `sending` (its hand-off answer was lost) settles that hand-off.
  if (row.status === 'sending') {
    changes.sent_at = when;
    changes.lease_until = null;
    changes.lease_token = null;
  }
  if (target === 'sent') changes.sent_at = when;
  if (target === 'delivered' || target === 'read') changes.delivered_at = sql`coalesce(delivered_at, ${when})`;
  if (target === 'read') changes.read_at = when;
  if (target === 'failed') {
    changes.failed_at = when;
    // D134: the stable code; the platform's own words in `error_message`.
    changes.error = report.error?.reason ?? 'platform_error';
    changes.error_message = errorMessage;
    changes.error_code = report.error?.code ?? null;
  }
  await updateRecipient(db, key).set(changes).execute();
  if (row.status === 'sending' && target !== 'failed') await recordSettledMessage(db, key, report, at);
  // Only a move out of `sending` changes the pending count, so only then can the broadcast have ended.
  await recordRecipientMoves(db, [key], { mayFinish: row.status === 'sending' });
  if (target !== 'failed' || report.error?.reason === 'not_on_network') {
    await recordReachability(db, orgId, [
      { contactId: row.contact_id, outcome: target === 'failed' ? 'not_on_network' : 'reached' },
    ]);
  }
  return 'applied';
}

/**
 * decisions D176 (§15's guarantee for broadcasts): a recipient that failed only because its hand-off's answer was
 * lost (`handoff_unconfirmed`) and that the platform now reports `sent`, `delivered` or `read` did reach the
 * platform: it moves to that status as if the answer had come, and is charged again the price the reconciler gave
 * back (`unconfirmed_charge`). The pending count does not move (failed and sent are both settled), so the broadcast's
 * end is not looked at again; its event, the contact's reachability and the 24-hour window (the status trigger asks
 * for a recount) follow as for any move.
 */
async function applyLateReport(
  db: Kysely<DB>,
  key: { org_id: string; broadcast_id: string; position: number; account_id: string; contact_id: string },
  row: { unconfirmed_charge: number | string | null },
  report: StatusReport,
  at: Date,
): Promise<void> {
  const when = report.timestamp;
  const price = Number(row.unconfirmed_charge ?? 0);
  await updateRecipient(db, key)
    .set({
      status: report.status,
      platform_message_id: report.platformMessageId,
      error: null,
      error_message: null,
      error_code: null,
      failed_at: null,
      sent_at: when,
      ...(report.status === 'sent' ? {} : { delivered_at: when }),
      ...(report.status === 'read' ? { read_at: when } : {}),
      charged: price,
      unconfirmed_charge: null,
      updated_at: at,
    })
    .execute();
  await adjustBalance(db, key.org_id, key.account_id, -price);
  await recordRecipientMoves(db, [key], { mayFinish: false });
  await recordReachability(db, key.org_id, [{ contactId: key.contact_id, outcome: 'reached' }]);
}

/**
 * A recipient that a report settled without its hand-off's answer (lost, or not recorded yet) joins its contact's
 * conversation from that report, as the record step would have put it there: the template message with the
 * platform's id and the reported status. If the answer is recorded later after all, the record step finds the
 * message there (one message per platform id) and adds none.
 */
async function recordSettledMessage(
  db: Kysely<DB>,
  key: { org_id: string; broadcast_id: string; position: number },
  report: StatusReport,
  at: Date,
): Promise<void> {
  const recipient = await db
    .selectFrom('broadcast_recipients as r')
    .innerJoin('broadcasts as b', (join) =>
      join.onRef('b.org_id', '=', 'r.org_id').onRef('b.id', '=', 'r.broadcast_id'),
    )
    .select(['r.contact_id', 'r.channel_id', 'r.phone', 'b.template_id'])
    .where('r.org_id', '=', key.org_id)
    .where('r.broadcast_id', '=', key.broadcast_id)
    .where('r.position', '=', key.position)
    .executeTakeFirst();
  if (!recipient?.template_id) return;
  const reached = report.status === 'delivered' || report.status === 'read';
  await recordOutboundMessages(
    db,
    key.org_id,
    [
      {
        contactId: recipient.contact_id,
        channelId: recipient.channel_id,
        templateId: recipient.template_id,
        phone: recipient.phone,
        platformMessageId: report.platformMessageId,
        // The body as sent is the hand-off's to know; a report that comes first records the message without it.
        text: null,
        status: report.status,
        deliveredAt: reached ? report.timestamp : null,
        readAt: report.status === 'read' ? report.timestamp : null,
      },
    ],
    at,
  );
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

/**
 * decisions §11: a `broadcast.recipient.updated` event for each recipient a send failed at once (§14 `opted_out`),
 * as every recipient move records it; a broadcast whose every recipient failed at once finishes here, once.
 */
export async function recordFailedAtOnce(
  db: Kysely<DB>,
  rows: Awaited<ReturnType<typeof queueRecipients>>,
): Promise<void> {
  await recordRecipientMoves(db, rows);
}

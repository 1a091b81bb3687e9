// A platform status report applied to a broadcast recipient (decisions §7, §16, D176, D188): found by the platform's
// message id or, for a hand-off whose answer was lost, by our callback reference; forward only; the per-user
// marketing cap requeues; a late report of an unconfirmed hand-off charges it again; a recipient settled without its
// hand-off's answer joins its contact's conversation.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { PlatformEventOf } from '../../messaging/inbound.ts';
import { recordReachability } from '../contacts/contact-intake.ts';
import { recordOutboundMessages } from '../conversations/conversations.repo.ts';
import { adjustBalance } from '../messaging-accounts/accounts.repo.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { MARKETING_CAP, MARKETING_CAP_BACKOFF_MS } from './platform-pacing.ts';
import { recordRecipientMoves } from './recipient-events.ts';
import { refund, updateRecipient } from './recipient-held.ts';
import { isForward, parseCallbackReference } from './recipient-rules.ts';

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
  moves: BroadcastMoves,
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
  await recordRecipientMoves(db, [key], row.status === 'sending' ? moves : null);
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
  await recordRecipientMoves(db, [key], null);
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

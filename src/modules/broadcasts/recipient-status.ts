// Recipient states and the one rule every writer follows: a status never moves backwards (decisions §7).
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';

/** Stored states. `queued` and `cancelled` rows have not been reached and are not listed. */
export const RECIPIENT_LISTED_STATUSES = ['sending', 'sent', 'delivered', 'read', 'failed'] as const;
export type ListedRecipientStatus = (typeof RECIPIENT_LISTED_STATUSES)[number];

const RANK: Record<string, number> = { queued: 0, sending: 1, sent: 2, delivered: 3, read: 4 };

/** True when moving from `from` to `to` is forward (failed only from sending or sent). */
export function isForward(from: string, to: string): boolean {
  if (to === 'failed') return from === 'sending' || from === 'sent';
  const fromRank = RANK[from];
  const toRank = RANK[to];
  return fromRank !== undefined && toRank !== undefined && toRank > fromRank;
}

export interface StatusReport {
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: Date;
  platformMessageId: string;
  /** Our hand-off reference `org|broadcast|position`, when the platform echoed it. */
  callbackData?: string | undefined;
  error?: { code?: number | undefined; message?: string | undefined; reason?: string | undefined } | undefined;
}

/** A broadcast recipient's primary key. */
export interface RecipientKey {
  org_id: string;
  broadcast_id: string;
  position: number;
}

/** An UPDATE of one broadcast recipient, by its primary key. */
export const updateRecipient = (db: Kysely<DB>, key: RecipientKey) =>
  db
    .updateTable('broadcast_recipients')
    .where('org_id', '=', key.org_id)
    .where('broadcast_id', '=', key.broadcast_id)
    .where('position', '=', key.position);

export function callbackReference(orgId: string, broadcastId: string, position: number): string {
  return `${orgId}|${broadcastId}|${position}`;
}

function parseReference(reference: string | undefined, orgId: string) {
  const [org, broadcastId, position] = (reference ?? '').split('|');
  if (org !== orgId || !broadcastId || !position || !/^\d+$/.test(position)) return undefined;
  return { broadcastId, position: Number(position) };
}

/**
 * Applies a platform status report to a broadcast recipient, found by the platform's message id or, for a
 * hand-off whose answer was lost, by our callback reference. Returns whether a recipient changed.
 */
export async function applyRecipientStatus(
  trx: Transaction<DB> | Kysely<DB>,
  orgId: string,
  report: StatusReport,
): Promise<'applied' | 'stale' | 'unmatched'> {
  let row = await trx
    .selectFrom('broadcast_recipients')
    .select(['broadcast_id', 'position', 'status', 'platform_message_id', 'contact_id'])
    .where('org_id', '=', orgId)
    .where('platform_message_id', '=', report.platformMessageId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) {
    const reference = parseReference(report.callbackData, orgId);
    if (!reference) return 'unmatched';
    row = await trx
      .selectFrom('broadcast_recipients')
      .select(['broadcast_id', 'position', 'status', 'platform_message_id', 'contact_id'])
      .where('org_id', '=', orgId)
      .where('broadcast_id', '=', reference.broadcastId)
      .where('position', '=', reference.position)
      .forUpdate()
      .executeTakeFirst();
    if (!row || (row.platform_message_id !== null && row.platform_message_id !== report.platformMessageId)) {
      return 'unmatched';
    }
  }
  const target = report.status;
  if (!isForward(row.status, target)) {
    // A delivery report that arrives after the read report still tells when it was delivered.
    if (target === 'delivered' && row.status === 'read') {
      await updateRecipient(trx, { org_id: orgId, ...row })
        .set({ delivered_at: sql`coalesce(delivered_at, ${report.at})` })
        .execute();
    }
    return 'stale';
  }
  const at = report.at;
  const changes: Record<string, unknown> = {
    status: target,
    platform_message_id: report.platformMessageId,
    updated_at: new Date(),
  };
  // A report about a message still held in `sending` (its hand-off answer was lost) settles that hand-off.
  if (row.status === 'sending') {
    changes.sent_at = at;
    changes.lease_until = null;
    changes.lease_token = null;
  }
  if (target === 'sent') changes.sent_at = at;
  if (target === 'delivered' || target === 'read') changes.delivered_at = sql`coalesce(delivered_at, ${at})`;
  if (target === 'read') changes.read_at = at;
  if (target === 'failed') {
    changes.failed_at = at;
    changes.error = report.error?.message ?? 'failed';
    changes.error_code = report.error?.code ?? null;
  }
  await updateRecipient(trx, { org_id: orgId, ...row })
    .set(changes)
    .execute();
  const outcome =
    target === 'failed' ? (report.error?.reason === 'not_on_network' ? 'not_on_network' : 'failed') : 'sent';
  await updateContactReachability(trx, orgId, row.contact_id, outcome);
  return 'applied';
}

/**
 * contract (messaging_status): an `unverified` contact becomes `verified` after a successful send and
 * `unavailable` after a not-on-the-chat-network answer. Other states are left alone.
 */
export async function updateContactReachability(
  trx: Transaction<DB> | Kysely<DB>,
  orgId: string,
  contactId: string,
  outcome: 'sent' | 'not_on_network' | 'failed',
): Promise<void> {
  if (outcome === 'failed') return;
  await trx
    .updateTable('contacts')
    .set({ messaging_status: outcome === 'sent' ? 'verified' : 'unavailable', updated_at: new Date() })
    .where('org_id', '=', orgId)
    .where('id', '=', contactId)
    // The Cloud API accepts a send (the contact becomes `verified`) and may report 131026 later: the number is
    // not on the network after all, so that report moves a `verified` contact too (issue 13).
    .where('messaging_status', 'in', outcome === 'sent' ? ['unverified'] : ['unverified', 'verified'])
    .execute();
}

// The queue's entry: a send's or a retry's recipients join the queue in the admission's transaction
// (broadcasts/admission.ts), those never handed off `failed` at once with their event.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { recordRecipientMoves } from './recipient-events.ts';

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
 * decisions §11: a `broadcast.recipient.updated` event for each recipient a send failed at once (§14 `opted_out`),
 * as every recipient move records it; a broadcast whose every recipient failed at once finishes here, once.
 */
export async function recordFailedAtOnce(
  db: Kysely<DB>,
  rows: Awaited<ReturnType<typeof queueRecipients>>,
  moves: BroadcastMoves,
): Promise<void> {
  await recordRecipientMoves(db, rows, moves);
}

// The replies' hand-off queue (decisions §15), the broadcasts' guarantees for one message at a time: a reply's
// row is claimed and MARKED in one statement just before the platform is called (a lost lease then means an
// unknown outcome, never a second send); the platform's answer settles it in one transaction; a marked row whose
// answer was lost is settled by the platform's status report (our callback reference) or, after a wait, fails as
// `handoff_unconfirmed`. A conversation's replies are handed off in their accepted order: a row is claimed only when
// no earlier row of its conversation is still queued and none of its conversation is held under a live lease.
import { type Kysely, sql } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import type { FreeformBody, SendComponent } from '../../messaging/platform.ts';
import { recordReachability } from '../contacts/contact-intake.ts';
import { recordEvents } from '../events/events.ts';
import { adjustBalance } from '../messaging-accounts/accounts.repo.ts';
import { askRecount } from '../messaging-accounts/window.repo.ts';
import type { MessageRow } from './conversations.repo.ts';
import { messageEventData } from './message-view.ts';

/** Everything the worker needs to hand a reply off, resolved when the reply was accepted. */
/**
 * A free-form reply as queued: what the platform is sent, or (D294) a media message whose uploaded file the hand-off
 * gives the platform first (`fileId`, replaced by the platform's media id).
 */
export type ReplyBodyRequest =
  | FreeformBody
  | {
      type: 'image' | 'video' | 'audio' | 'document';
      fileId: string;
      caption?: string;
      filename?: string;
    };

export interface ReplyRequest {
  accountId: string;
  phoneNumberId: string;
  to: string;
  /** What the admission took from the balance (a template's price; 0 for text and media): given back on a refusal. */
  charged: number;
  message:
    | { kind: 'freeform'; body: ReplyBodyRequest; replyToPlatformMessageId?: string }
    | { kind: 'template'; templateName: string; language: string; components: SendComponent[] };
}

export interface ClaimedReply {
  org_id: string;
  message_id: string;
  conversation_id: string;
  seq: number;
  attempts: number;
  request: ReplyRequest;
  lease_token: string;
}

/**
 * Claims and marks up to `limit` due replies, each the head of its conversation: one organization at a time, an
 * even share each, the longest due first (D318).
 */
export async function claimReplies(db: Kysely<DB>, options: { limit: number; leaseMs: number; token: string }) {
  const orgs = await db
    .selectFrom('reply_handoffs')
    .select('org_id')
    .where('state', '=', 'queued')
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .groupBy('org_id')
    .orderBy((eb) => eb.fn.min('next_attempt_at'))
    .orderBy('org_id')
    .limit(options.limit)
    .execute();
  const claimed = await claimFairly(
    orgs.map((row) => row.org_id),
    options.limit,
    async (orgId, max) =>
      // D207: by name (polled every 200 ms by each worker). The hand-off's start is the statement's time: Citus runs
      // no volatile function (clock_timestamp) in an UPDATE of a distributed table (D317).
      (
        await executePrepared(
          db,
          sql<ClaimedReply>`
    update reply_handoffs as r set state = 'marked', attempts = r.attempts + 1,
      lease_until = now() + make_interval(secs => ${options.leaseMs / 1000}), lease_token = ${options.token},
      handoff_started_at = statement_timestamp()
    from (
      select q.org_id, q.message_id from reply_handoffs q
      where q.org_id = ${orgId} and q.state = 'queued' and q.next_attempt_at <= now()
        and not exists (select 1 from reply_handoffs o
          where o.org_id = ${orgId} and o.conversation_id = q.conversation_id and o.message_id <> q.message_id
            and ((o.state = 'queued' and o.seq < q.seq) or o.lease_until > now()))
      order by q.next_attempt_at, q.seq
      limit ${max}
      for update skip locked
    ) as due
    where r.org_id = ${orgId} and r.org_id = due.org_id and r.message_id = due.message_id
    returning r.org_id, r.message_id, r.conversation_id, r.seq, r.attempts, r.request, r.lease_token`.compile(db),
        )
      ).rows,
  );
  return claimed.map((row) => ({ ...row, seq: Number(row.seq) }));
}

/** Takes the reply's row out of the queue if this claim still holds it; answers whether it did. */
async function release(trx: Kysely<DB>, reply: ClaimedReply) {
  const deleted = await trx
    .deleteFrom('reply_handoffs')
    .where('org_id', '=', reply.org_id)
    .where('message_id', '=', reply.message_id)
    .where('lease_token', '=', reply.lease_token)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows) === 1;
}

async function moved(trx: Kysely<DB>, orgId: string, rows: MessageRow[], at: Date) {
  if (rows.length === 0) return;
  await recordEvents(
    trx,
    orgId,
    rows.map((row) => ({ type: 'message.updated' as const, data: messageEventData(row) })),
    at,
  );
}

/** The platform took the reply: `sent` (unless a report moved it on first), its contact reached. */
export function recordAccepted(db: Kysely<DB>, reply: ClaimedReply, platformMessageId: string) {
  return transactionWithRetry(db, async (trx) => {
    if (!(await release(trx, reply))) return; // a status report or the reconciler settled it meanwhile
    const at = new Date();
    const rows = await trx
      .updateTable('messages')
      .set({ status: 'sent', platform_message_id: platformMessageId, sent_at: at, updated_at: at })
      .where('org_id', '=', reply.org_id)
      .where('id', '=', reply.message_id)
      .where('status', '=', 'sending')
      .returningAll()
      .execute();
    await moved(trx, reply.org_id, rows, at);
    const contact = rows[0]?.contact_id;
    if (contact) await recordReachability(trx, reply.org_id, [{ contactId: contact, outcome: 'reached' }]);
  });
}

/** The platform refused it: `failed` with the reason, its price given back; `not_on_network` makes the contact unavailable. */
export function recordRefused(db: Kysely<DB>, reply: ClaimedReply, error: string, errorMessage: string) {
  return transactionWithRetry(db, async (trx) => {
    if (!(await release(trx, reply))) return;
    const at = new Date();
    const rows = await trx
      .updateTable('messages')
      .set({ status: 'failed', error, error_message: errorMessage, failed_at: at, updated_at: at })
      .where('org_id', '=', reply.org_id)
      .where('id', '=', reply.message_id)
      .where('status', '=', 'sending')
      .returningAll()
      .execute();
    await adjustBalance(trx, reply.org_id, reply.request.accountId, reply.request.charged);
    await moved(trx, reply.org_id, rows, at);
    const contact = rows[0]?.contact_id;
    if (contact && error === 'not_on_network') {
      await recordReachability(trx, reply.org_id, [{ contactId: contact, outcome: 'not_on_network' }]);
    }
  });
}

/** A refusal worth another try: back to the queue (still the head of its conversation), due after `delayMs`. */
export async function requeue(db: Kysely<DB>, reply: ClaimedReply, delayMs: number) {
  await db
    .updateTable('reply_handoffs')
    .set({
      state: 'queued',
      lease_until: null,
      lease_token: null,
      handoff_started_at: null,
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${delayMs / 1000})`,
    })
    .where('org_id', '=', reply.org_id)
    .where('message_id', '=', reply.message_id)
    .where('lease_token', '=', reply.lease_token)
    .execute();
}

/**
 * No answer: the platform may have taken it. It stays marked (never sent again) and lets go of its lease, so that
 * the conversation's next reply may go; a report or the reconciler settles it.
 */
export async function leaveUnconfirmed(db: Kysely<DB>, reply: ClaimedReply) {
  await db
    .updateTable('reply_handoffs')
    .set({ lease_until: null })
    .where('org_id', '=', reply.org_id)
    .where('message_id', '=', reply.message_id)
    .where('lease_token', '=', reply.lease_token)
    .execute();
}

/**
 * Marked replies whose answer was lost and that no status report settled within `olderThanMs` (and whose lease
 * ran out) fail as `handoff_unconfirmed`, their price given back: never sent again, the platform may have taken them.
 * Their hand-off rows stay, `unconfirmed` and without a lease, keeping the request (account and price) for a later
 * report that the platform took them (D176, settleLateReply).
 */
export async function failUnconfirmedReplies(db: Kysely<DB>, olderThanMs: number, limit = 500): Promise<number> {
  // At least that old, as failUnconfirmed (recipients/recipients.repo.ts) counts it.
  const stale = sql`state = 'marked' and handoff_started_at <= now() - make_interval(secs => ${olderThanMs / 1000})
    and (lease_until is null or lease_until < now())`;
  // One organization per transaction, an even share each (D318).
  const orgs = await sql<{ org_id: string }>`select org_id from reply_handoffs where ${stale}
    group by org_id order by min(handoff_started_at), org_id limit ${limit}`.execute(db);
  const failed = await claimFairly(
    orgs.rows.map((row) => row.org_id),
    limit,
    (orgId, max) =>
      transactionWithRetry(db, async (trx) => {
        const taken = await sql<{ org_id: string; message_id: string; request: ReplyRequest }>`
      update reply_handoffs as r set state = 'unconfirmed', lease_until = null, lease_token = null
      from (
        select org_id, message_id from reply_handoffs where org_id = ${orgId} and ${stale}
        limit ${max} for update skip locked) as old
      where r.org_id = ${orgId} and r.org_id = old.org_id and r.message_id = old.message_id
      returning r.org_id, r.message_id, r.request`.execute(trx);
        const at = new Date();
        for (const row of taken.rows) {
          const failed = await trx
            .updateTable('messages')
            .set({
              status: 'failed',
              error: 'handoff_unconfirmed',
              error_message: 'the platform never confirmed this message',
              failed_at: at,
              updated_at: at,
            })
            .where('org_id', '=', row.org_id)
            .where('id', '=', row.message_id)
            .where('status', '=', 'sending')
            .returningAll()
            .execute();
          if (failed.length > 0) await adjustBalance(trx, row.org_id, row.request.accountId, row.request.charged);
          else await dropHandoff(trx, row.org_id, row.message_id);
          await moved(trx, row.org_id, failed, at);
        }
        return taken.rows;
      }),
  );
  return failed.length;
}

const dropHandoff = (db: Kysely<DB>, orgId: string, messageId: string) =>
  db.deleteFrom('reply_handoffs').where('org_id', '=', orgId).where('message_id', '=', messageId).execute();

/**
 * decisions D176 (§15): the platform reports a reply that failed as `handoff_unconfirmed` sent, delivered or read,
 * so it did take it. Its `unconfirmed` hand-off row leaves the queue and the price the reconciler gave back is
 * charged again (as the admission had taken it); a template reply counted in the 24-hour window asks for its
 * recount, as its failure did. Answers false when no such row is left (nothing to charge: the report is stale).
 */
export async function settleLateReply(
  db: Kysely<DB>,
  orgId: string,
  message: { id: string; window_account_id: string | null; phone: string },
): Promise<boolean> {
  const taken = await db
    .deleteFrom('reply_handoffs')
    .where('org_id', '=', orgId)
    .where('message_id', '=', message.id)
    .where('state', '=', 'unconfirmed')
    .returning('request')
    .executeTakeFirst();
  if (!taken) return false;
  const request = taken.request as ReplyRequest;
  await adjustBalance(db, orgId, request.accountId, -request.charged);
  if (message.window_account_id !== null) await askRecount(db, orgId, message.window_account_id, message.phone);
  return true;
}

/** A status report settled the reply's hand-off: its row leaves the queue. */
export async function settleReplyHandoff(db: Kysely<DB>, orgId: string, messageId: string) {
  await db
    .deleteFrom('reply_handoffs')
    .where('org_id', '=', orgId)
    .where('message_id', '=', messageId)
    .where('state', '=', 'marked')
    .execute();
}

/** Replies waiting for their hand-off (queued or held), all organizations: the queue's depth. */
export async function countPendingReplies(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('reply_handoffs')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('state', '<>', 'unconfirmed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// The hand-off steps of a recipient's life: mark a group just before the platform is called, then record the
// platform's answers for it. A batch's groups go one after another, so the transaction that records one group also
// marks the next: per group, one transaction of three statements (four when a broadcast may have ended: its end check,
// six when it looks ended: its lock and a second look, D359), the end check left by a group whose next group holds
// rows of the same broadcast to that group (D213).

import { type Kysely, type RawBuilder, sql } from 'kysely';
import { executePrepared } from '../../db/prepared-statements.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { groupBy } from '../../lib/group-by.ts';
import { type Reachability, reachabilityUpdate } from '../contacts/contact-intake.ts';
import { type OutboundMessage, outboundMessagesCtes } from '../conversations/conversations.repo.ts';
import type { EventInput } from '../events/event-types.ts';
import { recordEventsCall } from '../events/events.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import type { ClaimedRow } from './claim-charge.ts';
import { slowNumbers } from './platform-pacing.ts';
import {
  RECIPIENT_EVENT_COLUMNS,
  type RecipientEventRow,
  recipientEvents,
  recordFinished,
} from './recipient-events.ts';
import type { RecipientKey } from './recipient-held.ts';
import { type HeldChange, heldUpdate, keyOf, refund, updateHeld } from './recipient-held.ts';
import type { HandoffVerdict } from './recipient-rules.ts';

/**
 * The hand-off mark: from here on a lost lease means an unknown outcome, never a second send. Stamped with the
 * statement's clock, not the transaction's start: the reconciler's wait counts from the mark itself.
 */
const MARK: HeldChange = {
  set: sql`handoff_started_at = statement_timestamp(), updated_at = now()`,
  where: sql`r.status = 'sending' and not exists (select 1 from broadcasts b
    where b.org_id = r.org_id and b.id = r.broadcast_id and b.stored_status = 'cancelled')`,
};

/** Rows of a group that could not be marked (their broadcast was cancelled) join the abandoned tail, refunded. */
async function releaseUnmarked(trx: Kysely<DB>, rows: ClaimedRow[], marked: Set<string>): Promise<ClaimedRow[]> {
  const unmarked = rows.filter((row) => !marked.has(keyOf(row)));
  if (unmarked.length > 0) {
    const released = await updateHeld(trx, unmarked, {
      set: sql`status = 'cancelled', lease_until = null, lease_token = null, charged = 0, updated_at = now()`,
      where: sql`r.status = 'sending' and r.handoff_started_at is null`,
    });
    await refund(
      trx,
      unmarked.filter((row) => released.keys.has(keyOf(row))),
    );
  }
  return rows.filter((row) => marked.has(keyOf(row)));
}

/**
 * Marks a group of claimed rows as handed off, just before the platform is called. Rows whose broadcast was
 * cancelled meanwhile are not marked: they join the abandoned tail and their reservation goes back. Answers the rows
 * that may be sent.
 */
export async function startHandoffs(db: Kysely<DB>, rows: ClaimedRow[]): Promise<ClaimedRow[]> {
  if (rows.length === 0) return [];
  const marked = await updateHeld(db, rows, MARK);
  if (marked.keys.size === rows.length) return rows;
  return transactionWithRetry(db, (trx) => releaseUnmarked(trx, rows, marked.keys));
}

export interface HandoffOutcome {
  row: ClaimedRow;
  verdict: HandoffVerdict;
  /** The template's body as sent (D240), the conversation message's `text`. */
  text?: string | null;
}

type Verdict<K extends HandoffVerdict['kind']> = HandoffOutcome & { verdict: Extract<HandoffVerdict, { kind: K }> };
const ofKind = <K extends HandoffVerdict['kind']>(outcomes: HandoffOutcome[], kind: K) =>
  outcomes.filter((outcome): outcome is Verdict<K> => outcome.verdict.kind === kind);

type Moved = RecipientKey & RecipientEventRow & { moved: boolean };

/**
 * Runs a held update that may take recipients out of the pending count (`moves` says which rows it moved); answers
 * the rows as events show them, and the broadcasts (`org_id id`) whose end the transaction must look at: it locks
 * them only at its end (finishRecorded), so that the record steps of one broadcast, which all wait for that lock,
 * hold it for the last statements only (D191).
 */
async function moveHeld(trx: Kysely<DB>, rows: ClaimedRow[], change: HeldChange, moves: RawBuilder<boolean>) {
  const result = await executePrepared(
    trx,
    sql<Moved>`
    with u as (${heldUpdate(rows, { ...change, returning: sql`${RECIPIENT_EVENT_COLUMNS}, ${moves} as moved` })})
    select u.* from u order by u.org_id, u.broadcast_id, u.position`,
  );
  return {
    rows: result.rows,
    keys: new Set(result.rows.map(keyOf)),
    open: result.rows.filter((row) => row.moved).map((row) => `${row.org_id} ${row.broadcast_id}`),
  };
}

/**
 * decisions §11: `broadcast.finished` for the broadcasts whose recipients this transaction moved, last: read first
 * without a lock, and only those that look ended are locked (after the recipients, as a status report does) and
 * read again by a statement of its own (recordFinished, D359).
 */
async function finishRecorded(trx: Kysely<DB>, moves: BroadcastMoves, open: Set<string>): Promise<void> {
  for (const [orgId, ids] of groupBy([...open], (id) => id.split(' ')[0] as string)) {
    await recordFinished(
      trx,
      moves,
      orgId,
      ids.map((id) => id.split(' ')[1] as string),
    );
  }
}

/** What one organization's share of a group writes beside the recipients, in one statement. */
interface OrgWrites {
  reachability: Reachability[];
  messages: OutboundMessage[];
  events: EventInput[];
}

/**
 * Records the platform's answers for a group of hand-offs, and marks the batch's `next` group, in one transaction:
 * accepted rows become `sent` (unless a report moved them on already), their contacts reachable and their messages
 * part of the conversation; refused rows fail and are refunded; retryable ones go back to the queue, refunded. Only
 * rows still held under their lease change. Uncertain answers change nothing (see failUnconfirmed). Statements: one
 * per kind of answer present for the recipients, one per organization for contacts, conversation messages, events
 * and the next group's marks, and, last, the lock of the broadcasts that may have ended and their check (D191).
 * Answers the rows of `next` that may be sent. The outcomes are one organization's (D318).
 */
export async function recordOutcomes(
  db: Kysely<DB>,
  moves: BroadcastMoves,
  outcomes: HandoffOutcome[],
  next: ClaimedRow[] = [],
  at = new Date(),
): Promise<ClaimedRow[]> {
  // D318: a group is one organization's; a next group of another organization is marked by a transaction of its own.
  const orgId = outcomes[0]?.row.org_id;
  if (orgId !== undefined && next.length > 0 && next[0]?.org_id !== orgId) {
    await recordOutcomes(db, moves, outcomes, [], at);
    return startHandoffs(db, next);
  }
  const accepted = ofKind(outcomes, 'accepted');
  const refused = ofKind(outcomes, 'refused');
  const retried = ofKind(outcomes, 'retry');
  if (accepted.length + refused.length + retried.length === 0) return startHandoffs(db, next);
  // A deadlock's victim wrote nothing and our leases still hold the rows: tried again (D74), so that
  // answers the platform gave are not left to the reconciler (which would fail messages that were sent).
  return transactionWithRetry(db, async (trx) => {
    const writes = new Map<string, OrgWrites>();
    const writesOf = (orgId: string) => {
      const found = writes.get(orgId) ?? { reachability: [], messages: [], events: [] };
      writes.set(orgId, found);
      return found;
    };
    const open = new Set<string>();
    if (accepted.length > 0) {
      // A status report may have settled a row already; then only the message id is filled in. `moved`: this
      // statement made it `sent` (its sent_at is the transaction's time); a row a report settled first had its
      // event with that report (decisions §11: one event per move).
      const settled = await moveHeld(
        trx,
        accepted.map((outcome) => outcome.row),
        {
          set: sql`status = case when r.status = 'sending' then 'sent' else r.status end,
            platform_message_id = v.platform_message_id, sent_at = coalesce(r.sent_at, clock.now),
            lease_until = null, updated_at = now()`,
          columns: [['platform_message_id', 'text', accepted.map((outcome) => outcome.verdict.platformMessageId)]],
        },
        sql<boolean>`(r.status = 'sent' and r.sent_at = clock.now)`,
      );
      for (const id of settled.open) open.add(id);
      for (const [orgId, rows] of groupBy(settled.rows, (row) => row.org_id)) {
        writesOf(orgId).events.push(...recipientEvents(rows.filter((row) => row.moved)));
      }
      const now = new Map(settled.rows.map((row) => [keyOf(row), row]));
      for (const { row, verdict, text } of accepted) {
        const org = writesOf(row.org_id);
        // contract (messaging_status): a successful send makes an `unverified` contact `verified`.
        org.reachability.push({ contactId: row.contact_id, outcome: 'reached' });
        const current = now.get(keyOf(row));
        if (!current) continue;
        org.messages.push({
          contactId: row.contact_id,
          channelId: row.channel_id,
          templateId: row.template_id,
          phone: row.phone,
          platformMessageId: verdict.platformMessageId,
          text: text ?? null,
          status: current.status,
          deliveredAt: current.delivered_at,
          readAt: current.read_at,
        });
      }
    }
    if (refused.length > 0) {
      const rows = refused.map((outcome) => outcome.row);
      const failed = await moveHeld(
        trx,
        rows,
        {
          set: sql`status = 'failed', error = v.error, error_message = v.error_message, error_code = v.error_code,
            failed_at = now(),
            lease_until = null, charged = 0, updated_at = now()`,
          columns: [
            ['error', 'text', refused.map((outcome) => outcome.verdict.error)],
            ['error_message', 'text', refused.map((outcome) => outcome.verdict.message)],
            ['error_code', 'int', refused.map((outcome) => outcome.verdict.code)],
          ],
          where: sql`r.status = 'sending'`,
        },
        sql<boolean>`true`,
      );
      for (const id of failed.open) open.add(id);
      await refund(
        trx,
        rows.filter((row) => failed.keys.has(keyOf(row))),
      );
      for (const [orgId, moved] of groupBy(failed.rows, (row) => row.org_id)) {
        writesOf(orgId).events.push(...recipientEvents(moved));
      }
      for (const { row } of refused.filter((outcome) => outcome.verdict.notOnNetwork)) {
        writesOf(row.org_id).reachability.push({ contactId: row.contact_id, outcome: 'not_on_network' });
      }
    }
    if (retried.length > 0) {
      const rows = retried.map((outcome) => outcome.row);
      const requeued = await updateHeld(trx, rows, {
        // decisions §16: the platform's pacing is not an attempt (`spare` gives the claim's count back).
        set: sql`status = 'queued', handoff_started_at = null, lease_until = null, lease_token = null, charged = 0,
          error = v.error, error_message = v.error_message, error_code = v.error_code, next_attempt_at = to_timestamp(clock.epoch + v.delay),
          attempts = r.attempts - v.spare, updated_at = now()`,
        columns: [
          ['error', 'text', retried.map((outcome) => outcome.verdict.error)],
          ['error_message', 'text', retried.map((outcome) => outcome.verdict.message)],
          ['error_code', 'int', retried.map((outcome) => outcome.verdict.code)],
          ['delay', 'float8', retried.map((outcome) => outcome.verdict.retryAfterMs / 1000)],
          ['spare', 'int', retried.map((outcome) => (outcome.verdict.pacing ? 1 : 0))],
        ],
        where: sql`r.status = 'sending'`,
      });
      await refund(
        trx,
        rows.filter((row) => requeued.keys.has(keyOf(row))),
      );
      await slowNumbers(
        trx,
        retried.filter((outcome) => outcome.verdict.pacing?.slowNumber).map((outcome) => outcome.row),
      );
      const paused = retried.filter((outcome) => outcome.verdict.pacing?.pauseTemplate).map((outcome) => outcome.row);
      for (const [orgId, rows] of groupBy(paused, (row) => row.org_id)) {
        await moves.pauseForTemplates(trx, orgId, [...new Set(rows.map((row) => row.template_id))]);
      }
    }
    let marked: Set<string> | undefined;
    for (const [orgId, org] of writes) {
      const ctes: RawBuilder<unknown>[] = [];
      const reach = reachabilityUpdate(orgId, org.reachability, { contactedAt: at });
      if (reach) ctes.push(sql`reach as (${reach})`);
      const messages = outboundMessagesCtes(orgId, org.messages, at);
      if (messages) ctes.push(messages);
      // The next group's marks ride along with the first organization's statement.
      const mark = marked === undefined && next.length > 0;
      if (mark) ctes.push(sql`mark as (${heldUpdate(next, MARK)})`);
      // By name (D209): its text is fixed by the kinds of rows present, not their number (arrays); its lookups by key
      // (the contacts, the marked recipients with their status) have no wider index to take; planning was a fifth of
      // its time.
      const result = await executePrepared(
        trx,
        sql<{ marked: RecipientKey[] | null }>`
        ${ctes.length > 0 ? sql`with ${sql.join(ctes)}` : sql``}
        select ${recordEventsCall(orgId, org.events, at)} as queued,
          ${mark ? sql`(select json_agg(json_build_object('org_id', org_id, 'broadcast_id', broadcast_id, 'position', position)) from mark)` : sql`null`} as marked`,
      );
      if (mark) marked = new Set((result.rows[0]?.marked ?? []).map(keyOf));
    }
    if (marked === undefined && next.length > 0) marked = (await updateHeld(trx, next, MARK)).keys;
    const sendable = marked === undefined ? [] : await releaseUnmarked(trx, next, marked);
    // D213: a broadcast with rows in the group this transaction marks cannot end before those rows leave `sending`,
    // which only a later transaction can do (this worker's record of that group, a status report, the reconciler's
    // `handoff_unconfirmed`), and that one checks its end. The check, and the wait for the broadcast's lock, are left
    // to it: a batch's last group checks, its earlier ones do not.
    for (const row of sendable) open.delete(`${row.org_id} ${row.broadcast_id}`);
    await finishRecorded(trx, moves, open);
    return sendable;
  });
}

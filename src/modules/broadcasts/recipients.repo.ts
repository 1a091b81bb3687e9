// One owner for a broadcast recipient's life. Every write of broadcast_recipients is one of these named steps:
// queue (the send), claim (recipient-claim.ts), start hand-offs, record outcomes (in batches), fail unconfirmed
// hand-offs, cancel the tail, apply a platform report. The rules they follow are in recipient-rules.ts.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { PlatformEventOf } from '../../messaging/webhooks.ts';
import { recordReachability } from '../contacts/contact-intake.ts';
import { recordOutboundMessages } from '../conversations/conversations.repo.ts';
import { adjustBalance, type ClaimedRow, type RecipientKey, updateRecipient } from './recipient-claim.ts';
import { recordRecipientMoves } from './recipient-events.ts';
import { type HandoffVerdict, isForward, parseCallbackReference } from './recipient-rules.ts';

export { type ClaimedRow, type ClaimOptions, claimRecipients } from './recipient-claim.ts';

const keyOf = (row: RecipientKey) => `${row.org_id}\u0000${row.broadcast_id}\u0000${row.position}`;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/** A column of per-row values for `updateHeld`: its name, its SQL type and one value per row. */
type Column = [name: string, type: 'text' | 'int' | 'float8', values: unknown[]];

/**
 * Updates the given rows of a batch in one statement, where each is still held under its claim's lease: the rows
 * travel as arrays that `unnest` turns back into rows (`v.<column>` in `set`), with any per-row columns given.
 * `where` narrows further. Answers the keys of the rows that changed, and any columns `returning` names.
 */
async function updateHeld<Returned extends object = object>(
  db: Kysely<DB>,
  rows: ClaimedRow[],
  change: {
    set: RawBuilder<unknown>;
    columns?: Column[];
    where?: RawBuilder<unknown>;
    returning?: RawBuilder<unknown>;
  },
) {
  const columns: Column[] = [
    ['org_id', 'text', rows.map((row) => row.org_id)],
    ['broadcast_id', 'text', rows.map((row) => row.broadcast_id)],
    ['position', 'int', rows.map((row) => row.position)],
    ['lease_token', 'text', rows.map((row) => row.lease_token)],
    ...(change.columns ?? []),
  ];
  const arrays = sql.join(columns.map(([, type, values]) => sql`${values}::${sql.raw(type)}[]`));
  const names = sql.raw(columns.map(([name]) => name).join(', '));
  const result = await sql<RecipientKey & Returned>`
    update broadcast_recipients as r set ${change.set}
    from unnest(${arrays}) as v(${names})
    where r.org_id = v.org_id and r.broadcast_id = v.broadcast_id and r.position = v.position
      and r.lease_token = v.lease_token and ${change.where ?? sql`true`}
    returning r.org_id, r.broadcast_id, r.position${change.returning ? sql`, ${change.returning}` : sql``}`.execute(db);
  return { rows: result.rows, keys: new Set(result.rows.map(keyOf)) };
}

/** Gives back what the given claimed rows reserved, one balance update per account. */
async function refund(db: Kysely<DB>, rows: ClaimedRow[]): Promise<void> {
  for (const group of groupBy(rows, (row) => `${row.org_id}\u0000${row.account_id}`).values()) {
    const { org_id, account_id } = group[0] as ClaimedRow;
    await adjustBalance(
      db,
      org_id,
      account_id,
      group.reduce((sum, row) => sum + Number(row.charged), 0),
    );
  }
}

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
 * Marks a group of claimed rows as handed off, just before the platform is called: from here on a lost lease means
 * an unknown outcome, never a second send. Rows whose broadcast was cancelled meanwhile are not marked: they join
 * the abandoned tail and their reservation goes back. Answers the rows that may be sent.
 */
export async function startHandoffs(db: Kysely<DB>, rows: ClaimedRow[]): Promise<ClaimedRow[]> {
  if (rows.length === 0) return [];
  const marked = await updateHeld(db, rows, {
    set: sql`handoff_started_at = now(), updated_at = now()`,
    where: sql`r.status = 'sending' and not exists (select 1 from broadcasts b
      where b.org_id = r.org_id and b.id = r.broadcast_id and b.stored_status = 'cancelled')`,
  });
  const unmarked = rows.filter((row) => !marked.keys.has(keyOf(row)));
  if (unmarked.length > 0) {
    await db.transaction().execute(async (trx) => {
      const released = await updateHeld(trx, unmarked, {
        set: sql`status = 'cancelled', lease_until = null, lease_token = null, charged = 0, updated_at = now()`,
        where: sql`r.status = 'sending' and r.handoff_started_at is null`,
      });
      await refund(
        trx,
        unmarked.filter((row) => released.keys.has(keyOf(row))),
      );
    });
  }
  return rows.filter((row) => marked.keys.has(keyOf(row)));
}

export interface HandoffOutcome {
  row: ClaimedRow;
  verdict: HandoffVerdict;
}

type Verdict<K extends HandoffVerdict['kind']> = { row: ClaimedRow; verdict: Extract<HandoffVerdict, { kind: K }> };
const ofKind = <K extends HandoffVerdict['kind']>(outcomes: HandoffOutcome[], kind: K) =>
  outcomes.filter((outcome): outcome is Verdict<K> => outcome.verdict.kind === kind);

/**
 * Records the platform's answers for a group of hand-offs in one transaction, one statement per kind of answer:
 * accepted rows become `sent` (unless a report moved them on already), their contacts reachable and their messages
 * part of the conversation; refused rows fail and are refunded; retryable ones go back to the queue, refunded.
 * Only rows still held under their lease change. Uncertain answers change nothing (see failUnconfirmed).
 */
export async function recordOutcomes(db: Kysely<DB>, outcomes: HandoffOutcome[], at = new Date()): Promise<void> {
  const accepted = ofKind(outcomes, 'accepted');
  const refused = ofKind(outcomes, 'refused');
  const retried = ofKind(outcomes, 'retry');
  if (accepted.length + refused.length + retried.length === 0) return;
  await db.transaction().execute(async (trx) => {
    if (accepted.length > 0) {
      // A status report may have settled a row already; then only the message id is filled in.
      const settled = await updateHeld<{
        status: string;
        delivered_at: Date | null;
        read_at: Date | null;
        moved: boolean;
      }>(
        trx,
        accepted.map((outcome) => outcome.row),
        {
          set: sql`status = case when r.status = 'sending' then 'sent' else r.status end,
            platform_message_id = v.platform_message_id, sent_at = coalesce(r.sent_at, now()),
            lease_until = null, updated_at = now()`,
          columns: [['platform_message_id', 'text', accepted.map((outcome) => outcome.verdict.platformMessageId)]],
          // `moved`: this statement made it `sent` (its sent_at was null and is now the transaction's time); a row
          // a report settled first had its event with that report (decisions §11: one event per move).
          returning: sql`r.status, r.delivered_at, r.read_at, (r.status = 'sent' and r.sent_at = now()) as moved`,
        },
      );
      await recordRecipientMoves(
        trx,
        settled.rows.filter((row) => row.moved),
      );
      const now = new Map(settled.rows.map((row) => [keyOf(row), row]));
      for (const [orgId, group] of groupBy(accepted, (outcome) => outcome.row.org_id)) {
        // contract (messaging_status): a successful send makes an `unverified` contact `verified`.
        await recordReachability(
          trx,
          orgId,
          group.map(({ row }) => ({ contactId: row.contact_id, outcome: 'reached' as const })),
          { contactedAt: at },
        );
        const recorded = group.flatMap(({ row, verdict }) => {
          const current = now.get(keyOf(row));
          if (!current) return [];
          return [
            {
              contactId: row.contact_id,
              channelId: row.channel_id,
              templateId: row.template_id,
              phone: row.phone,
              platformMessageId: verdict.platformMessageId,
              status: current.status,
              deliveredAt: current.delivered_at,
              readAt: current.read_at,
            },
          ];
        });
        await recordOutboundMessages(trx, orgId, recorded, at);
      }
    }
    if (refused.length > 0) {
      const rows = refused.map((outcome) => outcome.row);
      const failed = await updateHeld(trx, rows, {
        set: sql`status = 'failed', error = v.error, error_code = v.error_code, failed_at = now(),
          lease_until = null, charged = 0, updated_at = now()`,
        columns: [
          ['error', 'text', refused.map((outcome) => outcome.verdict.error)],
          ['error_code', 'int', refused.map((outcome) => outcome.verdict.code)],
        ],
        where: sql`r.status = 'sending'`,
      });
      await refund(
        trx,
        rows.filter((row) => failed.keys.has(keyOf(row))),
      );
      await recordRecipientMoves(trx, failed.rows);
      const unreachable = refused.filter((outcome) => outcome.verdict.notOnNetwork);
      for (const [orgId, group] of groupBy(unreachable, (outcome) => outcome.row.org_id)) {
        await recordReachability(
          trx,
          orgId,
          group.map(({ row }) => ({ contactId: row.contact_id, outcome: 'not_on_network' as const })),
        );
      }
    }
    if (retried.length > 0) {
      const rows = retried.map((outcome) => outcome.row);
      const requeued = await updateHeld(trx, rows, {
        set: sql`status = 'queued', handoff_started_at = null, lease_until = null, lease_token = null, charged = 0,
          error = v.error, error_code = v.error_code, next_attempt_at = now() + make_interval(secs => v.delay),
          updated_at = now()`,
        columns: [
          ['error', 'text', retried.map((outcome) => outcome.verdict.error)],
          ['error_code', 'int', retried.map((outcome) => outcome.verdict.code)],
          ['delay', 'float8', retried.map((outcome) => outcome.verdict.retryAfterMs / 1000)],
        ],
        where: sql`r.status = 'sending'`,
      });
      await refund(
        trx,
        rows.filter((row) => requeued.keys.has(keyOf(row))),
      );
    }
  });
}

/**
 * Hand-offs whose answer was lost and that no status report settled within `olderThanMs` fail as
 * `handoff_unconfirmed` and are refunded (never sent again: the platform may have taken them).
 */
export async function failUnconfirmed(db: Kysely<DB>, olderThanMs: number, limit = 500): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const stale = await sql<ClaimedRow>`
      update broadcast_recipients as r set status = 'failed',
        error = 'handoff_unconfirmed: the platform never confirmed this message',
        failed_at = now(), lease_until = null, charged = 0, updated_at = now()
      from (select org_id, broadcast_id, position, charged from broadcast_recipients
            where status = 'sending' and handoff_started_at is not null
              and handoff_started_at < now() - make_interval(secs => ${olderThanMs / 1000})
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
    .where('status', '=', 'queued')
    .execute();
}

type StatusReport = PlatformEventOf<'message_status'>;

const lockRecipient = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('broadcast_recipients')
    .select(['broadcast_id', 'position', 'status', 'platform_message_id', 'contact_id'])
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
  const target = report.status;
  const when = report.timestamp;
  if (!isForward(row.status, target)) {
    // A delivery report that arrives after the read report still tells when it was delivered.
    if (target === 'delivered' && row.status === 'read') {
      await updateRecipient(db, key)
        .set({ delivered_at: sql`coalesce(delivered_at, ${when})` })
        .execute();
    }
    return 'stale';
  }
  const error = report.error?.message ?? report.error?.title;
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
    changes.error = error ?? 'failed';
    changes.error_code = report.error?.code ?? null;
  }
  await updateRecipient(db, key).set(changes).execute();
  // Only a move out of `sending` changes the pending count, so only then can the broadcast have ended.
  await recordRecipientMoves(db, [key], { mayFinish: row.status === 'sending' });
  if (target !== 'failed' || report.error?.reason === 'not_on_network') {
    await recordReachability(db, orgId, [
      { contactId: row.contact_id, outcome: target === 'failed' ? 'not_on_network' : 'reached' },
    ]);
  }
  return 'applied';
}

/** What a listed recipient shows (the page of `GET /v1/broadcasts/{id}/recipients`). */
const LISTED_COLUMNS = [
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
] as const;

/**
 * contract: only recipients the worker has reached are listed; the page and the exact count side by side. A page of a broadcast's recipients (in position order) with the total of the filter, in one statement (issue 9:
 * one round trip per read): the broadcast row leads, so `found` is false when it does not exist for `orgId`; the
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
          .selectFrom('broadcast_recipients')
          .select([...LISTED_COLUMNS])
          .where('org_id', '=', orgId)
          .where('broadcast_id', '=', broadcastId)
          .where('status', 'in', statuses);
        if (filter.afterPosition !== undefined) page = page.where('position', '>', filter.afterPosition);
        return page.orderBy('position').limit(filter.limit).as('r');
      },
      (join) => join.onTrue(),
    )
    .select(['t.total', ...LISTED_COLUMNS.map((column) => `r.${column}` as const)])
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

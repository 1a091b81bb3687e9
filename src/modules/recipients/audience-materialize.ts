// decisions §16, adding an audience broadcast's recipients: the snapshot (contacts created up to the start, in order
// of creation) is read in keyset chunks, each one set-based INSERT … SELECT (no contact goes through Node) whose
// transaction also advances the broadcast's checkpoint and `requested` (the broadcasts' owner's write, D349): the
// checkpoint moves only with the rows it wrote, so a crash mid-way resumes after the last committed chunk without a
// duplicate recipient. A chunk's rows are handed off as soon as it commits (hand-offs start with the first chunk).
//
// Pacing: the rows of a chunk that would take a new phone beyond the rolling 24-hour limit's room are `held` (not
// counted in the window); `releaseHeld` queues them as room comes back, and `held_until` says when that is. Both
// steps lock the broadcast first, then the account's 24-hour window (not the account row; D183).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { reachableContact, storedAudienceCondition } from '../contacts/contact-audience.ts';
import type { ContactFilters } from '../contacts/contacts.schemas.ts';
import { honoursOptOut } from '../messaging-accounts/admission.ts';
import { nextRoom, roomOf, takesRoom } from '../messaging-accounts/window.repo.ts';
import { type ContactToken, tokenValue, tokenValues } from './audience-components.ts';
import type { BroadcastMoves } from './broadcast-moves.ts';
import { recordFinished, recordRecipientMoves } from './recipient-events.ts';

const BROADCAST_COLUMNS = [
  'org_id',
  'id',
  'account_id',
  'channel_id',
  'template_category',
  'audience',
  'base_components',
  'contact_tokens',
  'requested',
  'held_until',
] as const;

/**
 * Locks the broadcast if it is still `phase` and not cancelled. It waits for the lock rather than skipping it: the
 * fan-out's record step holds it for a moment with every recipient it moves, and a skipped chunk waited a whole
 * poll interval (D183). Under READ COMMITTED the row is read again once the lock is granted, with the latest
 * checkpoint, phase and status another worker committed.
 */
const lockInPhase = (trx: Kysely<DB>, orgId: string, broadcastId: string) =>
  trx
    .selectFrom('broadcasts')
    .select(BROADCAST_COLUMNS)
    // The snapshot's bounds as text, not as JavaScript Dates (which would drop the timestamps' microseconds): the
    // chunk gives them back as parameters, so that the checkpoint bounds its index scan (D189).
    .select([
      sql<string>`snapshot_at::text`.as('snapshot_text'),
      sql<string>`coalesce(checkpoint_created_at, '-infinity')::text`.as('after_at_text'),
      sql<string>`coalesce(checkpoint_id, '')`.as('after_id'),
    ])
    .where('org_id', '=', orgId)
    .where('id', '=', broadcastId)
    .where((eb) => eb.or([eb('stored_status', 'is', null), eb('stored_status', '!=', 'cancelled')]))
    .forUpdate();

/** What a chunk's statement answers. */
interface Outcome {
  added: number;
  held: number;
  failed: number[] | null;
  /** The contacts of the snapshot it read (all of them written, some failed or held). */
  taken: number;
  last_at: string | null;
  last_id: string | null;
}

type Locked = NonNullable<Awaited<ReturnType<ReturnType<typeof lockInPhase>['executeTakeFirst']>>>;

/**
 * A chunk of the oldest preparing broadcast of each organization that has one, up to `orgLimit` organizations, the
 * longest preparing first (D318: found by a read without locks grouped by organization, then each organization's
 * step names it). Answers the recipients it added (0: none to work on).
 */
export async function materializeChunk(
  db: Kysely<DB>,
  moves: BroadcastMoves,
  chunkSize: number,
  orgLimit = 10,
): Promise<number> {
  const orgs = await preparing(db)
    .select('org_id')
    .groupBy('org_id')
    .orderBy(sql`min(started_at)`)
    .orderBy('org_id')
    .limit(orgLimit)
    .execute();
  let added = 0;
  for (const { org_id } of orgs) added += await materializeChunkOf(db, moves, org_id, chunkSize);
  return added;
}

/** Started broadcasts still adding their recipients. */
const preparing = (db: Kysely<DB>) =>
  db
    .selectFrom('broadcasts')
    .where('phase', '=', 'preparing')
    .where('started_at', 'is not', null)
    // A broadcast cancelled while preparing keeps its phase: were it picked, the step would find nothing to do and
    // every younger broadcast would wait behind it.
    .where((eb) => eb.or([eb('stored_status', 'is', null), eb('stored_status', '!=', 'cancelled')]));

/** One chunk of the organization's oldest preparing broadcast. */
async function materializeChunkOf(db: Kysely<DB>, moves: BroadcastMoves, orgId: string, chunkSize: number) {
  const candidate = await preparing(db)
    .select(['org_id', 'id', 'account_id'])
    .where('org_id', '=', orgId)
    .orderBy('started_at')
    .limit(1)
    .executeTakeFirst();
  if (!candidate) return 0;
  return transactionWithRetry(db, async (trx) => {
    const broadcast = await lockInPhase(trx, candidate.org_id, candidate.id)
      .where('phase', '=', 'preparing')
      .executeTakeFirst();
    if (!broadcast) return 0;
    const room = await roomOf(trx, broadcast.org_id, broadcast.account_id);
    const audience = await storedAudienceCondition(trx, broadcast.org_id, (broadcast.audience ?? {}) as ContactFilters);
    // A property the audience names was deleted since the 202: nobody more matches.
    const where = audience.kind === 'condition' ? audience.where : sql`false`;
    return addChunk(trx, moves, broadcast, where, room, chunkSize);
  });
}

async function addChunk(
  trx: Kysely<DB>,
  moves: BroadcastMoves,
  b: Locked,
  where: RawBuilder<unknown>,
  room: number,
  chunkSize: number,
): Promise<number> {
  const tokens = (b.contact_tokens ?? []) as ContactToken[];
  const values = tokens.map((token, index) => sql`${tokenValue(token)} as ${sql.ref(`t${index}`)}`);
  const missing = tokens.length
    ? sql.join(
        tokens.map((_, index) => sql`${sql.ref(`k.t${index}`)} is null`),
        sql` or `,
      )
    : sql`false`;
  const optedOut = honoursOptOut(b.template_category) ? sql`k.opted_out` : sql`false`;
  // Earlier rows still held keep the room for themselves (hand-offs in the order of the snapshot).
  const free = b.held_until === null ? room : 0;
  // D170: with room for the whole chunk nobody can be held, so the window is not read at all.
  const fresh = free >= chunkSize ? sql<boolean>`false` : takesRoom(b.org_id, b.account_id, sql`k.phone`);
  const result = await sql<Outcome>`
    with ranked as (
      -- One pass in the order of contacts_created_id_idx (D189): the window runs over the ordered chunk, no sort.
      select j.*, row_number() over w as n,
        sum(case when not j.missing and not j.opted and j.fresh then 1 else 0 end) over w as fresh_rank
      from (
        select k.*, (${missing}) as missing, (${optedOut}) as opted, ${fresh} as fresh
        from (
          -- The next contacts of the snapshot after the checkpoint.
          select c.id, c.phone, c.created_at, c.opted_out${values.length ? sql`, ${sql.join(values)}` : sql``}
          from contacts c
          where c.org_id = ${b.org_id} and ${reachableContact} and c.created_at <= ${b.snapshot_text}::timestamptz
            and (c.created_at, c.id) > (${b.after_at_text}::timestamptz, ${b.after_id}) and ${where}
          order by c.created_at, c.id
          limit ${chunkSize}
        ) k
      ) j
      window w as (order by j.created_at, j.id rows unbounded preceding)
    ), inserted as (
      insert into broadcast_recipients (org_id, broadcast_id, position, account_id, channel_id, contact_id, phone,
        send_values, status, error, failed_at)
      select ${b.org_id}, ${b.id}, ${b.requested} + k.n - 1, ${b.account_id}, ${b.channel_id}, k.id, k.phone,
        ${tokenValues(tokens, 'k')},
        case when k.missing or k.opted then 'failed' when k.fresh and k.fresh_rank > ${free} then 'held'
          else 'queued' end,
        case when k.missing then 'missing_variables' when k.opted then 'opted_out' end,
        case when k.missing or k.opted then now() end
      from ranked k
      returning position, status
    ), size as (
      select count(*) as added from ranked
    ), last as (
      select created_at, id from ranked where n = (select added from size)
    )
    select (select count(*) from inserted)::int as added,
      (select count(*) from inserted where status = 'held')::int as held,
      (select array_agg(position) from inserted where status = 'failed') as failed,
      (select added from size)::int as taken,
      -- The checkpoint's time as text, microseconds kept (D189).
      (select created_at::text from last) as last_at, (select id from last) as last_id`.execute(trx);
  const outcome = result.rows[0] as Outcome;
  // D349: the broadcast's `requested`, checkpoint and phase, by its owner in this transaction (under its lock): one
  // statement more per chunk, none per recipient.
  const done = outcome.taken < chunkSize;
  const last =
    outcome.last_at !== null && outcome.last_id !== null ? { createdAt: outcome.last_at, id: outcome.last_id } : null;
  await moves.advanceAudience(trx, b.org_id, b.id, { added: outcome.taken, last, done });
  if (outcome.held > 0) await moves.setHeldUntil(trx, b.org_id, b.id, await nextRoom(trx, b.org_id, b.account_id));
  // decisions §11, §14: recipients failed at once have their event, as in a send.
  const failed = (outcome.failed ?? []).map((position) => ({ org_id: b.org_id, broadcast_id: b.id, position }));
  await recordRecipientMoves(trx, failed, null);
  // The last chunk: a broadcast with nothing pending (nobody matched, all failed at once) ends here.
  if (done) await recordFinished(trx, moves, b.org_id, [b.id]);
  return Math.max(outcome.added, 1);
}

/**
 * Queues held recipients of broadcasts whose `held_until` has come, as far as the window has room now (in position
 * order; a phone already in the window takes no room): the longest due broadcast of each organization that has one,
 * up to `orgLimit` organizations (D318, as materializeChunk). Answers how many it queued.
 */
export async function releaseHeld(
  db: Kysely<DB>,
  moves: BroadcastMoves,
  chunkSize: number,
  orgLimit = 10,
): Promise<number> {
  const orgs = await holding(db)
    .select('org_id')
    .groupBy('org_id')
    .orderBy(sql`min(held_until)`)
    .orderBy('org_id')
    .limit(orgLimit)
    .execute();
  let released = 0;
  for (const { org_id } of orgs) released += await releaseHeldOf(db, moves, org_id, chunkSize);
  return released;
}

/** Live broadcasts whose held recipients are due a look. */
const holding = (db: Kysely<DB>) =>
  db.selectFrom('broadcasts').where('held_until', '<=', sql<Date>`now()`).where('stored_status', 'is', null);

/** The held recipients of the organization's longest due broadcast. */
async function releaseHeldOf(db: Kysely<DB>, moves: BroadcastMoves, orgId: string, chunkSize: number) {
  const candidate = await holding(db)
    .select(['org_id', 'id', 'account_id'])
    .where('org_id', '=', orgId)
    .orderBy('held_until')
    .limit(1)
    .executeTakeFirst();
  if (!candidate) return 0;
  return transactionWithRetry(db, async (trx) => {
    const b = await lockInPhase(trx, candidate.org_id, candidate.id)
      .where('held_until', '<=', sql<Date>`now()`)
      .executeTakeFirst();
    if (!b) return 0;
    const room = await roomOf(trx, b.org_id, b.account_id);
    const released = await sql<{ released: number; left: boolean }>`
      with held as (
        select position, ${takesRoom(b.org_id, b.account_id, sql`r.phone`)} as fresh
        from broadcast_recipients r
        where r.org_id = ${b.org_id} and r.broadcast_id = ${b.id} and r.status = 'held'
        order by position limit ${chunkSize}
      ), ranked as (
        select position, fresh, sum(case when fresh then 1 else 0 end) over (order by position) as fresh_rank from held
      ), queued as (
        update broadcast_recipients r set status = 'queued', queued_at = now(), next_attempt_at = now(),
          updated_at = now()
        from ranked k
        where r.org_id = ${b.org_id} and r.broadcast_id = ${b.id} and r.position = k.position
          and (not k.fresh or k.fresh_rank <= ${room})
        returning r.position
      )
      select (select count(*) from queued)::int as released,
        (select count(*) from held) > (select count(*) from queued) as left`.execute(trx);
    const outcome = released.rows[0] as { released: number; left: boolean };
    // Still held ones wait for the window's next room.
    const more = await trx
      .selectFrom('broadcast_recipients')
      .select('position')
      .where('org_id', '=', b.org_id)
      .where('broadcast_id', '=', b.id)
      .where('status', '=', 'held')
      .limit(1)
      .executeTakeFirst();
    // Rows left beyond this chunk with room to spare are looked at again at once; else when the window has room.
    const heldUntil = !more ? null : outcome.left ? await nextRoom(trx, b.org_id, b.account_id) : new Date();
    await moves.setHeldUntil(trx, b.org_id, b.id, heldUntil);
    return Math.max(outcome.released, 1);
  });
}

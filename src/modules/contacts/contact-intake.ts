// Contacts own every contact write that the messaging side causes:
// - one intake for "the live contact with this phone, created when there is none" (sends to unknown phones,
//   inbound messages from unknown phones);
// - the one place that moves `messaging_status` (contract: messaging_status rules; decisions §5).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { recordEvents } from '../events/events.ts';
import { findInitialStage } from '../funnel-stages/funnel-stages.repo.ts';
import { present } from './contact-view.ts';
import { CONTACT_COLUMNS } from './contacts.repo.ts';
import type { Contact } from './contacts.schemas.ts';

export type MessagingStatus = Contact['messaging_status'];

/** contract: a new contact starts `unverified` with a phone on file and `unavailable` without. */
export function initialMessagingStatus(phone: string | null | undefined): MessagingStatus {
  return phone ? 'unverified' : 'unavailable';
}

/**
 * decisions §5: setting a phone makes the contact `unverified` (a new number has not been verified either),
 * removing it makes it `unavailable`; the same phone changes nothing (undefined).
 */
export function messagingStatusAfterPhoneChange(
  previous: string | null,
  next: string | null,
): MessagingStatus | undefined {
  return next === previous ? undefined : initialMessagingStatus(next);
}

export interface PhoneIntake {
  /** E.164. */
  phone: string;
  /** The sender's profile name on the chat network, used as the first name of a contact made here. */
  firstName?: string | undefined;
}

export interface IntakeOptions {
  /** decisions §5: `API` for a send to an unknown phone; `OTHER` for someone who wrote to a connected number. */
  origin: 'API' | 'OTHER';
  at?: Date | undefined;
  /**
   * The caller has just looked these phones up and found no live contact: the intake goes straight to the insert
   * (a contact made meanwhile still meets it on the unique index and is read back), one statement fewer.
   */
  knownMissing?: boolean | undefined;
}

/**
 * The live contact of each phone, made when there is none. Race-safe: concurrent intakes of one phone meet on the
 * unique index of live phones (contacts_phone_uq); the loser inserts nothing and reads the winner's row (a new
 * statement sees rows committed meanwhile). Answers phone -> {id, created}.
 */
export async function contactsForPhones(
  db: Kysely<DB>,
  orgId: string,
  intakes: PhoneIntake[],
  options: IntakeOptions,
): Promise<Map<string, { id: string; created: boolean }>> {
  const found = new Map<string, { id: string; created: boolean }>();
  if (intakes.length === 0) return found;
  const phones = [...new Set(intakes.map((intake) => intake.phone))];
  const existing = options.knownMissing ? [] : await livePhones(db, orgId, phones);
  for (const row of existing) found.set(row.phone as string, { id: row.id, created: false });
  const missing = intakes.filter((intake) => !found.has(intake.phone));
  if (missing.length === 0) return found;
  // decisions §5: a new contact starts in the initial funnel stage when the organization has one.
  const stage = await findInitialStage(db, orgId);
  const at = options.at;
  const inserted = await db
    .insertInto('contacts')
    .values(
      [...new Map(missing.map((intake) => [intake.phone, intake])).values()].map((intake) => ({
        org_id: orgId,
        id: newId('ct'),
        phone: intake.phone,
        first_name: intake.firstName?.slice(0, 120) ?? null,
        origin: options.origin,
        messaging_status: initialMessagingStatus(intake.phone),
        funnel_stage_id: stage?.id ?? null,
        ...(at ? { created_at: at, updated_at: at } : {}),
      })),
    )
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'phone']).where('deleted_at', 'is', null).where('phone', 'is not', null).doNothing(),
    )
    .returning(CONTACT_COLUMNS)
    .execute();
  for (const row of inserted) found.set(row.phone as string, { id: row.id, created: true });
  // decisions §11: `contact.created` in the caller's transaction, for the contacts this intake made (a new contact
  // has no property values yet), one recordEvents for the batch.
  await recordEvents(
    db,
    orgId,
    inserted.map((row) => ({ type: 'contact.created', data: present(row, {}) })),
  );
  const raced = phones.filter((phone) => !found.has(phone));
  if (raced.length > 0) {
    for (const row of await livePhones(db, orgId, raced))
      found.set(row.phone as string, { id: row.id, created: false });
    const lost = raced.find((phone) => !found.has(phone));
    if (lost) throw new Error('contact insert conflicted but no live contact has the phone');
  }
  return found;
}

const livePhones = (db: Kysely<DB>, orgId: string, phones: string[]) =>
  db
    .selectFrom('contacts')
    .select(['id', 'phone'])
    .where('org_id', '=', orgId)
    .where('phone', 'in', phones)
    .where('deleted_at', 'is', null)
    .execute();

/** What a message's outcome says about its contact's reachability on the chat network. */
export type ReachabilityOutcome = 'reached' | 'not_on_network';

export interface Reachability {
  contactId: string;
  outcome: ReachabilityOutcome;
}

/**
 * contract (messaging_status): an `unverified` contact becomes `verified` after a successful send and
 * `unavailable` after a not-on-the-chat-network answer (also once `verified`: see below); `unavailable` stays. One statement for a batch.
 * With `contactedAt`, reached contacts also record when they were last contacted (a hand-off the platform took).
 * D206: the agent's writes keep `updated_at` (like `last_contacted_at`, they record no `contact.updated` either):
 * no indexed column changes, so in the room contacts keep in their pages (migration 0030) the write is HOT.
 */
export async function recordReachability(
  db: Kysely<DB>,
  orgId: string,
  entries: Reachability[],
  options: { contactedAt?: Date } = {},
): Promise<void> {
  const update = reachabilityUpdate(orgId, entries, options);
  if (update) await update.execute(db);
}

/**
 * recordReachability's one statement, for a caller that runs it as a data-modifying CTE of a larger statement
 * (the fan-out records a group's answers in one); null when there is nothing to record.
 */
export function reachabilityUpdate(
  orgId: string,
  entries: Reachability[],
  options: { contactedAt?: Date } = {},
): RawBuilder<unknown> | null {
  if (entries.length === 0) return null;
  // One outcome per contact: the last one reported in the batch wins. The organization travels with each row and
  // joins by the whole key: compared with a constant, the plan followed the organization's statistics, and for one
  // ANALYZE had not yet seen it hashed all its contacts for each group of 16 (19,996 rows, 26 ms; D197).
  const byContact = new Map(entries.map((entry) => [entry.contactId, entry.outcome]));
  const ids = [...byContact.keys()];
  const outcomes = ids.map((id) => byContact.get(id) as ReachabilityOutcome);
  const next = sql<string>`case v.outcome when 'reached' then 'verified' else 'unavailable' end`;
  // The Cloud API accepts a send (the contact becomes `verified`) and may report 131026 later: the number is not on
  // the network after all, so that report moves a `verified` contact too.
  const moves = sql<boolean>`(contacts.messaging_status = 'unverified'
    or (v.outcome = 'not_on_network' and contacts.messaging_status = 'verified'))`;
  const contacted =
    options.contactedAt === undefined
      ? sql`contacts.last_contacted_at`
      : sql`case when v.outcome = 'reached' then ${options.contactedAt}::timestamptz else contacts.last_contacted_at end`;
  return sql`
    update contacts set
      messaging_status = case when ${moves} then ${next} else contacts.messaging_status end,
      last_contacted_at = ${contacted}
    from unnest(${ids.map(() => orgId)}::text[], ${ids}::text[], ${outcomes}::text[]) as v(org_id, id, outcome)
    where contacts.org_id = v.org_id and contacts.id = v.id
      and (${moves} or ${options.contactedAt !== undefined})`;
}

/**
 * decisions §14: the columns an opt-out (true) or opt-in (false) sets. `opted_out_at` is when the contact last
 * opted out, null once it opts back in.
 */
export function optOutChange(optedOut: boolean, at: Date) {
  return { opted_out: optedOut, opted_out_at: optedOut ? at : null, updated_at: at };
}

/** decisions §14: the whole text of an inbound message, trimmed and case-insensitive. */
const OPT_OUT_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const OPT_IN_KEYWORDS = new Set(['START', 'UNSTOP']);

/** What an inbound text asks for: true opts out, false opts back in, undefined is an ordinary message. */
export function optOutKeyword(text: string | null | undefined): boolean | undefined {
  const word = (text ?? '').trim().toUpperCase();
  if (OPT_OUT_KEYWORDS.has(word)) return true;
  if (OPT_IN_KEYWORDS.has(word)) return false;
  return undefined;
}

/**
 * Moves a contact's opt-out (decisions §14). Answers whether it changed: a STOP from a contact already opted out
 * changes nothing (and `opted_out_at` keeps the first time).
 */
export async function recordOptOut(
  db: Kysely<DB>,
  orgId: string,
  contactId: string,
  optedOut: boolean,
  at: Date,
): Promise<boolean> {
  const moved = await db
    .updateTable('contacts')
    .set(optOutChange(optedOut, at))
    .where('org_id', '=', orgId)
    .where('id', '=', contactId)
    .where('deleted_at', 'is', null)
    .where('opted_out', '=', !optedOut)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) > 0;
}

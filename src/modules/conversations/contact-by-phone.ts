// The one place the messaging side creates contacts: an inbound message from a phone no live contact has.
// Kept to one function so that the contacts module can take it over later without touching the callers.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { findInitialStage } from '../funnel-stages/funnel-stages.repo.ts';

export interface ContactByPhoneInput {
  /** E.164, as the webhook parser gives it. */
  phone: string;
  /** The sender's profile name on the chat network, when the platform sent one. */
  profileName?: string | undefined;
  now: Date;
}

/**
 * The live contact of the organization with this phone, made when there is none. Race-safe: two concurrent first
 * messages from one phone meet on the unique index of live phones (contacts_phone_uq); the loser inserts nothing
 * and reads the winner's row. Answers the contact id and whether this call made it.
 */
export async function findOrCreateContactByPhone(
  db: Kysely<DB>,
  orgId: string,
  input: ContactByPhoneInput,
): Promise<{ id: string; created: boolean }> {
  const existing = await findLiveContactId(db, orgId, input.phone);
  if (existing) return { id: existing, created: false };
  // decisions §5: a new contact starts in the initial funnel stage when the organization has one.
  const stage = await findInitialStage(db, orgId);
  const inserted = await db
    .insertInto('contacts')
    .values({
      org_id: orgId,
      id: newId('ct'),
      phone: input.phone,
      first_name: input.profileName?.slice(0, 120) ?? null,
      // Not one of the named acquisition categories: the person wrote to a connected number. The channel is kept
      // by the conversation, not in `origin` (contract: origin is the category, set once at first touch).
      origin: 'OTHER',
      // contract: a new contact with a phone on file starts `unverified`.
      messaging_status: 'unverified',
      funnel_stage_id: stage?.id ?? null,
      created_at: input.now,
      updated_at: input.now,
    })
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'phone']).where('deleted_at', 'is', null).where('phone', 'is not', null).doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { id: inserted.id, created: true };
  // A concurrent insert won; on PostgreSQL this new statement sees its committed row.
  const winner = await findLiveContactId(db, orgId, input.phone);
  if (!winner) throw new Error('contact insert conflicted but no live contact has the phone');
  return { id: winner, created: false };
}

async function findLiveContactId(db: Kysely<DB>, orgId: string, phone: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('contacts')
    .select('id')
    .where('org_id', '=', orgId)
    .where('phone', '=', phone)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.id;
}

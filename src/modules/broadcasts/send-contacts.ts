// The contacts a send reads and creates. Kept apart so that the send rules do not depend on how contacts store
// their custom properties.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import { loadValues } from '../contacts/contacts.repo.ts';
import { findInitialStage } from '../funnel-stages/funnel-stages.repo.ts';
import type { RecipientContact } from '../templates/send-requirements.ts';

export interface SendContact extends RecipientContact {
  id: string;
  phone: string | null;
}

const COLUMNS = ['id', 'first_name', 'last_name', 'email', 'phone', 'city', 'country'] as const;

/** Adds each contact's custom property values, keyed by property key (decisions §5), for placeholder resolution. */
async function withProperties(db: Kysely<DB>, orgId: string, rows: SendContact[]): Promise<SendContact[]> {
  const values = await loadValues(
    db,
    orgId,
    rows.map((row) => row.id),
  );
  const byContact = new Map<string, NonNullable<RecipientContact['properties']>>();
  for (const value of values) {
    const properties = byContact.get(value.contact_id) ?? {};
    properties[value.key] = value;
    byContact.set(value.contact_id, properties);
  }
  return rows.map((row) => ({ ...row, properties: byContact.get(row.id) ?? {} }));
}

export async function contactsById(db: Kysely<DB>, orgId: string, ids: string[]): Promise<Map<string, SendContact>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select(COLUMNS)
    .where('org_id', '=', orgId)
    .where('id', 'in', ids)
    .where('deleted_at', 'is', null)
    .execute();
  return new Map((await withProperties(db, orgId, rows)).map((row) => [row.id, row]));
}

export async function contactsByPhone(
  db: Kysely<DB>,
  orgId: string,
  phones: string[],
): Promise<Map<string, SendContact>> {
  if (phones.length === 0) return new Map();
  const rows = await db
    .selectFrom('contacts')
    .select(COLUMNS)
    .where('org_id', '=', orgId)
    .where('phone', 'in', phones)
    .where('deleted_at', 'is', null)
    .execute();
  return new Map((await withProperties(db, orgId, rows)).map((row) => [row.phone as string, row]));
}

/**
 * decisions §5: a phone that matches no contact creates one, with origin API and `unverified` status. Race-safe:
 * a concurrent create of the same phone meets the unique index and the existing contact is used.
 */
export async function ensureContactsForPhones(
  trx: Kysely<DB>,
  orgId: string,
  phones: string[],
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  if (phones.length === 0) return ids;
  const initialStage = await initialFunnelStage(trx, orgId);
  await trx
    .insertInto('contacts')
    .values(
      phones.map((phone) => ({
        org_id: orgId,
        id: newId('ct'),
        phone,
        origin: 'API',
        messaging_status: 'unverified',
        funnel_stage_id: initialStage,
      })),
    )
    .onConflict((conflict) =>
      conflict
        .expression(sql`org_id, phone`)
        .where('deleted_at', 'is', null)
        .where('phone', 'is not', null)
        .doNothing(),
    )
    .execute();
  const rows = await trx
    .selectFrom('contacts')
    .select(['id', 'phone'])
    .where('org_id', '=', orgId)
    .where('phone', 'in', phones)
    .where('deleted_at', 'is', null)
    .execute();
  for (const row of rows) ids.set(row.phone as string, row.id);
  return ids;
}

/** decisions §5: a new contact starts in the organization's initial funnel stage, when it has one. */
async function initialFunnelStage(trx: Kysely<DB>, orgId: string): Promise<string | null> {
  return (await findInitialStage(trx, orgId))?.id ?? null;
}

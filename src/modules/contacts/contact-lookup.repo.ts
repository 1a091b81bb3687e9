// The contacts a send addresses, with their custom property values keyed by property key (decisions §5), so that
// named placeholders resolve from them. The send rules do not depend on how contacts store their properties.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { RecipientContact } from '../templates/send-requirements.ts';
import { loadValues } from './contacts.repo.ts';

export interface SendContact extends RecipientContact {
  id: string;
  phone: string | null;
  /** decisions §14: a MARKETING send fails for it at once. */
  opted_out?: boolean;
}

const COLUMNS = ['id', 'first_name', 'last_name', 'email', 'phone', 'city', 'country', 'opted_out'] as const;

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

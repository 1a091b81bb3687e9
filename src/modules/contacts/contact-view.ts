// A contact as the API shows it (contract: Contact), from its row and its property values: one shape for the
// responses and for the events that carry a contact (decisions §11).
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { propertiesOf, toPropertyValue } from '../properties/property-values.ts';
import { type ContactRecord, findContactWithValues, loadValues } from './contacts.repo.ts';
import type { Contact } from './contacts.schemas.ts';

/**
 * The contact's fields by name, not a copy of the row (`...row`): a row may carry more than the contract's fields
 * (the list's rows carry their sort key and segment), and an object spread or rest of twenty fields is built on
 * V8's slow path, which made three of the list's copies of every row a sixth of its allocations (decisions D216).
 */
export function present(row: ContactRecord, properties: Contact['properties']): Contact {
  return {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    country: row.country,
    city: row.city,
    social_handle: row.social_handle,
    inbox_handle: row.inbox_handle,
    messaging_username: row.messaging_username,
    origin: row.origin as Contact['origin'],
    sub_origin_id: row.sub_origin_id,
    messaging_status: row.messaging_status as Contact['messaging_status'],
    funnel_stage_id: row.funnel_stage_id,
    owner_id: row.owner_id,
    last_contacted_at: row.last_contacted_at?.toISOString() ?? null,
    opted_out: row.opted_out,
    opted_out_at: row.opted_out_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    properties,
  };
}

/** One contact as the API shows it (the events of other modules carry it too); undefined when it is gone. */
export async function readContact(db: Kysely<DB>, orgId: string, id: string): Promise<Contact | undefined> {
  const found = await findContactWithValues(db, orgId, id);
  if (!found) return undefined;
  return present(found, propertiesOf(found.property_values));
}

/** Contacts as the API shows them, from their rows: one statement reads the property values of them all. */
export async function presentRows(db: Kysely<DB>, orgId: string, rows: ContactRecord[]): Promise<Contact[]> {
  const values = await loadValues(
    db,
    orgId,
    rows.map((row) => row.id),
  );
  const byContact = new Map<string, Contact['properties']>();
  for (const value of values) {
    const properties = byContact.get(value.contact_id) ?? {};
    properties[value.key] = toPropertyValue(value.kind, value);
    byContact.set(value.contact_id, properties);
  }
  return rows.map((row) => present(row, byContact.get(row.id) ?? {}));
}

// The statements of a batch upsert (decisions §12), one per step however many items: the live contacts that hold
// any of the batch's emails, phones or social handles (locked), the new contacts in one insert, the matched ones
// in one update.
import { type Insertable, type Kysely, sql } from 'kysely';
import type { ContactsTable, DB } from '../../db/schema.ts';
import type { StoredValue } from '../properties/property-values.ts';
import { CONTACT_COLUMNS, type ContactRecord } from './contacts.repo.ts';

export interface HeldValues {
  emails: string[];
  phones: string[];
  socialHandles: string[];
}

/**
 * The live contacts holding any of these values, matched as their unique indexes match them (email and social
 * handle case-insensitively), locked in id order so that concurrent batches lock the contacts they share in the
 * same order.
 */
export async function lockHolders(db: Kysely<DB>, orgId: string, values: HeldValues): Promise<ContactRecord[]> {
  const lower = (list: string[]) => list.map((value) => value.toLowerCase());
  // One condition per unique index (a BitmapOr of the three partial indexes), none for values the batch does not
  // name. Not `id in (… union …)`: with statistics that do not know the organization yet (a fresh one grows from
  // nothing during an import), the planner ran that as a nested loop over the organization's rows, once per row;
  // at worst this form scans the organization's rows once.
  const conditions = [
    ...(values.emails.length > 0
      ? [sql`(email is not null and lower(email) = any(${lower(values.emails)}::text[]))`]
      : []),
    ...(values.phones.length > 0 ? [sql`(phone is not null and phone = any(${values.phones}::text[]))`] : []),
    ...(values.socialHandles.length > 0
      ? [sql`(social_handle is not null and lower(social_handle) = any(${lower(values.socialHandles)}::text[]))`]
      : []),
  ];
  if (conditions.length === 0) return [];
  const result = await sql<ContactRecord>`
    select ${sql.join(CONTACT_COLUMNS.map((column) => sql.ref(column)))} from contacts
    where org_id = ${orgId} and deleted_at is null and (${sql.join(conditions, sql` or `)})
    order by id
    for update`.execute(db);
  return result.rows;
}

/** New contacts in one statement, in the order given (callers sort them so concurrent batches insert alike). */
export const insertContacts = (db: Kysely<DB>, rows: Insertable<ContactsTable>[]) =>
  rows.length === 0 ? Promise.resolve([]) : db.insertInto('contacts').values(rows).returning(CONTACT_COLUMNS).execute();

const UPDATED_COLUMNS = [
  ['first_name', 'text'],
  ['last_name', 'text'],
  ['email', 'text'],
  ['phone', 'text'],
  ['country', 'text'],
  ['city', 'text'],
  ['social_handle', 'text'],
  ['owner_id', 'text'],
  ['funnel_stage_id', 'text'],
  ['sub_origin_id', 'text'],
  ['messaging_status', 'text'],
  ['opted_out', 'boolean'],
  ['opted_out_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
] as const;

/**
 * Matched contacts rewritten in one statement: each row is the contact as its item leaves it (PATCH semantics were
 * applied to the locked row), so every column is written from the row and none is computed here.
 */
export async function updateContacts(db: Kysely<DB>, orgId: string, rows: ContactRecord[]): Promise<ContactRecord[]> {
  if (rows.length === 0) return [];
  const records = rows.map((row) => Object.fromEntries([['id', row.id], ...UPDATED_COLUMNS.map(([c]) => [c, row[c]])]));
  const columns = sql.join(UPDATED_COLUMNS.map(([column, type]) => sql`${sql.ref(column)} ${sql.raw(type)}`));
  const assignments = sql.join(UPDATED_COLUMNS.map(([column]) => sql`${sql.ref(column)} = ${sql.ref(`v.${column}`)}`));
  const result = await sql<ContactRecord>`
    update contacts c set ${assignments}
    from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as v(id text, ${columns})
    where c.org_id = ${orgId} and c.id = v.id and c.deleted_at is null
    returning ${sql.join(CONTACT_COLUMNS.map((column) => sql.ref(`c.${column}`)))}`.execute(db);
  return result.rows;
}

/** The property values the matched contacts hold, by contact id (to tell an update that changes nothing). */
export async function storedValuesOf(
  db: Kysely<DB>,
  orgId: string,
  contactIds: string[],
): Promise<Map<string, StoredValue[]>> {
  const byContact = new Map<string, StoredValue[]>();
  if (contactIds.length === 0) return byContact;
  const rows = await db
    .selectFrom('contact_property_values')
    .select(['contact_id', 'property_id', 'value_text', 'value_number', 'value_bool', 'value_date', 'value_json'])
    .where('org_id', '=', orgId)
    .where('contact_id', 'in', contactIds)
    .execute();
  for (const { contact_id, ...value } of rows) {
    const list = byContact.get(contact_id) ?? [];
    list.push(value as StoredValue);
    byContact.set(contact_id, list);
  }
  return byContact;
}

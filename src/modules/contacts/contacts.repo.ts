// SQL for contacts and their custom property values. Every query filters by org_id; reads see live contacts only.
import {
  type CompiledQuery,
  type Expression,
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { executePrepared } from '../../db/prepared-statements.ts';
import type { ContactsTable, DB } from '../../db/schema.ts';
import type { StoredValue } from '../properties/property-values.ts';

export type ContactRow = Selectable<ContactsTable>;

/** A property value with its definition's key and kind, as every read of a contact's values selects it. */
const VALUE_COLUMNS = [
  'v.property_id',
  'p.key',
  'p.kind',
  'v.value_text',
  'v.value_number',
  'v.value_bool',
  'v.value_date',
  'v.value_json',
] as const;

export const CONTACT_COLUMNS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'city',
  'social_handle',
  'inbox_handle',
  'messaging_username',
  'origin',
  'sub_origin_id',
  'messaging_status',
  'funnel_stage_id',
  'owner_id',
  'last_contacted_at',
  'opted_out',
  'opted_out_at',
  'created_at',
  'updated_at',
] as const;
export type ContactRecord = Pick<ContactRow, (typeof CONTACT_COLUMNS)[number]>;

export const insertContact = (db: Kysely<DB>, row: Insertable<ContactsTable>) =>
  db.insertInto('contacts').values(row).returning(CONTACT_COLUMNS).executeTakeFirstOrThrow();

export const findContact = (db: Kysely<DB>, orgId: string, id: string, options: { lock?: boolean } = {}) => {
  const query = db
    .selectFrom('contacts')
    .select(CONTACT_COLUMNS)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  return (options.lock ? query.forUpdate() : query).executeTakeFirst();
};

const contactWithValues = (db: Kysely<DB>, orgId: string, id: string) =>
  db
    .selectFrom('contacts as c')
    .select(CONTACT_COLUMNS.map((column) => `c.${column}` as const))
    .select(() => valuesOfContact(db, orgId, sql.ref<string>('c.id')).as('property_values'))
    .where('c.org_id', '=', orgId)
    .where('c.id', '=', id)
    .where('c.deleted_at', 'is', null);

/**
 * The property values of the contact `contactId` refers to, as one JSON array in the shape `propertiesOf` reads
 * (each value with its property's key and kind, in property order): a list reads its page's values in the page's
 * own statement.
 */
export const valuesOfContact = (db: Kysely<DB>, orgId: string, contactId: Expression<string>) =>
  jsonArrayFrom(
    db
      .selectFrom('contact_property_values as v')
      // D199: driven by the contact's own values (one probe of their key), each value then finds its property by
      // the property's key. As a plain join the planner, estimating one property per organization, looped over the
      // organization's properties and probed the values once per property: per contact of a page 4 probes with 4
      // properties (26 buffers), one per property in general. `offset 0` keeps the lookup a subquery the planner
      // cannot flatten back into that join.
      .innerJoinLateral(
        (eb) =>
          eb
            .selectFrom('crm_properties as p')
            .select(['p.key', 'p.kind', 'p.order_idx'])
            .where('p.org_id', '=', orgId)
            .whereRef('p.id', '=', 'v.property_id')
            .offset(0)
            .as('p'),
        (join) => join.onTrue(),
      )
      .select([...VALUE_COLUMNS])
      .where('v.org_id', '=', orgId)
      .where('v.contact_id', '=', contactId)
      .orderBy('p.order_idx'),
  );

type ContactWithValues = NonNullable<Awaited<ReturnType<ReturnType<typeof contactWithValues>['executeTakeFirst']>>>;

// Placeholders of the compiled statement, replaced by the request's values (a string no id can hold).
const ORG_PLACEHOLDER = '\u0000org_id';
const ID_PLACEHOLDER = '\u0000id';
const compiledContactWithValues = new WeakMap<Kysely<DB>, CompiledQuery>();

/**
 * A live contact and its custom property values (with each value's key and kind, in property order), in one
 * statement: the values are aggregated as JSON beside the row (decisions D22: one round trip per read). The hottest
 * read of the API: its SQL is built once per database handle, not per request, and prepared.
 */
export async function findContactWithValues(
  db: Kysely<DB>,
  orgId: string,
  id: string,
): Promise<ContactWithValues | undefined> {
  let compiled = compiledContactWithValues.get(db);
  if (!compiled) {
    compiled = contactWithValues(db, ORG_PLACEHOLDER, ID_PLACEHOLDER).compile();
    compiledContactWithValues.set(db, compiled);
  }
  const parameters = compiled.parameters.map((value) =>
    value === ORG_PLACEHOLDER ? orgId : value === ID_PLACEHOLDER ? id : value,
  );
  // Sent by name on PostgreSQL: parsed once per connection and run on a cached plan (decisions D22).
  const result = await executePrepared<ContactWithValues>(db, { ...compiled, parameters });
  return result.rows[0];
}

export const updateContact = (db: Kysely<DB>, orgId: string, id: string, patch: Updateable<ContactsTable>) =>
  db
    .updateTable('contacts')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning(CONTACT_COLUMNS)
    .executeTakeFirst();

export const softDeleteContact = (db: Kysely<DB>, orgId: string, id: string, at: Date) =>
  db
    .updateTable('contacts')
    .set({ deleted_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();

export type DuplicateField = 'email' | 'phone' | 'social_handle';

/** The live contact that holds a value, matched the way its unique index matches it. */
export function findHolder(db: Kysely<DB>, orgId: string, field: DuplicateField, value: string) {
  const query = db
    .selectFrom('contacts')
    .select(['id', 'first_name', 'last_name', 'email', 'phone', 'social_handle'])
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null);
  const matched =
    field === 'phone'
      ? query.where('phone', '=', value)
      : query.where(sql`lower(${sql.ref(field)})`, '=', sql`lower(${value})`);
  return matched.executeTakeFirst();
}

export interface ValueWithKey extends StoredValue {
  contact_id: string;
  key: string;
  kind: string;
}

export const loadValues = (db: Kysely<DB>, orgId: string, contactIds: string[]): Promise<ValueWithKey[]> =>
  contactIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('contact_property_values as v')
        .innerJoin('crm_properties as p', (join) =>
          join.onRef('p.org_id', '=', 'v.org_id').onRef('p.id', '=', 'v.property_id'),
        )
        .select(['v.contact_id', ...VALUE_COLUMNS])
        .where('v.org_id', '=', orgId)
        .where('v.contact_id', 'in', contactIds)
        .orderBy('p.order_idx')
        .execute();

/** A contact's value of one property. */
export interface ContactValue extends StoredValue {
  contact_id: string;
}

/** Writes values of any number of contacts in one statement (a value already there is replaced). */
export async function writeValuesOf(db: Kysely<DB>, orgId: string, values: ContactValue[]) {
  if (values.length === 0) return;
  await db
    .insertInto('contact_property_values')
    .values(
      values.map((value) => ({
        org_id: orgId,
        ...value,
        value_json: value.value_json === null ? null : JSON.stringify(value.value_json),
      })),
    )
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'contact_id', 'property_id']).doUpdateSet((eb) => ({
        value_text: eb.ref('excluded.value_text'),
        value_number: eb.ref('excluded.value_number'),
        value_bool: eb.ref('excluded.value_bool'),
        value_date: eb.ref('excluded.value_date'),
        value_json: eb.ref('excluded.value_json'),
      })),
    )
    .execute();
}

export const writeValues = (db: Kysely<DB>, orgId: string, contactId: string, values: StoredValue[]) =>
  writeValuesOf(
    db,
    orgId,
    values.map((value) => ({ ...value, contact_id: contactId })),
  );

/** Removes values of any number of contacts in one statement. */
export async function removeValuesOf(
  db: Kysely<DB>,
  orgId: string,
  pairs: { contact_id: string; property_id: string }[],
) {
  if (pairs.length === 0) return;
  await sql`
    delete from contact_property_values v
    using unnest(${pairs.map((pair) => pair.contact_id)}::text[], ${pairs.map((pair) => pair.property_id)}::text[])
      as r(contact_id, property_id)
    where v.org_id = ${orgId} and v.contact_id = r.contact_id and v.property_id = r.property_id`.execute(db);
}

export async function removeValues(db: Kysely<DB>, orgId: string, contactId: string, propertyIds?: string[]) {
  if (propertyIds && propertyIds.length === 0) return;
  let query = db.deleteFrom('contact_property_values').where('org_id', '=', orgId).where('contact_id', '=', contactId);
  if (propertyIds) query = query.where('property_id', 'in', propertyIds);
  await query.execute();
}

/**
 * A deleted funnel stage's contacts: live ones move to another stage (or none), deleted ones only let go of it. Called
 * by the funnel stages' delete through the port the wiring gives it (funnel-stages/ imports no contacts/).
 */
export async function moveContactsOffStage(db: Kysely<DB>, orgId: string, from: string, to: string | null, now: Date) {
  if (to !== null) {
    await db
      .updateTable('contacts')
      .set({ funnel_stage_id: to, updated_at: now })
      .where('org_id', '=', orgId)
      .where('funnel_stage_id', '=', from)
      .where('deleted_at', 'is', null)
      .execute();
  }
  await db
    .updateTable('contacts')
    .set({ funnel_stage_id: null })
    .where('org_id', '=', orgId)
    .where('funnel_stage_id', '=', from)
    .where('deleted_at', 'is not', null)
    .execute();
}

import { type Kysely, sql } from 'kysely';

// The contact list at a million contacts (decisions §2, D38–D42).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  // q: the trigram index scoped by organization (btree_gin lets a GIN index lead with org_id, like every other
  // index on tenant data), so a search reads the matches of one organization only.
  await sql`create extension if not exists btree_gin`.execute(db);
  await sql`create index contacts_search_org_trgm_idx on contacts using gin (org_id, search_text gin_trgm_ops)
    where deleted_at is null`.execute(db);
  await sql`drop index contacts_search_trgm_idx`.execute(db);

  // property_filter: each value index ends with the contact, so a condition's contacts (to count them, or to hash
  // them for a walk of a sort index) come from the index alone, and a per-contact probe is index-only too. Text
  // is indexed by its 200-character prefix, now a stored column: PostgreSQL reads an expression index only
  // together with the table.
  await sql`alter table contact_property_values
    add column value_key text generated always as (left(value_text, 200)) stored`.execute(db);
  await sql`create statistics cpv_key_dependencies (dependencies) on value_text, value_key
    from contact_property_values`.execute(db);
  for (const [name, expression, where] of VALUE_INDEXES) {
    await sql`create index ${sql.raw(`${name}_v2`)} on contact_property_values
      (org_id, property_id, ${sql.raw(expression)}contact_id)${sql.raw(where ? ` where ${where} is not null` : '')}`.execute(
      db,
    );
    await sql`drop index ${sql.raw(name)}`.execute(db);
  }

  // Keyset pagination: every sort index carries version_xid, so a later page of a walk (which checks each
  // contact against the walk's snapshot) reads the index alone, as the first page does; a selective filter walks
  // thousands of index entries per page and would otherwise read as many table rows.
  for (const [name, column] of SORT_INDEXES) {
    await sql`create index ${sql.raw(`contacts_sort_${name}_v2_idx`)} on contacts (org_id, ${sql.ref(column)}, id)
      include (version_xid) where deleted_at is null`.execute(db);
    await sql`drop index ${sql.raw(`contacts_sort_${name}_idx`)}`.execute(db);
  }

  // The list counts a property condition's matches in the value index alone, which holds because a contact's
  // values go when the contact is deleted. The service deletes them in the same transaction; this trigger makes
  // it hold for every writer.
  await sql`create function contacts_delete_values() returns trigger language plpgsql as $$
    begin
      delete from contact_property_values where org_id = new.org_id and contact_id = new.id;
      return null;
    end $$`.execute(db);
  await sql`create trigger contacts_delete_values after update of deleted_at on contacts for each row
    when (old.deleted_at is null and new.deleted_at is not null) execute function contacts_delete_values()`.execute(db);
}

const SORT_INDEXES: [string, string][] = [
  ['recent', 'updated_at'],
  ['name', 'name_sort'],
  ['country', 'country'],
  ['city', 'city_sort'],
  ['origin', 'origin'],
];

const VALUE_INDEXES: [string, string, string | null][] = [
  ['cpv_text_idx', 'value_key, ', 'value_key'],
  ['cpv_number_idx', 'value_number, ', 'value_number'],
  ['cpv_date_idx', 'value_date, ', 'value_date'],
  ['cpv_bool_idx', 'value_bool, ', 'value_bool'],
  ['cpv_property_idx', '', null],
];

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists contacts_delete_values on contacts`.execute(db);
  await sql`drop function if exists contacts_delete_values()`.execute(db);
  for (const [name, expression, where] of VALUE_INDEXES) {
    const columns = expression.replace(/, $/, '').replace('value_key', 'left(value_text, 200)');
    const predicate = where?.replace('value_key', 'value_text');
    await sql`create index if not exists ${sql.raw(name)} on contact_property_values
      (org_id, property_id${sql.raw(columns ? `, ${columns}` : '')})${sql.raw(predicate ? ` where ${predicate} is not null` : '')}`.execute(
      db,
    );
    await sql`drop index if exists ${sql.raw(`${name}_v2`)}`.execute(db);
  }
  for (const [name, column] of SORT_INDEXES) {
    await sql`create index if not exists ${sql.raw(`contacts_sort_${name}_idx`)} on contacts
      (org_id, ${sql.ref(column)}, id) where deleted_at is null`.execute(db);
    await sql`drop index if exists ${sql.raw(`contacts_sort_${name}_v2_idx`)}`.execute(db);
  }
  await sql`drop statistics if exists cpv_key_dependencies`.execute(db);
  await sql`alter table contact_property_values drop column if exists value_key`.execute(db);
  await sql`create index if not exists contacts_search_trgm_idx on contacts using gin (search_text gin_trgm_ops)
    where deleted_at is null`.execute(db);
  await sql`drop index if exists contacts_search_org_trgm_idx`.execute(db);
}

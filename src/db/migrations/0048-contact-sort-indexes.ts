import { type Kysely, sql } from 'kysely';

// D367: the contact list's five sort indexes again. Migration 0006 made them carry `version_xid` (a walk's later page
// read the index alone); migration 0045 dropped that column, and with it, silently, every index that named it: from
// then on each page of the list read and sorted all of the organization's live contacts (35 ms a page at 50,000,
// 0.5 ms with the index). Made again over the column that replaced it, `version` (D315).
const SORTS: [name: string, column: string][] = [
  ['recent', 'updated_at'],
  ['name', 'name_sort'],
  ['country', 'country'],
  ['city', 'city_sort'],
  ['origin', 'origin'],
];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, column] of SORTS) {
    await sql`create index if not exists ${sql.raw(`contacts_sort_${name}_v3_idx`)} on contacts
      (org_id, ${sql.ref(column)}, id) include (version) where deleted_at is null`.execute(db);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of SORTS) await sql`drop index if exists ${sql.raw(`contacts_sort_${name}_v3_idx`)}`.execute(db);
}

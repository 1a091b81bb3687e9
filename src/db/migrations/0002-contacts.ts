import { type Kysely, sql } from 'kysely';

// The contact record every feature shares (contract: Contact). CRM-specific tables and indexes come later.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contacts')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('email', 'text')
    .addColumn('phone', 'text')
    .addColumn('country', 'text')
    .addColumn('city', 'text')
    .addColumn('social_handle', 'text')
    .addColumn('inbox_handle', 'text')
    .addColumn('messaging_username', 'text')
    .addColumn('origin', 'text')
    .addColumn('sub_origin_id', 'text')
    .addColumn('messaging_status', 'text', (c) => c.notNull())
    .addColumn('funnel_stage_id', 'text')
    .addColumn('owner_id', 'text')
    .addColumn('last_contacted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .addPrimaryKeyConstraint('contacts_pk', ['org_id', 'id'])
    .execute();
  // contract (decisions §5): duplicates among live contacts of one organization, enforced by the database.
  await sql`create unique index contacts_email_uq on contacts (org_id, lower(email))
    where deleted_at is null and email is not null`.execute(db);
  await sql`create unique index contacts_phone_uq on contacts (org_id, phone)
    where deleted_at is null and phone is not null`.execute(db);
  await sql`create unique index contacts_social_handle_uq on contacts (org_id, lower(social_handle))
    where deleted_at is null and social_handle is not null`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contacts').ifExists().execute();
}

import { type Kysely, sql } from 'kysely';

// CRM core: custom properties and their values, funnel stages, sub-origins, and the contact list's indexes.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table crm_properties (
    org_id text not null references organizations (id),
    id text not null,
    key text not null,
    label text not null,
    description text not null default '',
    kind text not null,
    options jsonb not null default '[]',
    currency text,
    required boolean not null default false,
    order_idx integer not null,
    archived_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint crm_properties_pk primary key (org_id, id)
  )`.execute(db);
  await sql`create unique index crm_properties_key_uq on crm_properties (org_id, key)`.execute(db);

  await sql`create table funnel_stages (
    org_id text not null references organizations (id),
    id text not null,
    name text not null,
    key text not null,
    description text not null default '',
    order_idx integer not null,
    is_initial boolean not null default false,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint funnel_stages_pk primary key (org_id, id)
  )`.execute(db);
  await sql`create unique index funnel_stages_key_uq on funnel_stages (org_id, key)`.execute(db);
  // contract (decisions §6): at most one initial stage per organization, whatever the interleaving of writers.
  await sql`create unique index funnel_stages_initial_uq on funnel_stages (org_id) where is_initial`.execute(db);

  await sql`create table sub_origins (
    org_id text not null references organizations (id),
    id text not null,
    key text not null,
    label text not null,
    origin text not null,
    created_at timestamptz not null default now(),
    constraint sub_origins_pk primary key (org_id, id)
  )`.execute(db);
  await sql`create unique index sub_origins_key_uq on sub_origins (org_id, key)`.execute(db);

  await contactColumns(db);
  await contactIndexes(db);
  await sortVersions(db);

  await sql`create table contact_property_values (
    org_id text not null,
    contact_id text not null,
    property_id text not null,
    value_text text,
    value_number numeric,
    value_bool boolean,
    value_date date,
    value_json jsonb,
    constraint contact_property_values_pk primary key (org_id, contact_id, property_id),
    constraint contact_property_values_contact_fk foreign key (org_id, contact_id)
      references contacts (org_id, id) on delete cascade,
    constraint contact_property_values_property_fk foreign key (org_id, property_id)
      references crm_properties (org_id, id) on delete cascade
  )`.execute(db);
  // property_filter: one index per value slot, led by the property. Text is indexed by a prefix because a
  // TEXTAREA value can outgrow a btree entry; equality re-checks the whole value.
  await sql`create index cpv_text_idx on contact_property_values (org_id, property_id, left(value_text, 200))
    where value_text is not null`.execute(db);
  // The planner must know that the prefix follows from the value, or it multiplies the two selectivities and
  // underestimates a common value by orders of magnitude (and then picks a plan that reads every match).
  await sql`create statistics cpv_text_dependencies (dependencies)
    on value_text, (left(value_text, 200)) from contact_property_values`.execute(db);
  await sql`create index cpv_text_trgm_idx on contact_property_values using gin (value_text gin_trgm_ops)
    where value_text is not null`.execute(db);
  await sql`create index cpv_number_idx on contact_property_values (org_id, property_id, value_number)
    where value_number is not null`.execute(db);
  await sql`create index cpv_date_idx on contact_property_values (org_id, property_id, value_date)
    where value_date is not null`.execute(db);
  await sql`create index cpv_bool_idx on contact_property_values (org_id, property_id, value_bool)
    where value_bool is not null`.execute(db);
  await sql`create index cpv_json_idx on contact_property_values using gin (value_json jsonb_path_ops)
    where value_json is not null`.execute(db);
  await sql`create index cpv_property_idx on contact_property_values (org_id, property_id)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function contactColumns(db: Kysely<any>): Promise<void> {
  // Sort and search keys, kept by the database so that every writer (API, sends, imports) stays consistent.
  await sql`alter table contacts
    add column full_name text generated always as
      (nullif(btrim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')), '')) stored,
    add column name_sort text generated always as
      (lower(nullif(btrim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')), ''))) stored,
    add column city_sort text generated always as (lower(city)) stored,
    add column search_text text generated always as (lower(
      coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\n' || coalesce(email, '') || E'\n' ||
      coalesce(phone, '') || E'\n' || coalesce(social_handle, '') || E'\n' || coalesce(city, ''))) stored,
    add column version_xid xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`alter table contacts
    add constraint contacts_funnel_stage_fk foreign key (org_id, funnel_stage_id) references funnel_stages (org_id, id),
    add constraint contacts_sub_origin_fk foreign key (org_id, sub_origin_id) references sub_origins (org_id, id)`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function contactIndexes(db: Kysely<any>): Promise<void> {
  // Keyset pagination: one index per sort, (org, key, id), over live contacts. Scanned forwards or backwards.
  const sorts: [string, string][] = [
    ['recent', 'updated_at'],
    ['name', 'name_sort'],
    ['country', 'country'],
    ['city', 'city_sort'],
    ['origin', 'origin'],
  ];
  for (const [name, column] of sorts) {
    await sql`create index ${sql.raw(`contacts_sort_${name}_idx`)} on contacts (org_id, ${sql.ref(column)}, id)
      where deleted_at is null`.execute(db);
  }
  await sql`create index contacts_created_idx on contacts (org_id, created_at) where deleted_at is null`.execute(db);
  await sql`create index contacts_stage_idx on contacts (org_id, funnel_stage_id)`.execute(db);
  await sql`create index contacts_owner_idx on contacts (org_id, owner_id) where deleted_at is null`.execute(db);
  await sql`create index contacts_sub_origin_idx on contacts (org_id, sub_origin_id)`.execute(db);
  // q: substring search inside the names, email, phone, social handle and city.
  await sql`create index contacts_search_trgm_idx on contacts using gin (search_text gin_trgm_ops)
    where deleted_at is null`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function sortVersions(db: Kysely<any>): Promise<void> {
  // A cursor walk lists contacts in the order they had when the walk began (a database snapshot). When a write
  // moves a contact in some sort, the trigger keeps its previous sort keys here, tagged with the transaction that
  // made and the one that replaced them, so later pages can still place it where the walk's snapshot saw it.
  await sql`create table contact_sort_versions (
    org_id text not null,
    contact_id text not null,
    version_xid xid8 not null,
    replaced_xid xid8 not null,
    replaced_at timestamptz not null,
    updated_at timestamptz not null,
    name_sort text,
    country text,
    city_sort text,
    origin text,
    constraint contact_sort_versions_pk primary key (org_id, contact_id, replaced_xid)
  )`.execute(db);
  await sql`create index contact_sort_versions_replaced_idx on contact_sort_versions (org_id, replaced_xid)`.execute(
    db,
  );
  await sql`create function contacts_keep_sort_version() returns trigger language plpgsql as $$
    begin
      -- A row already rewritten by this transaction was never seen by anyone else: nothing to keep.
      if old.version_xid <> pg_current_xact_id() then
        insert into contact_sort_versions (org_id, contact_id, version_xid, replaced_xid, replaced_at, updated_at,
          name_sort, country, city_sort, origin)
        values (old.org_id, old.id, old.version_xid, pg_current_xact_id(), now(), old.updated_at,
          old.name_sort, old.country, old.city_sort, old.origin);
        -- Cursors live 24 hours; older versions can no longer be asked for.
        delete from contact_sort_versions
          where org_id = old.org_id and contact_id = old.id and replaced_at < now() - interval '25 hours';
      end if;
      new.version_xid := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  await sql`create trigger contacts_sort_version before update on contacts for each row
    when (old.updated_at is distinct from new.updated_at or old.first_name is distinct from new.first_name
      or old.last_name is distinct from new.last_name or old.country is distinct from new.country
      or old.city is distinct from new.city or old.origin is distinct from new.origin)
    execute function contacts_keep_sort_version()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists contacts_sort_version on contacts`.execute(db);
  await sql`drop function if exists contacts_keep_sort_version()`.execute(db);
  await sql`alter table contacts drop constraint if exists contacts_funnel_stage_fk,
    drop constraint if exists contacts_sub_origin_fk`.execute(db);
  await sql`alter table contacts drop column if exists full_name, drop column if exists name_sort,
    drop column if exists city_sort, drop column if exists search_text, drop column if exists version_xid`.execute(db);
  for (const table of [
    'contact_property_values',
    'contact_sort_versions',
    'crm_properties',
    'funnel_stages',
    'sub_origins',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

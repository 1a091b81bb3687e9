import { type Kysely, sql } from 'kysely';
import { distributeTables } from '../citus.ts';

// D313–D316: the schema follows the rules of a database distributed by organization (Citus), on every engine.
// - D313: every unique key of a tenant table includes `org_id`; the global lookups (a key's hash, a business account
//   id, a live number's id, a login email, a session's or a sign-in link's token hash → organization) live in
//   `directory`, written by the service in the transaction of their row (a reference table on Citus).
// - D314: the counters (live contacts, the 24-hour window's phones) are kept by row triggers, not statement
//   triggers with transition tables.
// - D315: the contact list's walks are pinned to an organization's contact version (`contact_versions`, taken by
//   every write that moves a contact, held to its commit), not to a transaction snapshot (xid8).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await directory(db);
  await counters(db);
  await contactVersions(db);
  // Citus refuses `on delete set null` in a key with the distribution column: a team's conversations are unassigned
  // by its deletion's service (D250) before the team goes, so a plain key.
  await sql`alter table conversations drop constraint conversations_team_fk`.execute(db);
  await sql`alter table conversations add constraint conversations_team_fk
    foreign key (org_id, team_id) references teams (org_id, id)`.execute(db);
  await distributeTables(db);
}

const DIRECTORY_ROWS: [kind: string, select: string][] = [
  ['api_key', 'select key_hash, org_id from api_keys'],
  ['account', 'select business_account_id, org_id from messaging_accounts'],
  ['number', "select phone_number_id, org_id from channels where status = 'live'"],
  ['email', 'select lower(email), org_id from users'],
  ['session', 'select token_hash, org_id from user_sessions'],
  ['sign_in_link', 'select token_hash, org_id from user_sign_in_links'],
];

// The unique indexes without `org_id`, made again with it (their uniqueness across organizations is the
// directory's primary key now).
const REKEYED: [index: string, definition: string][] = [
  ['api_keys_key_hash_uq', 'on api_keys (org_id, key_hash)'],
  ['messaging_accounts_business_account_uq', 'on messaging_accounts (org_id, business_account_id)'],
  ['channels_phone_number_id_live_uq', "on channels (org_id, phone_number_id) where status = 'live'"],
  ['users_email_uq', 'on users (org_id, lower(email))'],
  ['user_sessions_token_uq', 'on user_sessions (org_id, token_hash)'],
  ['user_sign_in_links_token_uq', 'on user_sign_in_links (org_id, token_hash)'],
];

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function directory(db: Kysely<any>): Promise<void> {
  await sql`create table directory (
    kind text not null,
    key text not null,
    org_id text not null,
    constraint directory_pk primary key (kind, key)
  )`.execute(db);
  for (const [kind, select] of DIRECTORY_ROWS) {
    await sql`insert into directory (kind, key, org_id) select ${kind}, k.* from (${sql.raw(select)}) k`.execute(db);
  }
  for (const [index, definition] of REKEYED) {
    await sql`drop index ${sql.ref(index)}`.execute(db);
    await sql`create unique index ${sql.ref(index)} ${sql.raw(definition)}`.execute(db);
  }
}

/**
 * A counter noted per row and written once per statement (D314): each row adds its delta to a transaction-local
 * setting (`name`, "key/n"); a row of another key, and the statement's end, write what was noted with `flush`.
 * One write per statement and key, not one per row (rewriting one row n times in a transaction costs n² as each
 * update walks the row's versions), and no transition table (which Citus does not run).
 */
function notedCounter(name: string, flush: string) {
  return {
    note: sql.raw(`create or replace function ${name}_note(k text, delta bigint) returns void language plpgsql as $$
      declare
        pending text := current_setting('crm.${name}', true);
      begin
        if pending is not null and pending <> '' and split_part(pending, '/', 1) || '/' || split_part(pending, '/', 2)
            <> k then
          perform ${name}_flush();
          pending := null;
        end if;
        perform set_config('crm.${name}', k || '/' || (coalesce(nullif(split_part(pending, '/', 3), '')::bigint, 0)
          + delta), true);
      end $$`),
    flush: sql.raw(`create or replace function ${name}_flush() returns void language plpgsql as $$
      declare
        pending text := current_setting('crm.${name}', true);
        org text;
        other text;
        n bigint;
      begin
        if pending is null or pending = '' then return; end if;
        perform set_config('crm.${name}', '', true);
        org := split_part(pending, '/', 1);
        other := split_part(pending, '/', 2);
        n := split_part(pending, '/', 3)::bigint;
        ${flush};
      end $$`),
    statement: sql.raw(`create or replace function ${name}_statement() returns trigger language plpgsql as $$
      begin perform ${name}_flush(); return null; end $$`),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function counters(db: Kysely<any>): Promise<void> {
  // Live contacts per organization (key "org/"), in the writer's slot.
  const counted = notedCounter(
    'contact_counted',
    `insert into contact_counts (org_id, slot, live) values (org, pg_backend_pid() % 8, n)
        on conflict (org_id, slot) do update set live = contact_counts.live + excluded.live`,
  );
  for (const statement of [counted.flush, counted.note, counted.statement]) await sql`${statement}`.execute(db);
  await sql`drop trigger contact_counts_insert on contacts`.execute(db);
  await sql`drop trigger contact_counts_delete on contacts`.execute(db);
  await sql`create or replace function contact_counts_insert() returns trigger language plpgsql as $$
    begin perform contact_counted_note(new.org_id || '/', 1); return null; end $$`.execute(db);
  await sql`create or replace function contact_counts_delete() returns trigger language plpgsql as $$
    begin perform contact_counted_note(old.org_id || '/', -1); return null; end $$`.execute(db);
  await sql`create trigger contact_counts_insert after insert on contacts for each row
    when (new.deleted_at is null) execute function contact_counts_insert()`.execute(db);
  await sql`create trigger contact_counts_delete after delete on contacts for each row
    when (old.deleted_at is null) execute function contact_counts_delete()`.execute(db);
  await sql`create trigger contact_counts_insert_end after insert on contacts for each statement
    execute function contact_counted_statement()`.execute(db);
  await sql`create trigger contact_counts_delete_end after delete on contacts for each statement
    execute function contact_counted_statement()`.execute(db);

  // The window's phones (decisions §7): one row's upsert; the account's count of new phones (key "org/account").
  const windowed = notedCounter(
    'window_added',
    `insert into messaging_windows as c (org_id, account_id, phones) values (org, other, n)
        on conflict (org_id, account_id) do update set phones = c.phones + excluded.phones`,
  );
  for (const statement of [windowed.flush, windowed.note, windowed.statement]) await sql`${statement}`.execute(db);
  await sql`drop trigger broadcast_recipients_window_insert on broadcast_recipients`.execute(db);
  await sql`create or replace function messaging_window_add() returns trigger language plpgsql as $$
    declare
      added boolean;
    begin
      insert into messaging_window_phones as w (org_id, account_id, phone, last_queued_at)
      values (new.org_id, new.account_id, new.phone, new.queued_at)
      on conflict (org_id, account_id, phone)
        do update set last_queued_at = greatest(w.last_queued_at, excluded.last_queued_at)
      returning (w.xmax = 0) into added;
      if added then perform window_added_note(new.org_id || '/' || new.account_id, 1); end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger broadcast_recipients_window_insert after insert on broadcast_recipients for each row
    when (new.status not in ('failed', 'cancelled', 'held')) execute function messaging_window_add()`.execute(db);
  await sql`create trigger broadcast_recipients_window_insert_end after insert on broadcast_recipients
    for each statement execute function window_added_statement()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
async function contactVersions(db: Kysely<any>): Promise<void> {
  // An organization's contact version: the number of the last transaction that moved one of its contacts. A
  // writer takes the next number on its first such write and holds the row until it commits, so that a version
  // read by a statement is exactly the set of writes that statement sees: the rule a walk's pages share (D315).
  await sql`create table contact_versions (
    org_id text not null,
    version bigint not null,
    constraint contact_versions_pk primary key (org_id)
  )`.execute(db);
  await sql`drop trigger contacts_sort_version on contacts`.execute(db);
  await sql`drop function contacts_keep_sort_version()`.execute(db);
  await sql`alter table contacts drop column version_xid`.execute(db);
  await sql`alter table contacts add column version bigint not null default 0`.execute(db);
  // Walks begun before this migration cannot go on (their cursors named a snapshot): the kept versions go too.
  await sql`drop table contact_sort_versions`.execute(db);
  await sql`create table contact_sort_versions (
    org_id text not null,
    contact_id text not null,
    version bigint not null,
    replaced bigint not null,
    replaced_at timestamptz not null,
    updated_at timestamptz not null,
    name_sort text,
    country text,
    city_sort text,
    origin text,
    constraint contact_sort_versions_pk primary key (org_id, contact_id, replaced)
  )`.execute(db);
  await sql`create index contact_sort_versions_replaced_idx on contact_sort_versions (org_id, replaced)`.execute(db);
  // The transaction's version is remembered in a transaction-local setting (`crm.contact_version`, "org/version"):
  // its later writes of the organization's contacts carry the same one, and keep no version of their own rows.
  // Planned at every call (D201).
  await sql`create function contacts_keep_sort_version() returns trigger language plpgsql
    set plan_cache_mode = force_custom_plan as $$
    declare
      mine text := current_setting('crm.contact_version', true);
      v bigint;
    begin
      if mine is not null and split_part(mine, '/', 1) = new.org_id then
        v := split_part(mine, '/', 2)::bigint;
      else
        insert into contact_versions as cv (org_id, version) values (new.org_id, 1)
        on conflict (org_id) do update set version = cv.version + 1
        returning cv.version into v;
        perform set_config('crm.contact_version', new.org_id || '/' || v, true);
      end if;
      if tg_op = 'UPDATE' and old.version <> v then
        insert into contact_sort_versions (org_id, contact_id, version, replaced, replaced_at, updated_at,
          name_sort, country, city_sort, origin)
        values (old.org_id, old.id, old.version, v, now(), old.updated_at,
          old.name_sort, old.country, old.city_sort, old.origin);
        -- Cursors live 24 hours; older versions can no longer be asked for. (Every kept version of the contact was
        -- replaced by its current one at the latest: the bound makes the primary key the cheapest way.)
        delete from contact_sort_versions
          where org_id = old.org_id and contact_id = old.id and replaced <= old.version
            and replaced_at < now() - interval '25 hours';
      end if;
      new.version := v;
      return new;
    end $$`.execute(db);
  await sql`create trigger contacts_sort_version before update on contacts for each row
    when (old.updated_at is distinct from new.updated_at or old.first_name is distinct from new.first_name
      or old.last_name is distinct from new.last_name or old.country is distinct from new.country
      or old.city is distinct from new.city or old.origin is distinct from new.origin)
    execute function contacts_keep_sort_version()`.execute(db);
  await sql`create trigger contacts_version before insert on contacts for each row
    execute function contacts_keep_sort_version()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(_db: Kysely<any>): Promise<void> {
  throw new Error('0045-distribution-keys cannot be undone: restore a backup taken before it');
}

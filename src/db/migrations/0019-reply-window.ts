import { type Kysely, sql } from 'kysely';

// decisions §15: a template reply outside the customer-service window counts against its account's rolling 24-hour
// limit. The reply names that account (`window_account_id`), so that a recount of the phone's place in the window
// (sends.repo.ts `applyRecounts`) sees it beside the broadcasts' recipients, and a counted reply that fails asks for
// that recount, as a failed recipient does (migration 0009's triggers).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table messages add column window_account_id text`.execute(db);
  await sql`create index messages_window_idx on messages (org_id, window_account_id, phone, created_at)
    where window_account_id is not null`.execute(db);
  await sql`create function reply_window_recount_later() returns trigger language plpgsql as $$
    begin
      insert into messaging_window_recounts (org_id, account_id, phone) values (new.org_id, new.window_account_id, new.phone);
      return null;
    end $$`.execute(db);
  await sql`create trigger messages_window_failed after update of status on messages for each row
    when (new.window_account_id is not null and new.status = 'failed' and old.status is distinct from 'failed')
    execute function reply_window_recount_later()`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists messages_window_failed on messages`.execute(db);
  await sql`drop function if exists reply_window_recount_later()`.execute(db);
  await sql`drop index if exists messages_window_idx`.execute(db);
  await sql`alter table messages drop column if exists window_account_id`.execute(db);
}

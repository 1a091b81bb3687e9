import { type Kysely, sql } from 'kysely';

// decisions D176: a hand-off that failed only as `handoff_unconfirmed` is moved on by the platform's later
// `sent`/`delivered`/`read` report and charged the price it was admitted at. A broadcast recipient keeps that price
// beside its refund (`unconfirmed_charge`, null on every other row); a reply keeps its hand-off row, with the
// request that names its account and price, as `unconfirmed` until a report claims it.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients add column unconfirmed_charge numeric(20, 6)`.execute(db);
  await sql`alter table reply_handoffs drop constraint reply_handoffs_state_check,
    add constraint reply_handoffs_state_check check (state in ('queued', 'marked', 'unconfirmed'))`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from reply_handoffs where state = 'unconfirmed'`.execute(db);
  await sql`alter table reply_handoffs drop constraint reply_handoffs_state_check,
    add constraint reply_handoffs_state_check check (state in ('queued', 'marked'))`.execute(db);
  await sql`alter table broadcast_recipients drop column if exists unconfirmed_charge`.execute(db);
}

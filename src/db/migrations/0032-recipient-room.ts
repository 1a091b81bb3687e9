import { type Kysely, sql } from 'kysely';

// D210: recipients keep half of each page free. A hand-off updates its recipient three times:
// the claim and the record change indexed columns (status, lease), the mark between them does not. With full pages
// the claim's new versions went to other pages, full in turn, so the mark found no room in its page either and added
// an entry to each of the recipient's indexes (5 of 64 marks were HOT). With the room, the claim's versions stay in
// their page, the old ones are pruned there once the claim has committed, and the mark is written in place (59 of
// 64). The heap is not larger for it after a fan-out: the updates' versions no longer spill into new pages (100,000
// handed-off recipients: 149 MB against 169 MB).
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients set (fillfactor = 50)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients reset (fillfactor)`.execute(db);
}

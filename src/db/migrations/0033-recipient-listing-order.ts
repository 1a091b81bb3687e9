import { type Kysely, sql } from 'kysely';

// D211: the recipients' listing index leads with (org_id, status) instead of (org_id, broadcast_id). Led like the
// primary key (org_id, broadcast_id, position), it was costed like it for a lookup of recipients by their key without
// their status, and taken: the custom plans of the fan-out's move to `sent` read the broadcast's entries for each
// row (100 in the bench's broadcasts), and a generic plan made before the table had statistics read all of a
// broadcast of 100,000 for each row (204 ms a group, D207). Now such a lookup can use no more than its organization
// in it, which never ties with the key. Every reader of the index names a status: a listing by status, the counts
// of a broadcast's sent and failed recipients (one range each), the end check's probe per pending status, the
// cancel of the queued and held tail.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index broadcast_recipients_listing_idx`.execute(db);
  await sql`create index broadcast_recipients_listing_idx
    on broadcast_recipients (org_id, status, broadcast_id, position)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index broadcast_recipients_listing_idx`.execute(db);
  await sql`create index broadcast_recipients_listing_idx
    on broadcast_recipients (org_id, broadcast_id, status, position)`.execute(db);
}

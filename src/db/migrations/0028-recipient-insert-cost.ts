import { type Kysely, sql } from 'kysely';

// D196: what each recipient insert pays beyond its row and indexes (an audience chunk of 5,000 spent
// ≈ 55 ms in the foreign key's per-row checks). The foreign key to `broadcasts` goes: broadcasts are never deleted,
// and every insert of recipients runs in the transaction that creates their broadcast (a send) or that holds its
// row locked (a chunk); the key checked that one row again for each of the statement's rows.
// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients drop constraint broadcast_recipients_broadcast_fk`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see up.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table broadcast_recipients add constraint broadcast_recipients_broadcast_fk
    foreign key (org_id, broadcast_id) references broadcasts (org_id, id)`.execute(db);
}

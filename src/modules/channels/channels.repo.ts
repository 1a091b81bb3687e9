// SQL for the organization's connected numbers: as the public API shows them, and every write of a number's row
// (D335: the operator connects and removes numbers through it; the platform's pacing rests them).
import { type Insertable, type Kysely, sql } from 'kysely';
import type { ChannelsTable, DB } from '../../db/schema.ts';

/** A new number, as the operator connects it (in the transaction that claims its directory entry). */
export const insertChannelRow = (db: Kysely<DB>, row: Insertable<ChannelsTable>) =>
  db.insertInto('channels').values(row).returningAll().executeTakeFirstOrThrow();

/** The operator's removal of a live number: answers its ids, or undefined when it was not live. */
export const removeChannelRow = (db: Kysely<DB>, orgId: string, accountId: string, channelId: string, at: Date) =>
  db
    .updateTable('channels')
    .set({ status: 'removed', removed_at: at })
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('id', '=', channelId)
    .where('status', '=', 'live')
    .returning(['id', 'phone_number_id'])
    .executeTakeFirst();

/** Numbers rest until `now + ms` (decisions §16, the platform's pacing: the claim skips them meanwhile). */
export async function restNumbers(db: Kysely<DB>, channels: { org_id: string; channel_id: string }[], ms: number) {
  for (const { org_id, channel_id } of channels) {
    await db
      .updateTable('channels')
      .set({ slowed_until: sql`now() + make_interval(secs => ${ms / 1000})` })
      .where('org_id', '=', org_id)
      .where('id', '=', channel_id)
      .execute();
  }
}

export const listLivePhones = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('channels')
    .innerJoin('messaging_accounts', (join) =>
      join
        .onRef('messaging_accounts.org_id', '=', 'channels.org_id')
        .onRef('messaging_accounts.id', '=', 'channels.account_id'),
    )
    .select([
      'channels.id',
      'channels.phone',
      'channels.display_name',
      'messaging_accounts.business_account_id',
      'channels.status',
      'channels.created_at',
    ])
    .where('channels.org_id', '=', orgId)
    .where('channels.status', '=', 'live')
    .orderBy('channels.created_at')
    .orderBy('channels.id')
    .execute();

/** The live numbers of one messaging account, oldest first: the numbers a send from its templates can use. */
export const liveNumbersOfAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('channels')
    .select(['id', 'phone'])
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'live')
    // Numbers added together share their creation time: the id (a ULID, in order of creation) breaks the tie.
    .orderBy('created_at')
    .orderBy('id')
    .execute();

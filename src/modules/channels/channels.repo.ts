// SQL for the organization's connected numbers as the public API shows them.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

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

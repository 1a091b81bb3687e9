// SQL for organizations, keys, messaging accounts and numbers (the operator's records).
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { claimEntry, inTransaction, releaseEntries } from '../../db/directory.ts';
import type { ApiKeysTable, ChannelsTable, DB, MessagingAccountsTable, OrganizationsTable } from '../../db/schema.ts';
import { insertChannelRow, removeChannelRow } from '../channels/channels.repo.ts';
import { insertAccountRow } from '../messaging-accounts/accounts.repo.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type AccountRow = Selectable<MessagingAccountsTable>;
export type ChannelRow = Selectable<ChannelsTable>;

export const insertOrganization = (db: Kysely<DB>, row: Insertable<OrganizationsTable>) =>
  db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow();

export const updateOrganization = (db: Kysely<DB>, orgId: string, patch: Updateable<OrganizationsTable>) =>
  db.updateTable('organizations').set(patch).where('id', '=', orgId).returningAll().executeTakeFirst();

export const findOrganization = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst();

export const insertApiKey = (db: Kysely<DB>, row: Insertable<ApiKeysTable>) =>
  inTransaction(db, async (trx) => {
    await claimEntry(trx, 'api_key', row.key_hash, row.org_id);
    return trx.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
  });

export const revokeApiKey = (db: Kysely<DB>, orgId: string, keyId: string, at: Date) =>
  db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();

/** Every organization, oldest first (the operator's `crm org list`). */
/**
 * decisions §18: a key's last use, moved only forward (several processes write the same minute at most once between
 * them). Called by the guard's key-usage port (http/key-usage.ts, given this function by the wiring).
 */
export const recordApiKeyUse = async (db: Kysely<DB>, orgId: string, keyId: string, at: Date): Promise<void> => {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
};

export const listOrganizations = (db: Kysely<DB>) =>
  db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').execute();

/** An organization's keys, revoked ones too, without their hashes. */
export const listApiKeys = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('api_keys')
    .select([
      'id',
      'name',
      'display_prefix as prefix',
      'scopes',
      'expires_at',
      'last_used_at',
      'created_at',
      'revoked_at',
    ])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

export const findApiKey = (db: Kysely<DB>, orgId: string, keyId: string) =>
  db
    .selectFrom('api_keys')
    .select(['id', 'revoked_at'])
    .where('org_id', '=', orgId)
    .where('id', '=', keyId)
    .executeTakeFirst();

export const insertAccount = (db: Kysely<DB>, row: Insertable<MessagingAccountsTable>) =>
  inTransaction(db, async (trx) => {
    await claimEntry(trx, 'account', row.business_account_id, row.org_id);
    return insertAccountRow(trx, row);
  });

/**
 * The organization of an account named by its id alone (the operator's `/admin/v1/messaging-accounts/{id}` routes
 * carry no organization): the one global lookup of these paths, answering only the routing key (docs/scaling.md).
 */
export const findAccountOrganization = async (db: Kysely<DB>, accountId: string) =>
  (await db.selectFrom('messaging_accounts').select('org_id').where('id', '=', accountId).executeTakeFirst())?.org_id;

export const findAccount = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('messaging_accounts')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', accountId)
    .executeTakeFirst();

export const listAccounts = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('messaging_accounts')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

/** Every number of the organization's accounts, in one statement (the accounts' list). */
export const listOrganizationChannels = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('channels').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();

export const insertChannel = (db: Kysely<DB>, row: Insertable<ChannelsTable>) =>
  inTransaction(db, async (trx) => {
    if (row.status === 'live') await claimEntry(trx, 'number', row.phone_number_id, row.org_id);
    return insertChannelRow(trx, row);
  });

export const listAccountChannels = (db: Kysely<DB>, orgId: string, accountId: string) =>
  db
    .selectFrom('channels')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

export const removeChannel = (db: Kysely<DB>, orgId: string, accountId: string, channelId: string, at: Date) =>
  inTransaction(db, async (trx) => {
    const removed = await removeChannelRow(trx, orgId, accountId, channelId, at);
    if (removed) await releaseEntries(trx, 'number', [removed.phone_number_id]);
    return removed && { id: removed.id };
  });

/** Whether the database holds any organization at all (the demo of a first start is made only on an empty one). */
export const anyOrganization = async (db: Kysely<DB>) =>
  (await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst()) !== undefined;

/** A process-wide marker in `app_state` (the demo's "seeded once"), or undefined. */
export const findAppState = (db: Kysely<DB>, key: string) =>
  db.selectFrom('app_state').select(['key', 'value']).where('key', '=', key).executeTakeFirst();

export const insertAppState = (db: Kysely<DB>, key: string, value: unknown) =>
  db
    .insertInto('app_state')
    .values({ key, value: JSON.stringify(value) })
    .execute();

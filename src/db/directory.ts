// The global lookups (D313): what a key's hash, a platform id, a login email or a token's hash belongs to. Each
// entry is written by the service in the transaction of its row and is what keeps it unique across organizations;
// a lookup reads the organization here, then the row within it (a single-shard statement on Citus). A reference
// table on Citus (D316).
import type { Kysely, Transaction } from 'kysely';
import type { DB, DirectoryKind } from './schema.ts';

type Db = Kysely<DB> | Transaction<DB>;

/** Runs `work` in the caller's transaction, or in a new one. */
export function inTransaction<T>(db: Db, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/** The unique index each kind stands for: a taken entry is refused as that index would refuse it (SQLSTATE 23505). */
const INDEX_OF: Record<DirectoryKind, string> = {
  api_key: 'api_keys_key_hash_uq',
  account: 'messaging_accounts_business_account_uq',
  number: 'channels_phone_number_id_live_uq',
  email: 'users_email_uq',
  session: 'user_sessions_token_uq',
  sign_in_link: 'user_sign_in_links_token_uq',
};

export class EntryTaken extends Error {
  readonly code = '23505';
  readonly constraint: string;
  constructor(kind: DirectoryKind) {
    const constraint = INDEX_OF[kind];
    super(`duplicate key value violates unique constraint "${constraint}"`);
    this.constraint = constraint;
  }
}

/** Claims `key` of `kind` for the organization; throws `EntryTaken` when a row of any organization holds it. */
export async function claimEntry(db: Db, kind: DirectoryKind, key: string, orgId: string): Promise<void> {
  const row = await db
    .insertInto('directory')
    .values({ kind, key, org_id: orgId })
    .onConflict((oc) => oc.columns(['kind', 'key']).doNothing())
    .returning('org_id')
    .executeTakeFirst();
  if (row === undefined) throw new EntryTaken(kind);
}

/** Releases entries of `kind` (their rows are gone or no longer hold them). */
export async function releaseEntries(db: Db, kind: DirectoryKind, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom('directory').where('kind', '=', kind).where('key', 'in', keys).execute();
}

/** The organization that holds `key` of `kind`, if any. */
export async function organizationOf(db: Db, kind: DirectoryKind, key: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('directory')
    .select('org_id')
    .where('kind', '=', kind)
    .where('key', '=', key)
    .executeTakeFirst();
  return row?.org_id;
}

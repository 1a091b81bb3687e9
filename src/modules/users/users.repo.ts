// SQL of users and their sign-in links; every query filters by the organization. The lookups that start from an
// email or a token read its organization in the directory first (D313).
import { type Kysely, sql, type Transaction } from 'kysely';
import { claimEntry, inTransaction, organizationOf, releaseEntries } from '../../db/directory.ts';
import type { DB } from '../../db/schema.ts';
import type { Role } from './users.schemas.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const USER_COLUMNS = ['id', 'email', 'name', 'role', 'created_at', 'last_sign_in_at', 'available'] as const;

export const listUsers = (db: Db, orgId: string) =>
  db.selectFrom('users').select(USER_COLUMNS).where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();

/** decisions §19: the organization's people as `GET /v1/users` lists them. */
export const listPeople = (db: Db, orgId: string) =>
  db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'role', 'available'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();

/** Sets a person's availability; answers the person and whether it was away before (undefined: no such person). */
export const setAvailable = (db: Db, orgId: string, userId: string, available: boolean) =>
  db
    .updateTable('users as u')
    .from('users as before')
    .set({ available })
    .whereRef('before.org_id', '=', 'u.org_id')
    .whereRef('before.id', '=', 'u.id')
    .where('u.org_id', '=', orgId)
    .where('u.id', '=', userId)
    .returning([...USER_COLUMNS.map((column) => `u.${column}` as const), 'before.available as was_available'])
    .executeTakeFirst();

export const findUser = (db: Db, orgId: string, userId: string) =>
  db.selectFrom('users').select(USER_COLUMNS).where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirst();

export const insertUser = (
  db: Db,
  orgId: string,
  user: { id: string; email: string; name: string | null; role: Role; created_at: Date },
) =>
  inTransaction(db, async (trx) => {
    await claimEntry(trx, 'email', user.email.toLowerCase(), orgId);
    return trx
      .insertInto('users')
      .values({ org_id: orgId, ...user })
      .returning(USER_COLUMNS)
      .executeTakeFirstOrThrow();
  });

export const updateUser = (db: Db, orgId: string, userId: string, patch: { name?: string | null; role?: Role }) =>
  db
    .updateTable('users')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .returning(USER_COLUMNS)
    .executeTakeFirst();

/** Removes a person with its email's, sessions' and sign-in links' entries in the directory. */
export const deleteUser = (db: Db, orgId: string, userId: string) =>
  inTransaction(db, async (trx) => {
    for (const [kind, table] of [
      ['session', 'user_sessions'],
      ['sign_in_link', 'user_sign_in_links'],
    ] as const) {
      const tokens = await trx
        .selectFrom(table)
        .select('token_hash')
        .where('org_id', '=', orgId)
        .where('user_id', '=', userId)
        .execute();
      await releaseEntries(
        trx,
        kind,
        tokens.map((row) => row.token_hash),
      );
    }
    const gone = await trx
      .deleteFrom('users')
      .where('org_id', '=', orgId)
      .where('id', '=', userId)
      .returning('email')
      .executeTakeFirst();
    if (gone) await releaseEntries(trx, 'email', [gone.email.toLowerCase()]);
    return { numDeletedRows: gone ? 1n : 0n };
  });

/** The organization's admins, locked: a change that could leave none runs after every other such change. */
export const lockAdmins = (db: Db, orgId: string) =>
  db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('role', '=', 'admin')
    .orderBy('id')
    .forUpdate()
    .execute();

export async function findUserByEmail(db: Db, email: string) {
  const orgId = await organizationOf(db, 'email', email.toLowerCase());
  if (orgId === undefined) return undefined;
  return db
    .selectFrom('users')
    .select(['org_id', 'id', 'password_hash'])
    .where('org_id', '=', orgId)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export const setPassword = (db: Db, orgId: string, userId: string, passwordHash: string) =>
  db
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .execute();

export const recordSignIn = (db: Db, orgId: string, userId: string, at: Date) =>
  db.updateTable('users').set({ last_sign_in_at: at }).where('org_id', '=', orgId).where('id', '=', userId).execute();

/** A new link replaces the user's unused ones. */
export async function insertSignInLink(
  db: Db,
  orgId: string,
  link: { id: string; user_id: string; token_hash: string; created_at: Date; expires_at: Date },
) {
  await db
    .updateTable('user_sign_in_links')
    .set({ used_at: link.created_at })
    .where('org_id', '=', orgId)
    .where('user_id', '=', link.user_id)
    .where('used_at', 'is', null)
    .execute();
  await claimEntry(db, 'sign_in_link', link.token_hash, orgId);
  await db
    .insertInto('user_sign_in_links')
    .values({ org_id: orgId, ...link })
    .execute();
}

export async function findSignInLink(db: Db, tokenHash: string) {
  const orgId = await organizationOf(db, 'sign_in_link', tokenHash);
  if (orgId === undefined) return undefined;
  return db
    .selectFrom('user_sign_in_links')
    .innerJoin('users', (join) =>
      join.onRef('users.org_id', '=', 'user_sign_in_links.org_id').onRef('users.id', '=', 'user_sign_in_links.user_id'),
    )
    .select([
      'user_sign_in_links.org_id',
      'user_sign_in_links.user_id',
      'user_sign_in_links.token_hash',
      'user_sign_in_links.expires_at',
      'user_sign_in_links.used_at',
      'users.email',
      'users.name',
    ])
    .where('user_sign_in_links.org_id', '=', orgId)
    .where('user_sign_in_links.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Single use under concurrency: only one request's update finds the link unused. */
export const useSignInLink = async (db: Db, tokenHash: string, at: Date) =>
  db
    .updateTable('user_sign_in_links')
    .set({ used_at: at })
    .where('org_id', '=', (await organizationOf(db, 'sign_in_link', tokenHash)) ?? '')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['org_id', 'user_id'])
    .executeTakeFirst();

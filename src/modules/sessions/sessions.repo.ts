// SQL of console sessions and of the failed sign-ins that throttle guessing. A session is found by the hash of its
// token: the directory (D313) tells its organization, the session is read within it.
import type { Kysely, Selectable, Transaction } from 'kysely';
import { claimEntry, inTransaction, organizationOf, releaseEntries } from '../../db/directory.ts';
import type { DB, OrganizationsTable } from '../../db/schema.ts';
import type { ConsolePerson } from '../../http/console-guard.ts';

type Db = Kysely<DB> | Transaction<DB>;

export const insertSession = (
  db: Db,
  orgId: string,
  session: { id: string; user_id: string; token_hash: string; created_at: Date; expires_at: Date },
) =>
  inTransaction(db, async (trx) => {
    await claimEntry(trx, 'session', session.token_hash, orgId);
    await trx
      .insertInto('user_sessions')
      .values({ org_id: orgId, ...session, last_seen_at: session.created_at })
      .execute();
  });

export interface SessionRow {
  session_id: string;
  token_hash: string;
  last_seen_at: Date;
  expires_at: Date;
  user: ConsolePerson;
  org: Selectable<OrganizationsTable>;
}

/** The session of a token hash with its user and organization: its organization, then one indexed query. */
export async function findSession(db: Db, tokenHash: string): Promise<SessionRow | undefined> {
  const orgId = await organizationOf(db, 'session', tokenHash);
  if (orgId === undefined) return undefined;
  const row = await db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.org_id', '=', 's.org_id').onRef('u.id', '=', 's.user_id'))
    .innerJoin('organizations as o', 'o.id', 's.org_id')
    .selectAll('o')
    .select([
      's.id as session_id',
      's.token_hash',
      's.last_seen_at',
      's.expires_at',
      'u.id as user_id',
      'u.email as user_email',
      'u.name as user_name',
      'u.role as user_role',
      'u.created_at as user_created_at',
      'u.last_sign_in_at as user_last_sign_in_at',
      'u.available as user_available',
    ])
    .where('s.org_id', '=', orgId)
    .where('o.id', '=', orgId)
    .where('s.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const {
    session_id,
    token_hash,
    last_seen_at,
    expires_at,
    user_id,
    user_email,
    user_name,
    user_role,
    user_created_at,
    user_last_sign_in_at,
    user_available,
    ...org
  } = row;
  return {
    session_id,
    token_hash,
    last_seen_at,
    expires_at,
    user: {
      id: user_id,
      email: user_email,
      name: user_name,
      role: user_role,
      created_at: user_created_at,
      last_sign_in_at: user_last_sign_in_at,
      available: user_available,
    },
    org,
  };
}

export const touchSession = (db: Db, orgId: string, sessionId: string, at: Date) =>
  db
    .updateTable('user_sessions')
    .set({ last_seen_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', sessionId)
    .where('last_seen_at', '<', at)
    .execute();

export const deleteSessionByHash = (db: Db, tokenHash: string) =>
  inTransaction(db, async (trx) => {
    const orgId = await organizationOf(trx, 'session', tokenHash);
    if (orgId === undefined) return;
    await trx.deleteFrom('user_sessions').where('org_id', '=', orgId).where('token_hash', '=', tokenHash).execute();
    await releaseEntries(trx, 'session', [tokenHash]);
  });

export const deleteUserSessions = (db: Db, orgId: string, userId: string) =>
  inTransaction(db, async (trx) => {
    const gone = await trx
      .deleteFrom('user_sessions')
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .returning('token_hash')
      .execute();
    await releaseEntries(
      trx,
      'session',
      gone.map((row) => row.token_hash),
    );
  });

/** Ended sessions of one user (idle or past their absolute end), removed when the user signs in again. */
export const deleteEndedSessions = (db: Db, orgId: string, userId: string, idleBefore: Date, now: Date) =>
  inTransaction(db, async (trx) => {
    const gone = await trx
      .deleteFrom('user_sessions')
      .where('org_id', '=', orgId)
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('last_seen_at', '<', idleBefore), eb('expires_at', '<=', now)]))
      .returning('token_hash')
      .execute();
    await releaseEntries(
      trx,
      'session',
      gone.map((row) => row.token_hash),
    );
  });

// ------------------------------------------------------------------------------------- sign-in attempts

export const recordAttempt = (db: Db, email: string, at: Date) =>
  db
    .insertInto('sign_in_attempts')
    .values({ email, attempted_at: at })
    .returning('id')
    .executeTakeFirstOrThrow()
    .then((row) => String(row.id));

/** The attempts of an email since `since`, oldest first. */
export const recentAttempts = (db: Db, email: string, since: Date) =>
  db
    .selectFrom('sign_in_attempts')
    .select(['id', 'attempted_at'])
    .where('email', '=', email)
    .where('attempted_at', '>', since)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute();

export const deleteAttempt = (db: Db, id: string) => db.deleteFrom('sign_in_attempts').where('id', '=', id).execute();

export const clearAttempts = (db: Db, email: string) =>
  db.deleteFrom('sign_in_attempts').where('email', '=', email).execute();

export const pruneAttempts = (db: Db, before: Date) =>
  db.deleteFrom('sign_in_attempts').where('attempted_at', '<=', before).execute();

// The rules of the console's people (decisions §17): invitations with a one-time sign-in link, roles, removal, and
// the last admin that an organization always keeps. Used by the operator API, the CLI and the console alike.
import type { Kysely } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.ts';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { newSecretToken } from '../../lib/secret-tokens.ts';
import type { ConversationChanges } from '../conversations/conversation-changes.ts';
import * as repo from './users.repo.ts';
import type { UserInput, UserPatch } from './users.schemas.ts';

export const SIGN_IN_LINK_TTL_MS = 24 * 3600 * 1000;
export const SIGN_IN_LINK_PREFIX = 'sil_';

export interface UsersDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** §19's change functions, with auto-assignment's turn counter (D350). */
  changes: ConversationChanges;
  /** PUBLIC_URL: where people reach the console; sign-in links are absolute under it. */
  publicUrl: string;
}

/** The console page that takes a sign-in link's token (in the fragment: never sent to a server or a log). */
export const signInUrl = (publicUrl: string, token: string) =>
  `${publicUrl.replace(/\/+$/, '')}/app/set-password#token=${token}`;

const lastAdmin = () => new ApiError(409, { code: 'last_admin', message: 'An organization keeps at least one admin.' });

export function createUsersService(deps: UsersDeps) {
  const { db, clock } = deps;
  const { giveOutToMember, unassignRemovedUser } = deps.changes;

  async function issueLink(database: Kysely<DB>, orgId: string, userId: string) {
    const now = clock.now();
    const { token, hash } = newSecretToken(SIGN_IN_LINK_PREFIX);
    const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_TTL_MS);
    await repo.insertSignInLink(database, orgId, {
      id: newId('sil'),
      user_id: userId,
      token_hash: hash,
      created_at: now,
      expires_at: expiresAt,
    });
    return { sign_in_url: signInUrl(deps.publicUrl, token), sign_in_url_expires_at: expiresAt };
  }

  return {
    list: async (orgId: string) => ({ items: await repo.listUsers(db, orgId) }),

    /** decisions §19: `GET /v1/users`. */
    people: async (orgId: string) => ({ items: await repo.listPeople(db, orgId) }),

    /**
     * decisions §19: a person marks themselves available or away. Becoming available gives them, at once and in the
     * same transaction, the conversations waiting in their auto-assigning teams that they have room for.
     */
    async setAvailable(orgId: string, userId: string, available: boolean) {
      return transactionWithRetry(db, async (trx) => {
        const updated = await repo.setAvailable(trx, orgId, userId, available);
        if (!updated) throw notFound();
        const { was_available, ...user } = updated;
        if (available && !was_available) await giveOutToMember(trx, orgId, userId, clock.now());
        return user;
      });
    },

    get: async (orgId: string, userId: string) =>
      (await repo.findUser(db, orgId, userId)) ?? Promise.reject(notFound()),

    /** A new user and their first sign-in link, in one transaction. */
    async invite(orgId: string, input: UserInput) {
      try {
        return await db.transaction().execute(async (trx) => {
          const user = await repo.insertUser(trx, orgId, {
            id: newId('usr'),
            email: input.email.trim(),
            name: input.name ?? null,
            role: input.role,
            created_at: clock.now(),
          });
          return { ...user, ...(await issueLink(trx, orgId, user.id)) };
        });
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_uq')) {
          throw new ApiError(409, { code: 'duplicate_user', field: 'email' });
        }
        if (isForeignKeyViolation(error)) throw notFound();
        throw error;
      }
    },

    async update(orgId: string, userId: string, patch: UserPatch) {
      return db.transaction().execute(async (trx) => {
        if (patch.role === 'agent') {
          const admins = await repo.lockAdmins(trx, orgId);
          if (admins.length === 1 && admins[0]?.id === userId) throw lastAdmin();
        }
        return (await repo.updateUser(trx, orgId, userId, patch)) ?? Promise.reject(notFound());
      });
    },

    /** Removes the user; their sessions and links go with them (foreign keys), so they are signed out at once. */
    async remove(orgId: string, userId: string) {
      await db.transaction().execute(async (trx) => {
        const admins = await repo.lockAdmins(trx, orgId);
        if (admins.length === 1 && admins[0]?.id === userId) throw lastAdmin();
        const deleted = await repo.deleteUser(trx, orgId, userId);
        if (deleted.numDeletedRows === 0n) throw notFound();
        await unassignRemovedUser(trx, orgId, userId, clock.now());
      });
    },

    /** A fresh one-time link (to choose a new password); the user's earlier unused links stop working. */
    async newSignInLink(orgId: string, userId: string) {
      return db.transaction().execute(async (trx) => {
        if (!(await repo.findUser(trx, orgId, userId))) throw notFound();
        return issueLink(trx, orgId, userId);
      });
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;

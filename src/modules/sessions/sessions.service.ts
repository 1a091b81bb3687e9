// Console sessions (decisions §17): sign-in by email and password, throttled per email; server-side sessions known
// only by the hash of their token, ending after 12 hours idle or 7 days; sign-in links that set a password.
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { hashSecretToken, newSecretToken } from '../../lib/secret-tokens.ts';
import { decoyHash, hashPassword, verifyPassword } from '../users/passwords.ts';
import * as users from '../users/users.repo.ts';
import * as repo from './sessions.repo.ts';

export const SESSION_PREFIX = 'ses_';
export const SESSION_IDLE_MS = 12 * 3600 * 1000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600 * 1000;
/** last_seen_at is written at most once a minute per session: idle expiry is exact to the minute. */
const TOUCH_EVERY_MS = 60 * 1000;
export const SIGN_IN_MAX_FAILURES = 10;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;

export interface SessionsDeps {
  db: Kysely<DB>;
  clock: Clock;
}

export type ResolvedSession = repo.SessionRow & { idle_expires_at: Date };

const invalidCredentials = () =>
  new ApiError(401, { code: 'invalid_credentials', message: 'Wrong email or password.' });
const linkExpired = () =>
  new ApiError(410, {
    code: 'sign_in_link_expired',
    message: 'This sign-in link was used already or has expired; ask an admin for a new one.',
  });

export function createSessionsService(deps: SessionsDeps) {
  const { db, clock } = deps;
  /** D358: who hears this process's sign-outs (the live streams of the console), by the token signed out. */
  const signOutListeners = new Set<(token: string) => void>();

  async function open(trx: Transaction<DB>, orgId: string, userId: string, now: Date) {
    const { token, hash } = newSecretToken(SESSION_PREFIX);
    await repo.deleteEndedSessions(trx, orgId, userId, new Date(now.getTime() - SESSION_IDLE_MS), now);
    await repo.insertSession(trx, orgId, {
      id: newId('ses'),
      user_id: userId,
      token_hash: hash,
      created_at: now,
      expires_at: new Date(now.getTime() + SESSION_ABSOLUTE_MS),
    });
    await users.recordSignIn(trx, orgId, userId, now);
    return token;
  }

  /**
   * The session a token names, if it is still live; its idle clock restarts (to the minute) unless `touch` is false
   * (an open live stream is not a person's activity).
   */
  async function resolve(token: string, options: { touch?: boolean } = {}): Promise<ResolvedSession | undefined> {
    if (!token.startsWith(SESSION_PREFIX)) return undefined;
    const hash = hashSecretToken(token);
    const found = await repo.findSession(db, hash);
    if (!found) return undefined;
    const now = clock.now();
    if (
      found.expires_at.getTime() <= now.getTime() ||
      found.last_seen_at.getTime() + SESSION_IDLE_MS <= now.getTime()
    ) {
      await repo.deleteSessionByHash(db, hash);
      return undefined;
    }
    if (options.touch !== false && now.getTime() - found.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
      await repo.touchSession(db, found.org.id, found.session_id, now);
      found.last_seen_at = now;
    }
    return { ...found, idle_expires_at: new Date(found.last_seen_at.getTime() + SESSION_IDLE_MS) };
  }

  /** A live session after sign-in, as every session answer shows it. */
  async function opened(token: string): Promise<{ token: string; session: ResolvedSession }> {
    const session = await resolve(token);
    if (!session) throw new Error('a session just opened was not found');
    return { token, session };
  }

  return {
    resolve,

    /**
     * decisions §17: 10 failed sign-ins for one email within 15 minutes answer 429 until the oldest leaves the
     * window. The attempt is recorded before the password is checked, so concurrent guesses count too: at most 10
     * are ever checked per window.
     */
    async signIn(email: string, password: string) {
      const key = email.trim().toLowerCase();
      const now = clock.now();
      const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
      await repo.pruneAttempts(db, since);
      const attempt = await repo.recordAttempt(db, key, now);
      const recent = await repo.recentAttempts(db, key, since);
      const others = recent.filter((row) => String(row.id) !== attempt);
      if (others.length >= SIGN_IN_MAX_FAILURES) {
        await repo.deleteAttempt(db, attempt);
        const freed = others[others.length - SIGN_IN_MAX_FAILURES] ?? others[0];
        const waitMs = (freed?.attempted_at.getTime() ?? now.getTime()) + SIGN_IN_WINDOW_MS - now.getTime();
        throw new ApiError(
          429,
          { code: 'too_many_sign_in_attempts', message: 'Too many failed sign-ins for this email; try again later.' },
          { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) },
        );
      }
      const user = await users.findUserByEmail(db, key);
      const matches = await verifyPassword(password, user?.password_hash ?? (await decoyHash()));
      if (!user?.password_hash || !matches) throw invalidCredentials();
      await repo.clearAttempts(db, key);
      return opened(await db.transaction().execute((trx) => open(trx, user.org_id, user.id, now)));
    },

    async signOut(token: string) {
      await repo.deleteSessionByHash(db, hashSecretToken(token));
      for (const listener of signOutListeners) listener(token);
    },

    /**
     * D358: `listener` hears every sign-out made through this process, once its session row is gone (an open stream
     * of that session ends at once; other processes' streams find the session gone at their next check). Returns
     * the function that stops listening.
     */
    onSignOut(listener: (token: string) => void): () => void {
      signOutListeners.add(listener);
      return () => signOutListeners.delete(listener);
    },

    /** What a sign-in link is for (the page shows the email), or why it no longer works. */
    async describeLink(token: string) {
      const link = await users.findSignInLink(db, hashSecretToken(token));
      if (!link) throw notFound();
      if (link.used_at !== null || link.expires_at.getTime() <= clock.now().getTime()) throw linkExpired();
      return { email: link.email, name: link.name, expires_at: link.expires_at };
    },

    /** Chooses the password of a sign-in link's user, once; ends their other sessions and opens a new one. */
    async acceptLink(token: string, password: string) {
      const passwordHash = await hashPassword(password);
      const hash = hashSecretToken(token);
      const now = clock.now();
      const sessionToken = await db.transaction().execute(async (trx) => {
        const used = await users.useSignInLink(trx, hash, now);
        if (!used) return undefined;
        await users.setPassword(trx, used.org_id, used.user_id, passwordHash);
        await repo.deleteUserSessions(trx, used.org_id, used.user_id);
        return open(trx, used.org_id, used.user_id, now);
      });
      if (sessionToken === undefined) {
        if (!(await users.findSignInLink(db, hash))) throw notFound();
        throw linkExpired();
      }
      return opened(sessionToken);
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

// The guard of the console's API (/app/api, decisions §17): the session cookie instead of an API key, CSRF
// protection on every change, the person's own rate budget (§17, D238), and for the /v1 operations mounted there the same
// plan gates as /v1. Order: session (401), budget (429), CSRF (403), plan gates (403), role (403).
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { type Organization, planGate, type RateBudget, scopeLog } from './auth.ts';
import { ApiError } from './errors.ts';

export const CONSOLE_PREFIX = '/app/api';
export const SESSION_COOKIE = 'crm_session';
export const CSRF_COOKIE = 'crm_csrf';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The signed-in person of a console session, as the session's answer shows them. */
export interface ConsolePerson {
  id: string;
  email: string;
  name: string | null;
  role: 'admin' | 'agent';
  created_at: Date;
  last_sign_in_at: Date | null;
  available: boolean;
}

/** A live console session: what the guard reads and leaves on the request for the console's routes. */
export interface ConsoleSession {
  session_id: string;
  expires_at: Date;
  idle_expires_at: Date;
  user: ConsolePerson;
  org: Organization;
}

/**
 * Where the guard finds the session of a cookie. Declared here so that HTTP does not depend on a feature: the
 * sessions module's service is one (wired in app.ts).
 */
export interface ConsoleSessions {
  /** The live session a token names, its idle clock restarted; undefined when it has ended or never was. */
  resolve(token: string): Promise<ConsoleSession | undefined>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of an /app/api request, with its token (for the CSRF check and signing out). */
    consoleSession?: { token: string; session: ConsoleSession };
  }
}

/** The CSRF token of a session: derived from its secret, so a page can only hold the one of its own session. */
export const csrfTokenOf = (sessionToken: string) =>
  createHash('sha256').update(`csrf\u0000${sessionToken}`).digest('base64url');

export interface ConsoleGuardDeps {
  sessions: ConsoleSessions;
  budget: RateBudget;
  clock: Clock;
  /** PUBLIC_URL: its origin is accepted in `Origin` besides the request's own. */
  publicUrl: string;
  /** The role check of an operation (decisions §17): an error when the user may not call it. */
  authorize?: (request: FastifyRequest, role: 'admin' | 'agent') => ApiError | undefined;
}

export const csrfFailed = () =>
  new ApiError(403, {
    code: 'csrf_failed',
    message: `A change needs a same-origin Origin and the ${CSRF_HEADER} header equal to the ${CSRF_COOKIE} cookie.`,
  });
export const sessionRequired = () => new ApiError(401, { code: 'session_required', message: 'Sign in first.' });

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export function createConsoleGuard(deps: ConsoleGuardDeps) {
  const { sessions, budget } = deps;
  const publicOrigin = originOf(deps.publicUrl);

  /** `Origin` names this server: the public URL's origin, or the origin the request itself was addressed to. */
  function sameOrigin(request: FastifyRequest): boolean {
    const origin = request.headers.origin;
    if (!origin || origin === 'null') return false;
    const given = originOf(origin);
    if (given === undefined) return false;
    return given === publicOrigin || given === originOf(`${request.protocol}://${request.host}`);
  }

  function csrfMatches(request: FastifyRequest, token: string): boolean {
    const header = request.headers[CSRF_HEADER];
    const cookie = request.cookies[CSRF_COOKIE];
    return typeof header === 'string' && header === cookie && header === csrfTokenOf(token);
  }

  async function consoleGuard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = null;
    const nowMs = deps.clock.now().getTime();
    const changing = !SAFE_METHODS.has(request.method);
    if (request.routeOptions.config?.public) {
      await budget.chargeAddress(request, reply, nowMs);
      // Signing in has no session to protect yet: the same-origin check alone refuses another site's form.
      if (changing && !sameOrigin(request)) throw csrfFailed();
      return;
    }
    const token = request.cookies[SESSION_COOKIE];
    const session = token ? await sessions.resolve(token) : undefined;
    if (!token || !session) {
      if (token) clearSessionCookies(reply, request);
      return budget.refuse(request, reply, sessionRequired(), nowMs);
    }
    await budget.chargePerson(request, reply, session.user.id, nowMs);
    if (changing && !(sameOrigin(request) && csrfMatches(request, token))) throw csrfFailed();
    // The /v1 operations answer as they do for a key of this organization.
    if ((request.routeOptions.url ?? '').startsWith(`${CONSOLE_PREFIX}/v1/`)) {
      const gate = planGate(session.org, new Date(nowMs));
      if (gate) throw new ApiError(403, gate);
    }
    const refused = deps.authorize?.(request, session.user.role);
    if (refused) throw refused;
    request.consoleSession = { token, session };
    request.auth = {
      orgId: session.org.id,
      keyId: null,
      key: null,
      org: session.org,
      user: { id: session.user.id, role: session.user.role, sessionId: session.session_id },
    };
    scopeLog(request, reply, session.org.id);
  }

  return { guard: consoleGuard, sameOrigin };
}

/** Cookies of a session (decisions §17): HttpOnly, SameSite=Lax, Secure over https; the CSRF one readable by the page. */
export function setSessionCookies(
  reply: FastifyReply,
  request: FastifyRequest,
  token: string,
  expiresAt: Date,
  publicUrl: string,
): void {
  const secure = request.protocol === 'https' || publicUrl.startsWith('https:');
  const common = { path: '/app', sameSite: 'lax' as const, secure, expires: expiresAt };
  reply.setCookie(SESSION_COOKIE, token, { ...common, httpOnly: true });
  reply.setCookie(CSRF_COOKIE, csrfTokenOf(token), { ...common, httpOnly: false });
}

export function clearSessionCookies(reply: FastifyReply, _request: FastifyRequest): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/app' });
  reply.clearCookie(CSRF_COOKIE, { path: '/app' });
}

// The console's session endpoints under /app/api (decisions §17): sign in, the current session, sign out, and the
// one-time sign-in link that sets a password. Sign-in and the link need no session (`public`); their changes are
// refused without a same-origin `Origin` by the console guard.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ConsoleSession, clearSessionCookies, csrfTokenOf, setSessionCookies } from '../../http/console-guard.ts';
import { ApiError } from '../../http/errors.ts';
import { consoleErrors, described, NoContent } from '../../http/schemas.ts';
import { AcceptSignInLink, SessionSchema, SignInInput, SignInLinkInfo, SignInLinkLookup } from './sessions.schemas.ts';
import type { SessionsService } from './sessions.service.ts';

const tags = ['Console'];
const security = [{ consoleSession: [] }];
const open = { public: true };

const crossOrigin = { codes: ['csrf_failed'], description: 'The request’s `Origin` is not this server.' };
const linkErrors = consoleErrors({
  403: crossOrigin,
  404: [],
  410: { codes: ['sign_in_link_expired'], description: 'The link was used already or has expired.' },
  422: [],
});

const view = (token: string, session: ConsoleSession) => ({
  user: session.user,
  organization: { id: session.org.id, name: session.org.name, timezone: session.org.timezone },
  csrf_token: csrfTokenOf(token),
  expires_at: session.expires_at,
  idle_expires_at: session.idle_expires_at,
});

export function sessionRoutes(parent: FastifyInstance, deps: { sessions: SessionsService; publicUrl: string }): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { sessions } = deps;

  const signedIn = (
    request: FastifyRequest,
    reply: FastifyReply,
    opened: { token: string; session: ConsoleSession },
  ) => {
    setSessionCookies(reply, request, opened.token, opened.session.expires_at, deps.publicUrl);
    return reply.code(201).send(view(opened.token, opened.session));
  };

  app.post(
    '/session',
    {
      config: open,
      schema: {
        tags,
        security: [],
        summary: 'Sign in',
        description:
          'Email and password. Sets the `crm_session` cookie (HttpOnly, SameSite=Lax, Secure over https) and the ' +
          '`crm_csrf` cookie whose value every later change sends as `X-CSRF-Token`. 10 failed sign-ins for one ' +
          'email within 15 minutes answer 429 with `Retry-After` until the oldest leaves the window.',
        operationId: 'consoleSignIn',
        body: SignInInput,
        response: {
          201: described('Signed in.', SessionSchema),
          ...consoleErrors({
            401: { codes: ['invalid_credentials'], description: 'Wrong email or password.' },
            403: crossOrigin,
            422: [],
            429: {
              codes: ['too_many_sign_in_attempts'],
              description: 'Too many failed sign-ins for this email, or over the rate limit.',
            },
          }),
        },
      },
    },
    async (request, reply) =>
      signedIn(request, reply, await sessions.signIn(request.body.email, request.body.password)),
  );

  app.get(
    '/session',
    {
      schema: {
        tags,
        security,
        summary: 'The current session',
        description: 'The signed-in person and their organization; 401 `session_required` when signed out.',
        operationId: 'consoleGetSession',
        response: { 200: described('The session.', SessionSchema), ...consoleErrors() },
      },
    },
    async (request) => {
      const current = request.consoleSession;
      if (!current) throw new ApiError(401, { code: 'session_required' });
      return view(current.token, current.session);
    },
  );

  app.delete(
    '/session',
    {
      schema: {
        tags,
        security,
        summary: 'Sign out',
        description: 'Ends the session at once and clears its cookies.',
        operationId: 'consoleSignOut',
        response: { 204: NoContent('Signed out.'), ...consoleErrors() },
      },
    },
    async (request, reply) => {
      const current = request.consoleSession;
      if (current) await sessions.signOut(current.token);
      clearSessionCookies(reply, request);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/sign-in-links/lookup',
    {
      config: open,
      schema: {
        tags,
        security: [],
        summary: 'Whom a sign-in link is for',
        description: 'For the page that chooses a password: the email of a live link; nothing changes.',
        operationId: 'consoleLookUpSignInLink',
        body: SignInLinkLookup,
        response: {
          200: described('The link is live.', SignInLinkInfo),
          ...linkErrors,
        },
      },
    },
    async (request) => sessions.describeLink(request.body.token),
  );

  app.post(
    '/sign-in-links/accept',
    {
      config: open,
      schema: {
        tags,
        security: [],
        summary: 'Choose a password from a sign-in link',
        description:
          'Sets the user’s password (at least 10 characters), uses up the link (single use, valid 24 hours), ends ' +
          'the user’s other sessions and signs in, as `POST /app/api/session` does.',
        operationId: 'consoleAcceptSignInLink',
        body: AcceptSignInLink,
        response: {
          201: described('Password set; signed in.', SessionSchema),
          ...linkErrors,
        },
      },
    },
    async (request, reply) =>
      signedIn(request, reply, await sessions.acceptLink(request.body.token, request.body.password)),
  );
}

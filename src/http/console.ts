// The console's assets (decisions §17): the built app (console/dist, made by `npm install`) served at /app from the
// same process and origin as the API. Files under /app/assets are long-cached (their names carry a hash); any other
// path under /app is a page of the app and answers index.html (deep links reload to the same page). Outside the
// /v1 scope, so no request here counts against a rate budget. Nothing is loaded from elsewhere, and the policy
// says so to the browser: no inline script, no framing, no referrer beyond this origin.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectPath } from '../lib/project-dir.ts';
import { notFound } from './errors.ts';

export const CONSOLE_DIST = `${projectPath('console', 'dist')}/`;
/** The console's own API (console-server); a path under it never answers the app's page. */
const CONSOLE_API_PREFIX = '/app/api/';

/** The policy of the console; `styleNonce` admits the style elements React Aria adds (it reads the page's nonce). */
export function contentSecurityPolicy(styleNonce?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    // blob: for a conversation's images, fetched through the API with the session and shown by an object URL.
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const CONSOLE_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': contentSecurityPolicy(),
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

function secure(reply: FastifyReply): FastifyReply {
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) reply.header(name, value);
  return reply;
}

export async function registerConsole(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? CONSOLE_DIST;
  const indexFile = `${root}index.html`;
  const built = existsSync(indexFile);
  const index = built ? readFileSync(indexFile, 'utf8') : undefined;
  if (!built) app.log.warn({ root }, 'the console is not built (npm run console:build): /app answers 503');

  await app.register(
    async (assets) => {
      // A missing file is a plain 404 (the API's not-found handler would see the HEAD route and answer 405).
      assets.setNotFoundHandler(() => {
        throw notFound();
      });
      await assets.register(fastifyStatic, {
        root: `${root}assets`,
        prefix: '/',
        decorateReply: false,
        index: false,
        immutable: true,
        maxAge: '365d',
        setHeaders: (reply) => void secure(reply),
        schemaHide: true,
      });
    },
    { prefix: '/app/assets' },
  );

  const page = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    if (path.startsWith(CONSOLE_API_PREFIX) || path === '/app/api') throw notFound();
    if (!index)
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run npm run console:build');
    const nonce = randomBytes(16).toString('base64');
    return secure(reply)
      .header('content-security-policy', contentSecurityPolicy(nonce))
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(index.replace('CSP_NONCE', nonce));
  };
  app.get('/app', { schema: { hide: true } }, page);
  app.get('/app/*', { schema: { hide: true } }, page);
}

// Roles of the console's people (decisions §17): admins may do everything; agents may use the inbox
// (conversations) and contacts, and list and read templates (to send one in the inbox). Anything else answers
// them 403 `{code: "forbidden_for_role"}`. An agent is a fixed set of the scopes of decisions §18, checked against
// each /v1 operation's scope from the one table (http/scopes.ts); console-only routes for admins say `adminOnly`.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './api-error.ts';
import { grants, type Scope } from './scopes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console route for admins only (people, API keys). */
    adminOnly?: boolean;
  }
}

export const forbiddenForRole = () =>
  new ApiError(403, { code: 'forbidden_for_role', message: 'Your role does not allow this; ask an admin.' });

/** The console guard's role check: an error when the signed-in person's role may not call this route. */
export function authorizeRole(request: FastifyRequest, role: 'admin' | 'agent'): ApiError | undefined {
  if (role === 'admin') return undefined;
  const config = request.routeOptions.config;
  if (config?.adminOnly) return forbiddenForRole();
  if (config?.scope !== undefined && !grants(AGENT_SCOPES, config.scope)) return forbiddenForRole();
  return undefined;
}

/**
 * What an agent may do, as scopes of decisions §18: the inbox (conversations, and the connected numbers and the
 * organization's time zone it shows), contacts (and the property, stage and sub-origin definitions a contact page
 * shows), and reading templates (to send one in the inbox).
 */
export const AGENT_SCOPES = [
  'conversations:write',
  'contacts:write',
  'templates:read',
  'properties:read',
  'account:read',
  // decisions §19: agents see the teams (the inbox's views); admins manage them.
  'teams:read',
];

/** The read scope that shows an event of the live stream, by the resource its type names. */
const EVENT_SCOPES: [string, Scope][] = [
  ['contact.', 'contacts:read'],
  ['message.', 'conversations:read'],
  ['conversation.', 'conversations:read'],
  ['template.', 'templates:read'],
  ['broadcast.', 'broadcasts:read'],
  ['team.', 'teams:read'],
];

/** Whether a person of `role` sees a live event of `type` (stream events of its own, like `resync`, always). */
export function eventVisible(role: 'admin' | 'agent', type: string): boolean {
  if (role === 'admin') return true;
  const scope = EVENT_SCOPES.find(([prefix]) => type.startsWith(prefix))?.[1];
  return scope === undefined ? !type.includes('.') : grants(AGENT_SCOPES, scope);
}

// Authentication and plan gates for /v1, in the order decisions §4 gives, and the rate budget that follows.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Selectable } from 'kysely';
import type { DB, OrganizationsTable } from '../db/schema.ts';
import { API_KEY_PREFIX, hashApiKey, hashesEqual } from '../lib/api-keys.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { consume, type RateLimitStore } from './rate-limit.ts';

export type Organization = Selectable<OrganizationsTable>;

export interface AuthContext {
  orgId: string;
  keyId: string;
  org: Organization;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** A /v1 route that needs no key (the OpenAPI document); budgeted per client address. */
    public?: boolean;
  }
}

export const PLAN_ORDER = ['free', 'starter', 'pro', 'scale', 'enterprise'] as const;
export type PlanCode = (typeof PLAN_ORDER)[number];

export const RATE_LIMIT_PAID = 20;
export const RATE_LIMIT_TRIAL = 5;
export const RATE_LIMIT_ANONYMOUS = 20;

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export async function findKey(db: Kysely<DB>, token: string) {
  const hash = hashApiKey(token);
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('organizations', 'organizations.id', 'api_keys.org_id')
    .selectAll('organizations')
    .select(['api_keys.id as key_id', 'api_keys.key_hash', 'api_keys.revoked_at'])
    .where('api_keys.key_hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || !hashesEqual(row.key_hash, hash)) return undefined;
  const { key_id, key_hash: _hash, revoked_at: _revoked, ...org } = row;
  return { keyId: key_id, org: org as Organization };
}

/** contract: subscription, then trial, then plan; the first failing gate answers. */
export function planGate(org: Organization, now: Date): string | undefined {
  if (org.subscription_status === 'canceled' || org.subscription_status === 'suspended') return 'subscription_required';
  if (org.trial) {
    if (org.trial_ends_at !== null && org.trial_ends_at.getTime() <= now.getTime()) return 'trial_expired';
    return undefined;
  }
  const rank = PLAN_ORDER.indexOf(org.plan as PlanCode);
  if (rank < PLAN_ORDER.indexOf('scale')) return 'scale_plan_required';
  return undefined;
}

export interface GuardDeps {
  db: Kysely<DB>;
  clock: Clock;
  rateLimitStore: RateLimitStore;
  metrics: Metrics;
}

/** The onRequest hook of every /v1 route: identify, budget, then gate. */
export function createV1Guard(deps: GuardDeps) {
  async function budget(request: FastifyRequest, reply: FastifyReply, key: string, limit: number, scope: string) {
    let decision: Awaited<ReturnType<typeof consume>>;
    try {
      decision = await consume(deps.rateLimitStore, key, limit, deps.clock.now().getTime());
    } catch (error) {
      // A rate-limit store outage must not take the API down: allow, and say so in the log.
      request.log.warn({ err: error }, 'rate limit store unavailable; request allowed');
      return;
    }
    reply.header('X-RateLimit-Limit', decision.limit);
    reply.header('X-RateLimit-Remaining', decision.remaining);
    reply.header('X-RateLimit-Reset', decision.reset);
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ scope });
      throw new ApiError(429, 'rate_limited', { 'Retry-After': '1' });
    }
  }

  return async function v1Guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = null;
    const anonymousKey = `ip:${request.ip}`;
    if (request.routeOptions.config?.public) {
      await budget(request, reply, anonymousKey, RATE_LIMIT_ANONYMOUS, 'address');
      return;
    }
    const token = bearerToken(request.headers.authorization);
    let failure: ApiError | undefined;
    let found: Awaited<ReturnType<typeof findKey>>;
    if (token === undefined) failure = new ApiError(401, 'missing_bearer_token');
    else if (!token.startsWith(API_KEY_PREFIX)) failure = new ApiError(403, 'api_key_required');
    else {
      found = await findKey(deps.db, token);
      if (!found) failure = new ApiError(401, 'invalid_api_key');
    }
    if (failure || !found) {
      await budget(request, reply, anonymousKey, RATE_LIMIT_ANONYMOUS, 'address');
      throw failure ?? new ApiError(401, 'invalid_api_key');
    }
    const { org, keyId } = found;
    await budget(request, reply, `org:${org.id}`, org.trial ? RATE_LIMIT_TRIAL : RATE_LIMIT_PAID, 'organization');
    const gate = planGate(org, deps.clock.now());
    if (gate) throw new ApiError(403, gate);
    request.auth = { orgId: org.id, keyId, org };
    // Every later log line of the request, "request completed" included, names the organization (issue 11.4).
    const log = request.log.child({ org_id: org.id });
    request.log = log;
    reply.log = log;
  };
}

/** The authenticated organization of a /v1 request; routes call this instead of trusting optional state. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError(401, 'missing_bearer_token');
  return request.auth;
}

// Authentication and plan gates for /v1, in the order decisions §4 gives, and the rate budget that follows.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Selectable } from 'kysely';
import type { DB, OrganizationsTable } from '../db/schema.ts';
import { API_KEY_PREFIX, hashApiKey, hashesEqual } from '../lib/api-keys.ts';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from './errors.ts';
import type { Metrics } from './metrics.ts';
import { decide, type Hit, type RateLimitStore } from './rate-limit.ts';

export type Organization = Selectable<OrganizationsTable>;

export interface AuthContext {
  orgId: string;
  keyId: string;
  org: Organization;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    /** A read that started before its key was confirmed: what the confirmation found wrong, if anything. */
    authCheck?: Promise<unknown>;
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

export interface FoundKey {
  keyId: string;
  org: Organization;
}

/** A live key by its SHA-256 hash, with its organization: one indexed query. */
export async function findKeyByHash(db: Kysely<DB>, hash: string): Promise<FoundKey | undefined> {
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
  /**
   * Keep resolved keys in memory, checked against the store's access generation on every request. Only safe when
   * every process that can revoke a key or change an organization reaches this store (Redis), or when this process
   * is the only one (the embedded database).
   */
  cacheKeys?: boolean;
}

interface CachedKey extends FoundKey {
  generation: string;
}

/** Routes whose answer shows the organization's own fields (not only its id): never started early. */
const ORGANIZATION_READERS = new Set(['/v1/me', '/v1/contacts']);

/** Enough for every key of every organization a process serves; the oldest entry leaves first. */
const KEY_CACHE_SIZE = 10_000;

/** The onRequest hook of every /v1 route: identify, budget, then gate. */
export function createV1Guard(deps: GuardDeps) {
  const { db, rateLimitStore: store } = deps;
  const cache = new Map<string, CachedKey>();
  // The generation this process last saw; entries loaded under another one are stale.
  let seen: string | null = null;

  const remember = (hash: string, found: FoundKey, generation: string | null) => {
    if (!deps.cacheKeys || generation === null) return;
    if (cache.size >= KEY_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(hash, { ...found, generation });
  };

  /** One unit of `key`'s budget and the access generation, in one round trip; null when the store failed. */
  async function spend(request: FastifyRequest, key: string, windowStart: number): Promise<Hit | null> {
    try {
      if (store.hitWithGeneration) return await store.hitWithGeneration(key, windowStart);
      return { count: await store.hit(key, windowStart), generation: null };
    } catch (error) {
      // A rate-limit store outage must not take the API down: allow, and say so in the log.
      request.log.warn({ err: error }, 'rate limit store unavailable; request allowed');
      return null;
    }
  }

  function enforce(reply: FastifyReply, hit: Hit | null, limit: number, nowMs: number, scope: string): void {
    if (!hit) return;
    const decision = decide(hit.count, limit, nowMs);
    reply.header('X-RateLimit-Limit', decision.limit);
    reply.header('X-RateLimit-Remaining', decision.remaining);
    reply.header('X-RateLimit-Reset', decision.reset);
    if (!decision.allowed) {
      deps.metrics.rateLimitRejections.inc({ scope });
      throw new ApiError(429, 'rate_limited', { 'Retry-After': '1' });
    }
  }

  async function refuse(request: FastifyRequest, reply: FastifyReply, failure: ApiError, nowMs: number) {
    const hit = await spend(request, `ip:${request.ip}`, Math.floor(nowMs / 1000));
    enforce(reply, hit, RATE_LIMIT_ANONYMOUS, nowMs, 'address');
    throw failure;
  }

  /**
   * The key's organization and the organization's budget spent: from the cache when its entry was loaded under the
   * generation the store reports now, otherwise from the database (decisions: "Keys, cache and Redis").
   */
  async function identify(request: FastifyRequest, hash: string, windowStart: number) {
    const cached = deps.cacheKeys ? cache.get(hash) : undefined;
    if (cached) {
      const hit = await spend(request, `org:${cached.org.id}`, windowStart);
      if (hit?.generation != null && hit.generation === cached.generation) return { found: cached as FoundKey, hit };
      // Something changed since the entry was loaded (or the store cannot tell): read the key again.
      observe(hit?.generation ?? null);
      const found = await findKeyByHash(db, hash);
      if (found) remember(hash, found, hit?.generation ?? null);
      return { found, hit };
    }
    const before = seen;
    let found = await findKeyByHash(db, hash);
    if (!found) return { found, hit: null };
    const hit = await spend(request, `org:${found.org.id}`, windowStart);
    const generation = hit?.generation ?? null;
    if (generation !== null && generation !== before) {
      // A change may have landed between our read and the store's answer: read again, now that it is known.
      observe(generation);
      found = await findKeyByHash(db, hash);
      if (found) remember(hash, found, generation);
    } else remember(hash, found, generation);
    return { found, hit };
  }

  function observe(generation: string | null) {
    if (generation === seen) return;
    cache.clear();
    seen = generation;
  }

  /**
   * A read whose key is cached under the generation this process last saw starts at once; its budget and the
   * generation are checked while the route reads, and `settle` answers 401/403/429 instead of the read when the
   * check says so. Only reads (no effect to undo) of routes that use the organization's id alone (the id of a
   * key's organization never changes) take this path (decisions: "Keys, cache and Redis").
   */
  function startEarly(request: FastifyRequest, reply: FastifyReply, hash: string, nowMs: number): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (!deps.cacheKeys || ORGANIZATION_READERS.has(request.routeOptions.url ?? '')) return false;
    const cached = cache.get(hash);
    if (!cached || seen === null || cached.generation !== seen || planGate(cached.org, new Date(nowMs))) return false;
    const check = async () => {
      const { found, hit } = await identify(request, hash, Math.floor(nowMs / 1000));
      if (!found) return refuse(request, reply, new ApiError(401, 'invalid_api_key'), nowMs);
      enforce(reply, hit, found.org.trial ? RATE_LIMIT_TRIAL : RATE_LIMIT_PAID, nowMs, 'organization');
      const gate = planGate(found.org, new Date(nowMs));
      if (gate) throw new ApiError(403, gate);
    };
    request.authCheck = check().then(
      () => undefined,
      (error: unknown) => error ?? new Error('key check failed'),
    );
    request.auth = { orgId: cached.org.id, keyId: cached.keyId, org: cached.org };
    scopeLog(request, reply, cached.org.id);
    return true;
  }

  async function v1Guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = null;
    const nowMs = deps.clock.now().getTime();
    if (request.routeOptions.config?.public) {
      const hit = await spend(request, `ip:${request.ip}`, Math.floor(nowMs / 1000));
      enforce(reply, hit, RATE_LIMIT_ANONYMOUS, nowMs, 'address');
      return;
    }
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return refuse(request, reply, new ApiError(401, 'missing_bearer_token'), nowMs);
    if (!token.startsWith(API_KEY_PREFIX)) return refuse(request, reply, new ApiError(403, 'api_key_required'), nowMs);
    const hash = hashApiKey(token);
    if (startEarly(request, reply, hash, nowMs)) return;
    const { found, hit } = await identify(request, hash, Math.floor(nowMs / 1000));
    if (!found) return refuse(request, reply, new ApiError(401, 'invalid_api_key'), nowMs);
    const { org, keyId } = found;
    enforce(reply, hit, org.trial ? RATE_LIMIT_TRIAL : RATE_LIMIT_PAID, nowMs, 'organization');
    const gate = planGate(org, deps.clock.now());
    if (gate) throw new ApiError(403, gate);
    request.auth = { orgId: org.id, keyId, org };
    scopeLog(request, reply, org.id);
  }

  /**
   * The onSend hook of /v1: a read that started early is answered only once its key check has passed; otherwise
   * what the check found (401/403/429, or a fault such as an unreachable database) goes to the one error handler,
   * which answers in its place. That answer passes here again with nothing left to wait for.
   */
  async function settle(request: FastifyRequest, _reply: FastifyReply, payload: unknown): Promise<unknown> {
    const check = request.authCheck;
    if (!check) return payload;
    request.authCheck = undefined;
    const failure = await check;
    if (failure !== undefined) throw failure;
    return payload;
  }

  return { guard: v1Guard, settle };
}

/** Every later log line of the request, "request completed" included, names the organization (issue 11.4). */
function scopeLog(request: FastifyRequest, reply: FastifyReply, orgId: string): void {
  const log = request.log;
  // The request's own logger (Fastify makes one per request) takes the binding: no second logger per request.
  // Never the server's logger itself, which every request shares.
  if (hasSetBindings(log) && reply.log === log && log !== request.server.log) {
    log.setBindings({ org_id: orgId });
    return;
  }
  const child = log.child({ org_id: orgId });
  request.log = child;
  reply.log = child;
}

function hasSetBindings<T extends object>(log: T): log is T & { setBindings(bindings: Record<string, string>): void } {
  return 'setBindings' in log && typeof log.setBindings === 'function';
}

/** The authenticated organization of a /v1 request; routes call this instead of trusting optional state. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new ApiError(401, 'missing_bearer_token');
  return request.auth;
}

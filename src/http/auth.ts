// The guard of /v1, in this order (decisions §4, D10): the key (401/403), then the rate budget (429), then the
// plan gates (403). A request refused at the key spends its client address's budget, every later one its organization's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Selectable } from 'kysely';
import { organizationOf } from '../db/directory.ts';
import type { DB, OrganizationsTable } from '../db/schema.ts';
import { API_KEY_PREFIX, hashApiKey, hashesEqual } from '../lib/api-keys.ts';
import type { Clock } from '../lib/clock.ts';
import { bearerToken } from './bearer.ts';
import { ApiError } from './errors.ts';
import type { KeyUsage } from './key-usage.ts';
import type { Metrics } from './metrics.ts';
import { decide, type Hit, type RateLimitStore } from './rate-limit.ts';
import { checkScope, grants } from './scopes.ts';

export type Organization = Selectable<OrganizationsTable>;

/** The calling key as `GET /v1/me` shows it (decisions §18). */
export interface KeyView {
  id: string;
  name: string | null;
  scopes: string[];
  expires_at: Date | null;
}

export interface AuthContext {
  orgId: string;
  /** The API key of a /v1 request; null for a console session (decisions §17). */
  keyId: string | null;
  key: KeyView | null;
  org: Organization;
  /** The signed-in person of a console request (/app/api); absent for an API key. */
  user?: SessionUser;
}

export interface SessionUser {
  id: string;
  role: 'admin' | 'agent';
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    /** A read that started before its key was confirmed: what the confirmation found wrong, if anything. */
    authCheck?: Promise<unknown>;
  }
  interface FastifyContextConfig {
    /** A route that needs no key or session (the OpenAPI document, signing in); budgeted per client address. */
    public?: boolean;
  }
}

export const PLAN_ORDER = ['free', 'starter', 'pro', 'scale', 'enterprise'] as const;
export type PlanCode = (typeof PLAN_ORDER)[number];

export const RATE_LIMIT_PAID = 20;
export const RATE_LIMIT_TRIAL = 5;
export const RATE_LIMIT_ANONYMOUS = 20;
/** decisions §17: each signed-in person's own budget in the console, whatever the plan (D238). */
export const RATE_LIMIT_PERSON = 20;

export interface FoundKey {
  keyId: string;
  key: KeyView;
  /** The minute the key was last used, as read with it (decisions §18). */
  lastUsedAt: Date | null;
  org: Organization;
}

/** A live (unrevoked) key by its SHA-256 hash, with its organization: its organization (D313), one indexed query. */
export async function findKeyByHash(db: Kysely<DB>, hash: string): Promise<FoundKey | undefined> {
  const orgId = await organizationOf(db, 'api_key', hash);
  if (orgId === undefined) return undefined;
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('organizations', 'organizations.id', 'api_keys.org_id')
    .selectAll('organizations')
    .select([
      'api_keys.id as key_id',
      'api_keys.name as key_name',
      'api_keys.scopes as key_scopes',
      'api_keys.expires_at as key_expires_at',
      'api_keys.last_used_at as key_last_used_at',
      'api_keys.key_hash',
      'api_keys.revoked_at',
    ])
    .where('api_keys.org_id', '=', orgId)
    .where('organizations.id', '=', orgId)
    .where('api_keys.key_hash', '=', hash)
    .executeTakeFirst();
  if (!row || row.revoked_at !== null || !hashesEqual(row.key_hash, hash)) return undefined;
  const {
    key_id,
    key_name,
    key_scopes,
    key_expires_at,
    key_last_used_at,
    key_hash: _hash,
    revoked_at: _revoked,
    ...org
  } = row;
  return {
    keyId: key_id,
    key: { id: key_id, name: key_name, scopes: key_scopes, expires_at: key_expires_at },
    lastUsedAt: key_last_used_at,
    org: org as Organization,
  };
}

/** decisions §18: after `expires_at` the key is answered 401 `api_key_expired`. */
export function keyExpired(key: KeyView, now: Date): boolean {
  return key.expires_at !== null && key.expires_at.getTime() <= now.getTime();
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
  /** Records each admitted key's last use (decisions §18). */
  keyUsage: KeyUsage;
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
  const usage = deps.keyUsage;
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

  async function refuse(
    request: FastifyRequest,
    reply: FastifyReply,
    failure: ApiError,
    nowMs: number,
  ): Promise<never> {
    await chargeAddress(request, reply, nowMs);
    throw failure;
  }

  /**
   * The key's organization and the organization's budget spent: from the cache when its entry was loaded under the
   * generation the store reports now, otherwise from the database (decisions D20).
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
   * key's organization never changes) take this path (decisions D21).
   */
  function startEarly(request: FastifyRequest, reply: FastifyReply, hash: string, nowMs: number): boolean {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (!deps.cacheKeys || ORGANIZATION_READERS.has(request.routeOptions.url ?? '')) return false;
    const cached = cache.get(hash);
    if (!cached || seen === null || cached.generation !== seen) return false;
    // Only a key that will pass: an expired key, a missing scope or a failing gate takes the ordinary path.
    const now = new Date(nowMs);
    const scope = request.routeOptions.config?.scope;
    if (keyExpired(cached.key, now) || (scope && !grants(cached.key.scopes, scope)) || planGate(cached.org, now)) {
      return false;
    }
    const check = async () => {
      const { found, hit } = await identify(request, hash, Math.floor(nowMs / 1000));
      await admit(request, reply, found, hit, nowMs);
    };
    request.authCheck = check().then(
      () => undefined,
      (error: unknown) => error ?? new Error('key check failed'),
    );
    request.auth = { orgId: cached.org.id, keyId: cached.keyId, key: cached.key, org: cached.org };
    scopeLog(request, reply, cached.org.id);
    return true;
  }

  /**
   * decisions §4 and §18, in order: unknown or revoked key (401), expired key (401), the organization's budget
   * (429), the key's scope (403 insufficient_scope, the request counted), then the organization's gates (403).
   */
  async function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    found: FoundKey | undefined,
    hit: Hit | null,
    nowMs: number,
  ): Promise<FoundKey> {
    // A key that does not authenticate is budgeted like no key, per client address.
    if (!found) return refuse(request, reply, new ApiError(401, 'invalid_api_key'), nowMs);
    const now = new Date(nowMs);
    if (keyExpired(found.key, now)) return refuse(request, reply, new ApiError(401, 'api_key_expired'), nowMs);
    enforce(reply, hit, found.org.trial ? RATE_LIMIT_TRIAL : RATE_LIMIT_PAID, nowMs, 'organization');
    checkScope(found.key.scopes, request.routeOptions.config?.scope);
    const gate = planGate(found.org, now);
    if (gate) throw new ApiError(403, gate);
    usage.touch(found.org.id, found.keyId, found.lastUsedAt, now);
    return found;
  }

  async function v1Guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.auth = null;
    const nowMs = deps.clock.now().getTime();
    if (request.routeOptions.config?.public) return chargeAddress(request, reply, nowMs);
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) return refuse(request, reply, new ApiError(401, 'missing_bearer_token'), nowMs);
    if (!token.startsWith(API_KEY_PREFIX)) return refuse(request, reply, new ApiError(403, 'api_key_required'), nowMs);
    const hash = hashApiKey(token);
    if (startEarly(request, reply, hash, nowMs)) return;
    const { found, hit } = await identify(request, hash, Math.floor(nowMs / 1000));
    const { org, keyId, key } = await admit(request, reply, found, hit, nowMs);
    request.auth = { orgId: org.id, keyId, key, org };
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

  /**
   * A signed-in person's own one-second budget (decisions §17, D238): 20 whatever the plan, counted apart from the
   * organization's key budget, so that people in the console and the integration never starve each other. The
   * counter lives in the same store as every other, so several processes share it (Redis).
   */
  async function chargePerson(request: FastifyRequest, reply: FastifyReply, userId: string, nowMs: number) {
    const hit = await spend(request, `user:${userId}`, Math.floor(nowMs / 1000));
    enforce(reply, hit, RATE_LIMIT_PERSON, nowMs, 'person');
  }

  /** A request without a credential to charge: budgeted per client address. */
  async function chargeAddress(request: FastifyRequest, reply: FastifyReply, nowMs: number) {
    const hit = await spend(request, `ip:${request.ip}`, Math.floor(nowMs / 1000));
    enforce(reply, hit, RATE_LIMIT_ANONYMOUS, nowMs, 'address');
  }

  return { guard: v1Guard, settle, budget: { chargePerson, chargeAddress, refuse } };
}

export type RateBudget = ReturnType<typeof createV1Guard>['budget'];

/** Every later log line of the request, "request completed" included, names the organization (decisions D27). */
export function scopeLog(request: FastifyRequest, reply: FastifyReply, orgId: string): void {
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

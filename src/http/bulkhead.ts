// The per-organization bulkhead (D132): an organization holds at most `limit` expensive requests in
// flight in this process (so at most that many of the pool's connections on them), a few more wait a short time,
// and the rest are answered 503 `service_busy` with Retry-After at once. One tenant's flood then leaves the pool's
// other connections, and the CPU they need, to the other organizations. The rate limit (decisions §4) bounds
// requests per second; this bounds requests at once, which is what a slow query (a search, a batch upsert) turns a
// modest rate into. Cheap requests (reads by id, a plain page) take no place: they are short by construction.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BULKHEAD_DEFAULTS } from '../config.ts';
import { BusyError, KeyedSemaphores, type SemaphoreLimits } from '../lib/bounded-semaphore.ts';
import { serviceBusy } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization's bulkhead place this request holds, released once its answer is ready. */
    bulkheadRelease?: (() => void) | undefined;
  }
}

/**
 * The expensive operations, by operationId (like the scopes' table): each is many statements or a scan that grows
 * with the organization's data. A function decides per request (a list is expensive only when it searches/filters).
 * A send is not: a few short statements that the rate budget bounds, and integrators rightly send concurrently.
 */
const EXPENSIVE_OPERATIONS: Record<string, true | ((request: FastifyRequest) => boolean)> = {
  listContacts: (request) => {
    const query = request.query as { q?: unknown; property_filter?: unknown } | undefined;
    return query?.q !== undefined || query?.property_filter !== undefined;
  },
  batchUpsertContacts: true,
  createBroadcast: true,
  retryBroadcast: true,
};

function expensive(request: FastifyRequest): boolean {
  const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
  const rule = operationId === undefined ? undefined : EXPENSIVE_OPERATIONS[operationId];
  if (rule === undefined) return false;
  return rule === true || rule(request);
}

export interface BulkheadLimits extends SemaphoreLimits {
  /**
   * The share of its places' time an organization may keep busy while others are active (0 < share ≤ 1): a place a
   * request held for t ms rests t × (1 − share) / share ms more before the organization may take it again (at most
   * `MAX_REST_MS`). The place bounds how many of the pool's connections a flood holds; the rest bounds how much of
   * the CPUs it takes from the others (D184). An organization alone in the process rests not at all.
   */
  share: number;
}

/** The longest rest after one request (a request that held its place very long does not lock its org out). */
const MAX_REST_MS = 2000;
/** An organization that sent a request within this long is active. */
const ACTIVE_MS = 1000;

export function createBulkhead(options: Partial<BulkheadLimits> = {}) {
  const limits: BulkheadLimits = {
    limit: options.limit ?? BULKHEAD_DEFAULTS.limit,
    queue: options.queue ?? BULKHEAD_DEFAULTS.queue,
    waitMs: options.waitMs ?? BULKHEAD_DEFAULTS.waitMs,
    share: options.share ?? BULKHEAD_DEFAULTS.share,
  };
  const places = new KeyedSemaphores('organization', limits);
  const restFactor = (1 - limits.share) / limits.share;
  // When each organization last sent a request to this process, oldest first (a request moves its organization to
  // the end): the rest applies only while another organization is active, so that one alone keeps the whole place.
  const lastSeen = new Map<string, number>();

  function seen(orgId: string, now: number): void {
    lastSeen.delete(orgId);
    lastSeen.set(orgId, now);
  }

  /** Whether an organization other than `orgId` sent a request within the last `ACTIVE_MS`. */
  function othersActive(orgId: string, now: number): boolean {
    for (const [key, at] of lastSeen) {
      if (at >= now - ACTIVE_MS) break;
      lastSeen.delete(key);
    }
    return lastSeen.size > (lastSeen.has(orgId) ? 1 : 0);
  }

  /** Gives a place back, after its rest if another organization is active. */
  const afterRest = (release: () => void, orgId: string, heldSince: number) => () => {
    const now = performance.now();
    const rest = othersActive(orgId, now) ? Math.min(MAX_REST_MS, (now - heldSince) * restFactor) : 0;
    if (rest < 1) release();
    else setTimeout(release, rest).unref();
  };

  /** preHandler: after the guard named the organization and the input passed validation, before the handler. */
  async function enter(request: FastifyRequest): Promise<void> {
    const orgId = request.auth?.orgId;
    if (!orgId) return;
    seen(orgId, performance.now());
    if (request.bulkheadRelease || !expensive(request)) return;
    try {
      const release = await places.acquire(orgId);
      request.bulkheadRelease = afterRest(release, orgId, performance.now());
    } catch (error) {
      if (!(error instanceof BusyError)) throw error;
      request.log.warn({ org_id: orgId, reason: error.reason }, 'organization over its limit of expensive requests');
      throw serviceBusy();
    }
  }

  /**
   * onSend (the handler is done with the database; a streamed answer holds no place) and onResponse (a request
   * whose answer was never sent): whichever comes first gives the place back, once.
   */
  function leave(request: FastifyRequest): void {
    const release = request.bulkheadRelease;
    request.bulkheadRelease = undefined;
    release?.();
  }

  return {
    limits,
    held: (orgId: string) => places.held(orgId),
    hooks: {
      preHandler: enter,
      onSend: async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
        leave(request);
        return payload;
      },
      onResponse: (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
        leave(request);
        done();
      },
    },
  };
}

export type Bulkhead = ReturnType<typeof createBulkhead>;

// The per-organization bulkhead (issue 19 point 2): an organization holds at most `limit` expensive requests in
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

export function createBulkhead(options: Partial<SemaphoreLimits> = {}) {
  const limits: SemaphoreLimits = {
    limit: options.limit ?? BULKHEAD_DEFAULTS.limit,
    queue: options.queue ?? BULKHEAD_DEFAULTS.queue,
    waitMs: options.waitMs ?? BULKHEAD_DEFAULTS.waitMs,
  };
  const places = new KeyedSemaphores('organization', limits);

  /** preHandler: after the guard named the organization and the input passed validation, before the handler. */
  async function enter(request: FastifyRequest): Promise<void> {
    const orgId = request.auth?.orgId;
    if (!orgId || request.bulkheadRelease || !expensive(request)) return;
    try {
      request.bulkheadRelease = await places.acquire(orgId);
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

// The console's live stream (decisions §17), built on the events outbox: a change's transaction records its events
// (events.ts), whose outbox write also notifies the processes holding open streams of that organization
// (`console_notify_events`, migration 0017) at commit. Each process listens on ONE database connection and hands
// the notifications to its open streams in memory: an open stream holds no database connection.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import type { DB } from '../../db/schema.ts';

export const CONSOLE_EVENTS_CHANNEL = 'crm_console_events';
/** A process's registration outlives a crash by at most this long; it is refreshed three times as often. */
const REGISTRATION_TTL_S = 60;
const REFRESH_MS = 20_000;

/** One event as the stream shows it: its type and the ids it concerns (the page fetches what it shows). */
export interface StreamEvent {
  type: string;
  id?: string;
  broadcast_id?: string;
  conversation_id?: string;
  contact_id?: string;
  /** D293: a `conversation.note_created`'s author and the people it mentions (who the console notifies). */
  author_id?: string;
  mention_ids?: string[];
}

export type StreamListener = (events: StreamEvent[]) => void;

export interface ConsoleEventHub {
  /** Calls `listener` with the organization's events from now on; resolves once they are sure to arrive. */
  subscribe(orgId: string, listener: StreamListener, onResync: () => void): Promise<() => void>;
  /**
   * Hands events that are no change of data (D289: who has which conversation open) to the organization's open
   * streams, in every process, at once: a notification on the same channel, nothing stored.
   */
  publish(orgId: string, events: StreamEvent[]): Promise<void>;
  close(): Promise<void>;
}

export function createConsoleEventHub(deps: { database: Database; log: FastifyBaseLogger }): ConsoleEventHub {
  const db: Kysely<DB> = deps.database.db;
  const processId = randomUUID();
  const listeners = new Map<string, Set<{ listener: StreamListener; onResync: () => void }>>();
  let stopListening: Promise<() => Promise<void>> | undefined;
  let refresher: NodeJS.Timeout | undefined;
  // Registrations and removals of one organization run one after another, so a stream opened just as the last one
  // closed is never left unregistered.
  const pending = new Map<string, Promise<unknown>>();
  const inOrder = (orgId: string, step: () => Promise<unknown>) => {
    const next = (pending.get(orgId) ?? Promise.resolve()).then(step, step);
    pending.set(orgId, next);
    void next.finally(() => {
      if (pending.get(orgId) === next) pending.delete(orgId);
    });
    return next;
  };

  const register = (orgId: string) =>
    sql`insert into console_streams (org_id, process_id, expires_at)
      values (${orgId}, ${processId}, now() + make_interval(secs => ${REGISTRATION_TTL_S}))
      on conflict (org_id, process_id) do update set expires_at = excluded.expires_at`.execute(db);

  async function refresh() {
    try {
      await sql`update console_streams set expires_at = now() + make_interval(secs => ${REGISTRATION_TTL_S})
        where process_id = ${processId}`.execute(db);
      // Registrations of processes that died with streams open.
      await sql`delete from console_streams where expires_at < now() - interval '1 hour'`.execute(db);
    } catch (error) {
      deps.log.warn({ err: error }, 'console stream registrations not refreshed');
    }
  }

  function dispatch(payload: string) {
    let message: { org_id?: string; events?: StreamEvent[] };
    try {
      message = JSON.parse(payload);
    } catch {
      return;
    }
    const subscribers = message.org_id ? listeners.get(message.org_id) : undefined;
    if (!subscribers || !Array.isArray(message.events) || message.events.length === 0) return;
    for (const { listener } of subscribers) listener(message.events);
  }

  function startListening() {
    stopListening ??= deps.database.listen(CONSOLE_EVENTS_CHANNEL, {
      onNotification: dispatch,
      // Notifications of the gap are lost: every open page fetches again what it shows.
      onReconnect: () => {
        for (const subscribers of listeners.values()) for (const { onResync } of subscribers) onResync();
      },
    });
    if (!refresher) {
      refresher = setInterval(() => void refresh(), REFRESH_MS);
      refresher.unref();
    }
    return stopListening;
  }

  return {
    async subscribe(orgId, listener, onResync) {
      await startListening();
      const entry = { listener, onResync };
      let subscribers = listeners.get(orgId);
      if (!subscribers) {
        subscribers = new Set();
        listeners.set(orgId, subscribers);
      }
      subscribers.add(entry);
      const unsubscribe = () => {
        subscribers.delete(entry);
        if (subscribers.size > 0 || listeners.get(orgId) !== subscribers) return;
        listeners.delete(orgId);
        void inOrder(orgId, async () => {
          if (listeners.has(orgId)) return;
          await sql`delete from console_streams where org_id = ${orgId} and process_id = ${processId}`.execute(db);
        }).catch((error: unknown) => deps.log.warn({ err: error }, 'console stream registration not removed'));
      };
      try {
        await inOrder(orgId, () => register(orgId));
      } catch (error) {
        unsubscribe();
        throw error;
      }
      return unsubscribe;
    },
    async publish(orgId, events) {
      await sql`select pg_notify(${CONSOLE_EVENTS_CHANNEL}, ${JSON.stringify({ org_id: orgId, events })})`.execute(db);
    },
    async close() {
      clearInterval(refresher);
      refresher = undefined;
      const stop = stopListening;
      stopListening = undefined;
      listeners.clear();
      if (stop) await (await stop)();
      await sql`delete from console_streams where process_id = ${processId}`.execute(db).catch(() => {});
    },
  };
}

// The transactional outbox of events to API clients (decisions §11). Features call `recordEvents` inside the
// transaction of the change that causes the events: a rolled-back change emits nothing, a committed one is never
// lost. One statement per call, however many events: it stores each event once and writes one delivery row for
// every endpoint of the organization that is enabled and subscribed to its type at that moment. Without an enabled
// endpoint it writes nothing and costs one cached index probe (the SQL is the function webhook_record_events).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import type { EventInput } from './event-types.ts';

interface PreparedEvent {
  id: string;
  type: string;
  payload: string;
}

function prepare(events: readonly EventInput[], now: Date): PreparedEvent[] {
  const createdAt = now.toISOString();
  return events.map(({ type, data }) => {
    const id = newId('evt');
    // The body of every delivery of this event, serialized once so that each retry sends (and signs) the same bytes.
    return { id, type, payload: JSON.stringify({ id, type, created_at: createdAt, data }) };
  });
}

async function insertEvents(
  executor: Kysely<DB>,
  orgId: string,
  events: PreparedEvent[],
  now: Date,
  onlyEndpointId?: string,
): Promise<number> {
  if (events.length === 0) return 0;
  // One statement: the function (migration 0007) stores the events that some endpoint takes, and their deliveries.
  const result = await sql<{ queued: number }>`
    select webhook_record_events(${orgId}, ${JSON.stringify(events)}::jsonb, ${now}, ${onlyEndpointId ?? null})
      as queued
  `.execute(executor);
  return Number(result.rows[0]?.queued ?? 0);
}

/**
 * Records events of one organization in the caller's transaction (pass the transaction, not the pool).
 * Returns how many deliveries were queued.
 */
export async function recordEvents(
  trx: Kysely<DB>,
  orgId: string,
  events: readonly EventInput[],
  now: Date = new Date(),
): Promise<number> {
  return insertEvents(trx, orgId, prepare(events, now), now);
}

/** The test call: a `ping` event to one endpoint alone; returns the event id. */
export async function recordPing(executor: Kysely<DB>, orgId: string, endpointId: string, now: Date = new Date()) {
  const [event] = prepare([{ type: 'ping', data: { endpoint_id: endpointId } }], now);
  const queued = await insertEvents(executor, orgId, [event as PreparedEvent], now, endpointId);
  return { eventId: (event as PreparedEvent).id, queued };
}

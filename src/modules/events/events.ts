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

/**
 * recordEvents as an expression (the function call, answering how many deliveries were queued) for a caller that
 * records events within a larger statement of the same transaction (the fan-out records a group's answers in one).
 */
export function recordEventsCall(orgId: string, events: readonly EventInput[], now: Date = new Date()) {
  return sql<number>`webhook_record_events(${orgId}, ${JSON.stringify(prepare(events, now))}::jsonb, ${now}::timestamptz,
    null)`;
}

/** The test call: a `ping` event to one endpoint alone; returns the event id. */
export async function recordPing(executor: Kysely<DB>, orgId: string, endpointId: string, now: Date = new Date()) {
  const [event] = prepare([{ type: 'ping', data: { endpoint_id: endpointId } }], now);
  const queued = await insertEvents(executor, orgId, [event as PreparedEvent], now, endpointId);
  return { eventId: (event as PreparedEvent).id, queued };
}

/** How long finished deliveries and their events are kept (Stripe keeps events 30 days). */
export const WEBHOOK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Deletes deliveries finished before `retentionMs` ago and the events no delivery refers to any more, a bounded
 * batch at a time; returns how many deliveries were deleted. Pending deliveries and their events are kept.
 */
export async function pruneWebhookHistory(db: Kysely<DB>, retentionMs = WEBHOOK_RETENTION_MS, batch = 5000) {
  const cutoff = sql<Date>`now() - make_interval(secs => ${retentionMs / 1000})`;
  const deleted = await sql`
    delete from webhook_deliveries d
    using (
      select org_id, id from webhook_deliveries
      where status in ('succeeded', 'failed') and updated_at < ${cutoff}
      limit ${batch}
    ) old
    where d.org_id = old.org_id and d.id = old.id
  `.execute(db);
  await sql`
    delete from webhook_events ev
    using (
      select e.org_id, e.id from webhook_events e
      where e.created_at < ${cutoff}
        and not exists (select 1 from webhook_deliveries d where d.org_id = e.org_id and d.event_id = e.id)
      limit ${batch}
    ) old
    where ev.org_id = old.org_id and ev.id = old.id
  `.execute(db);
  return Number(deleted.numAffectedRows ?? 0);
}

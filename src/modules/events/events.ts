// The transactional outbox of events to API clients (decisions §11). Features call `recordEvents` inside the
// transaction of the change that causes the events: a rolled-back change emits nothing, a committed one is never
// lost. One statement per call, however many events: it stores each event once and writes one delivery row for
// every endpoint of the organization that is enabled and subscribed to its type at that moment. Without such an
// endpoint it writes nothing and costs one indexed probe of the organization's endpoints.
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
  // `onlyEndpointId` (the test ping) targets one endpoint whatever it subscribes to.
  const subscribed = onlyEndpointId ? sql`e.id = ${onlyEndpointId}` : sql`(e.events ? i.type or e.events ? '*')`;
  const result = await sql`
    with input as (
      select x.id, x.type, x.payload
      from jsonb_to_recordset(${JSON.stringify(events)}::jsonb) as x(id text, type text, payload text)
    ),
    targets as (
      select i.id as event_id, i.type, e.id as endpoint_id
      from input i
      join webhook_endpoints e on e.org_id = ${orgId} and e.enabled and ${subscribed}
    ),
    stored as (
      insert into webhook_events (org_id, id, type, payload, created_at)
      select ${orgId}, i.id, i.type, i.payload, ${now}
      from input i
      where i.id in (select event_id from targets)
    )
    insert into webhook_deliveries (org_id, id, endpoint_id, event_id, event_type, next_attempt_at, created_at,
      updated_at)
    select ${orgId}, 'whd_' || replace(gen_random_uuid()::text, '-', ''), t.endpoint_id, t.event_id, t.type,
      now(), now(), now()
    from targets t
  `.execute(executor);
  return Number(result.numAffectedRows ?? 0);
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

// The transactional outbox of events to API clients (decisions §11). Features call `recordEvents` inside the
// transaction of the change that causes the events: a rolled-back change emits nothing, a committed one is never
// lost. One statement per call, however many events: it stores each event once and writes one delivery row for
// every endpoint of the organization that is enabled and subscribed to its type at that moment. Without an enabled
// endpoint it writes nothing and costs one cached index probe. Which endpoints take an event is the subscription
// rule, a function of the schema (subscription-rule.ts); this file prepares the events.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';
import type { EventInput } from './event-types.ts';
import { subscriptionRuleCall } from './subscription-rule.ts';

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

/**
 * Tells the processes holding open console streams of the organization about these events, at commit (decisions
 * §17; migration 0017's function: one notification per call, one index probe when no console is open). Answers 0.
 */
const consoleNotifyCall = (orgId: string, events: string) =>
  sql<number>`console_notify_events(${orgId}, ${events}::jsonb)`;

async function insertEvents(
  executor: Kysely<DB>,
  orgId: string,
  events: PreparedEvent[],
  now: Date,
  onlyEndpointId?: string,
): Promise<number> {
  if (events.length === 0) return 0;
  // One statement: the rule stores the events that some endpoint takes, and their deliveries; the console's live
  // stream (decisions §17) is told of the same events at the same commit (not of a test ping).
  const body = JSON.stringify(events);
  const call = subscriptionRuleCall(orgId, body, now, onlyEndpointId ?? null);
  const notify = onlyEndpointId ? sql<number>`0` : consoleNotifyCall(orgId, body);
  const result = await sql<{ queued: number }>`select ${call} + ${notify} as queued`.execute(executor);
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
  const body = JSON.stringify(prepare(events, now));
  return sql<number>`(${subscriptionRuleCall(orgId, body, now, null)} + ${consoleNotifyCall(orgId, body)})`;
}

/** The test call: a `ping` event to one endpoint alone; returns the event id. */
export async function recordPing(executor: Kysely<DB>, orgId: string, endpointId: string, now: Date = new Date()) {
  const [event] = prepare([{ type: 'ping', data: { endpoint_id: endpointId } }], now);
  const queued = await insertEvents(executor, orgId, [event as PreparedEvent], now, endpointId);
  return { eventId: (event as PreparedEvent).id, queued };
}

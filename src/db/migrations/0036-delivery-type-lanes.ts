import { type Kysely, sql } from 'kysely';
import { installSubscriptionRule, laneOf } from './webhook-record-events.ts';

// D229: a delivery lane per event type (DELIVERY_LANES, modules/events/subscription-rule.ts), where 0018 had two
// (conversational, and every other type together): `broadcast.finished` no longer waits behind an endpoint's backlog
// of `contact.*` events. The rule writes the new lanes; pending deliveries take theirs. The indexes already lead with
// the lane.
const CONVERSATIONAL_ONLY = [['message.%', 'ping']];

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and do not use the live row types.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update webhook_deliveries set lane = ${laneOf(sql.ref('event_type'))}
    where status = 'pending'`.execute(db);
  await installSubscriptionRule(db);
}

// biome-ignore lint/suspicious/noExplicitAny: as above.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`update webhook_deliveries set lane = ${laneOf(sql.ref('event_type'), CONVERSATIONAL_ONLY)}
    where status = 'pending'`.execute(db);
  await installSubscriptionRule(db, CONVERSATIONAL_ONLY);
}

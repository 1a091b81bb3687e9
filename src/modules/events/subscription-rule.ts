// The subscription rule of the outbox (decisions §11, D95), owned by the events module (D334): which endpoints take
// an event is SQL, kept as a function (`webhook_record_events`) so that PostgreSQL keeps its plans: a call for an
// organization without an enabled endpoint costs one cached index probe, and one with endpoints one statement, which
// the fan-out can also embed in its own statement (events.ts, recordEventsCall). The rule and the delivery lanes it
// writes (D229) are changed here; the outbox calls it by `subscriptionRuleCall`. The function is part of the schema:
// migrations, which import no feature and never change with live code, install a frozen copy of this text
// (db/migrations/webhook-record-events.ts); test/api/events/subscription-rule.test.ts fails when a migrated database's
// rule is not this one, so a change here comes with a migration that installs it.
import { type Kysely, type RawBuilder, sql } from 'kysely';

/**
 * The delivery lanes (D229), by event type (`%` as in LIKE): an endpoint's claim takes each lane in its own due order
 * with its own in-flight allowance, so no event type waits behind another's backlog at the same endpoint. Lane 0 is
 * the conversational one (`message.*`, `conversation.*` of decisions §19, and the test `ping`, which a person waits
 * for): claimed first, with slots of the pool kept for it. A type not listed takes the lane after these (`OTHER_LANE`).
 */
export const DELIVERY_LANES: readonly (readonly string[])[] = [
  ['message.%', 'conversation.%', 'ping'],
  ['contact.created'],
  ['contact.updated'],
  ['contact.deleted'],
  ['broadcast.recipient.updated'],
  ['broadcast.started'],
  ['broadcast.finished'],
  ['template.status_updated'],
];
export const OTHER_LANE = DELIVERY_LANES.length;

/** The lane of an event type as SQL (`lanes` and the other lane after them). */
export function laneOf(type: RawBuilder<unknown>, lanes: readonly (readonly string[])[] = DELIVERY_LANES) {
  const whens = lanes.map((types, lane) => {
    const matches = types.map((name) =>
      name.includes('%') ? sql`${type} like ${sql.lit(name)}` : sql`${type} = ${sql.lit(name)}`,
    );
    return sql`when ${sql.join(matches, sql` or `)} then ${sql.lit(lane)}`;
  });
  return sql`case ${sql.join(whens, sql` `)} else ${sql.lit(lanes.length)} end`;
}

/**
 * Installs (or replaces) the rule: each event goes to every enabled endpoint of the organization subscribed to its
 * type or to `*`; p_only_endpoint (the test ping) targets one endpoint whatever it subscribes to. Only the events
 * that some endpoint takes are stored. Each delivery gets its type's lane (`lanes`, D229). Answers how many
 * deliveries were queued.
 */
export async function installSubscriptionRule<Schema>(
  db: Kysely<Schema>,
  lanes: readonly (readonly string[])[] = DELIVERY_LANES,
): Promise<void> {
  await sql`
    create or replace function webhook_record_events(p_org text, p_events jsonb, p_now timestamptz,
      p_only_endpoint text)
    returns integer language plpgsql as $fn$
    declare
      queued integer;
    begin
      if not exists (select 1 from webhook_endpoints where org_id = p_org and enabled) then
        return 0;
      end if;
      with input as (
        select x.id, x.type, x.payload
        from jsonb_to_recordset(p_events) as x(id text, type text, payload text)
      ),
      targets as (
        select i.id as event_id, i.type, e.id as endpoint_id
        from input i
        join webhook_endpoints e on e.org_id = p_org and e.enabled
          and (case when p_only_endpoint is null then e.events ? i.type or e.events ? '*'
                    else e.id = p_only_endpoint end)
      ),
      stored as (
        insert into webhook_events (org_id, id, type, payload, created_at)
        select p_org, i.id, i.type, i.payload, p_now
        from input i
        where i.id in (select event_id from targets)
      )
      -- The lane (D229): no event type queues behind another's backlog at the same endpoint.
      insert into webhook_deliveries (org_id, id, endpoint_id, event_id, event_type, lane, next_attempt_at,
        created_at, updated_at)
      select p_org, 'whd_' || replace(gen_random_uuid()::text, '-', ''), t.endpoint_id, t.event_id, t.type,
        ${laneOf(sql.ref('t.type'), lanes)}, now(), now(), now()
      from targets t;
      get diagnostics queued = row_count;
      return queued;
    end
    $fn$`.execute(db);
}

/** The rule as an expression answering how many deliveries were queued (`events` is the outbox's JSON). */
export function subscriptionRuleCall(orgId: string, events: string, now: Date, onlyEndpointId: string | null) {
  return sql<number>`webhook_record_events(${orgId}, ${events}::jsonb, ${now}::timestamptz, ${onlyEndpointId})`;
}

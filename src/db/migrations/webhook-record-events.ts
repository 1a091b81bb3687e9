// The outbox's subscription rule (`webhook_record_events`, D95) and its delivery lanes (D229) as migrations 0007, 0018
// and 0036 install them: a frozen copy, since a migration imports no feature and never changes with live code. The
// rule's owner is modules/events/subscription-rule.ts (D334); test/api/events/subscription-rule.test.ts fails when a
// migrated database's rule differs from it. A changed rule is a new migration with its own copy, never an edit here.
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
export async function installSubscriptionRule(
  db: Kysely<unknown>,
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

// SQL of webhook endpoints and their deliveries log. Every query filters by the organization first.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../db/schema.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export function listEndpoints(db: Kysely<DB>, orgId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findEndpoint(db: Kysely<DB>, orgId: string, id: string, options: { lock?: boolean } = {}) {
  let query = db.selectFrom('webhook_endpoints').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  if (options.lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Serializes endpoint creation per organization, so the limit of 20 holds under concurrent requests. */
export async function lockOrganization(db: Kysely<DB>, orgId: string): Promise<void> {
  await db.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().execute();
}

export async function countEndpoints(db: Kysely<DB>, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export function insertEndpoint(db: Kysely<DB>, row: Omit<EndpointRow, 'enabled'> & { enabled?: boolean }) {
  return db
    .insertInto('webhook_endpoints')
    .values({ ...row, events: JSON.stringify(row.events) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export type EndpointChanges = Partial<
  Omit<EndpointRow, 'org_id' | 'id' | 'created_at' | 'events'> & { events: string[] }
>;

export function updateEndpoint(db: Kysely<DB>, orgId: string, id: string, changes: EndpointChanges) {
  const { events, ...rest } = changes;
  return db
    .updateTable('webhook_endpoints')
    .set({ ...rest, ...(events ? { events: JSON.stringify(events) } : {}) })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Kysely<DB>, orgId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** A disabled endpoint receives nothing more: its pending deliveries fail (they can be retried once enabled). */
export async function failPendingDeliveries(db: Kysely<DB>, orgId: string, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', lease_token: null, last_error: 'endpoint_disabled', updated_at: sql`now()` })
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * A page of an endpoint's deliveries log, newest first, with the endpoint's existence, in one statement (issue 9:
 * one round trip per read): the endpoint row leads and the page joins it laterally, so an endpoint without
 * deliveries is one row of nulls and an unknown endpoint no row at all (`found` false).
 */
export async function listDeliveries(
  db: Kysely<DB>,
  orgId: string,
  endpointId: string,
  filter: { status?: string[] | undefined; afterEventId?: string | undefined; limit: number },
): Promise<{ found: boolean; rows: DeliveryRow[] }> {
  const rows = await db
    .selectFrom('webhook_endpoints as e')
    .leftJoinLateral(
      (eb) => {
        let page = eb
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('org_id', '=', orgId)
          .where('endpoint_id', '=', endpointId);
        if (filter.status && filter.status.length > 0) page = page.where('status', 'in', filter.status);
        // Event ids are time-ordered (ULIDs): newest first is descending event id, unique per endpoint.
        if (filter.afterEventId) page = page.where('event_id', '<', filter.afterEventId);
        return page.orderBy('event_id', 'desc').limit(filter.limit).as('d');
      },
      (join) => join.onTrue(),
    )
    .selectAll('d')
    .where('e.org_id', '=', orgId)
    .where('e.id', '=', endpointId)
    .orderBy('d.event_id', 'desc')
    .execute();
  return { found: rows.length > 0, rows: rows.filter(isDelivery) };
}

/** A row of the lateral page: its id is null only on the one row of nulls an empty page leaves. */
function isDelivery<Row extends { id: string | null }>(row: Row): row is Row & DeliveryRow {
  return row.id !== null;
}

export function findDelivery(db: Kysely<DB>, orgId: string, endpointId: string, id: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findDeliveryOfEvent(db: Kysely<DB>, orgId: string, endpointId: string, eventId: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
}

/**
 * Makes a delivery due now. A pending one keeps its retry schedule; a finished one gets exactly one more attempt.
 * One that a worker holds right now is left alone: that attempt is the one asked for.
 */
export function retryDelivery(db: Kysely<DB>, orgId: string, endpointId: string, id: string) {
  return db
    .updateTable('webhook_deliveries')
    .set({
      attempt_limit: sql`case when status = 'pending' then attempt_limit else attempts + 1 end`,
      status: 'pending',
      next_attempt_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('org_id', '=', orgId)
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status', '!=', 'pending'), eb('lease_token', 'is', null)]))
    .returningAll()
    .executeTakeFirst();
}

// SQL of webhook endpoints (their deliveries: deliveries.repo.ts). Every query filters by the organization first.
import type { Kysely, Selectable } from 'kysely';
import type { DB, WebhookEndpointsTable } from '../../db/schema.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

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

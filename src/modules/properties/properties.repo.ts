// SQL for custom property definitions. Every query filters by org_id.
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { CrmPropertiesTable, DB } from '../../db/schema.ts';
import { nextOrderIndex } from '../../lib/reorder.ts';

export type PropertyRow = Selectable<CrmPropertiesTable>;

export const listProperties = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('crm_properties').selectAll().where('org_id', '=', orgId).orderBy('order_idx').orderBy('id').execute();

export const findProperty = (db: Kysely<DB>, orgId: string, id: string) =>
  db.selectFrom('crm_properties').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();

export const findPropertyByKey = (db: Kysely<DB>, orgId: string, key: string) =>
  db.selectFrom('crm_properties').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();

/** Appends at the end of the organization's order. */
export const insertProperty = async (db: Kysely<DB>, row: Omit<Insertable<CrmPropertiesTable>, 'order_idx'>) =>
  db
    .insertInto('crm_properties')
    .values({ ...row, order_idx: await nextOrderIndex(db, 'crm_properties', row.org_id) })
    .returningAll()
    .executeTakeFirstOrThrow();

export const updateProperty = (db: Kysely<DB>, orgId: string, id: string, patch: Updateable<CrmPropertiesTable>) =>
  db
    .updateTable('crm_properties')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

export const deleteProperty = (db: Kysely<DB>, orgId: string, id: string) =>
  db.deleteFrom('crm_properties').where('org_id', '=', orgId).where('id', '=', id).returning('id').executeTakeFirst();

/** The current order, locked until the transaction ends (reorders of one organization run one at a time). */
export const lockOrder = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('crm_properties')
    .select('id')
    .where('org_id', '=', orgId)
    .orderBy('order_idx')
    .orderBy('id')
    .forUpdate()
    .execute();

export async function writeOrder(db: Kysely<DB>, orgId: string, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  const rows = sql.join(ids.map((id, index) => sql`(${id}, ${index}::int)`));
  await sql`update crm_properties p set order_idx = v.idx, updated_at = ${now}
    from (values ${rows}) as v (id, idx)
    where p.org_id = ${orgId} and p.id = v.id and p.order_idx <> v.idx`.execute(db);
}

/** The keys of the organization's live (not archived) custom properties. */
export const liveKeys = async (db: Kysely<DB>, orgId: string): Promise<string[]> =>
  (
    await db
      .selectFrom('crm_properties')
      .select('key')
      .where('org_id', '=', orgId)
      .where('archived_at', 'is', null)
      .execute()
  ).map((row) => row.key);

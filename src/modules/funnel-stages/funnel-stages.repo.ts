// SQL for funnel stages. Every query filters by org_id.
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, FunnelStagesTable } from '../../db/schema.ts';
import { nextOrderIndex } from '../../lib/reorder.ts';

export type StageRow = Selectable<FunnelStagesTable>;

/**
 * Serialises the stage writes of one organization until the transaction ends: the initial flag, the order and
 * "first stage is initial" depend on the other stages. A transaction-scoped advisory lock does not block readers
 * or contact writes.
 */
export async function lockStages(db: Kysely<DB>, orgId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`funnel_stages:${orgId}`}, 0))`.execute(db);
}

export const listStages = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('funnel_stages').selectAll().where('org_id', '=', orgId).orderBy('order_idx').orderBy('id').execute();

export const findStage = (db: Kysely<DB>, orgId: string, id: string) =>
  db.selectFrom('funnel_stages').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();

export const findStageByKey = (db: Kysely<DB>, orgId: string, key: string) =>
  db.selectFrom('funnel_stages').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();

export const findInitialStage = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('funnel_stages')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('is_initial', '=', true)
    .executeTakeFirst();

export const keysLike = async (db: Kysely<DB>, orgId: string, prefix: string) =>
  new Set(
    (
      await db
        .selectFrom('funnel_stages')
        .select('key')
        .where('org_id', '=', orgId)
        .where('key', 'like', `${prefix.replace(/_/g, '\\_')}%`)
        .execute()
    ).map((row) => row.key),
  );

export const insertStage = async (db: Kysely<DB>, row: Omit<Insertable<FunnelStagesTable>, 'order_idx'>) =>
  db
    .insertInto('funnel_stages')
    .values({ ...row, order_idx: await nextOrderIndex(db, 'funnel_stages', row.org_id) })
    .returningAll()
    .executeTakeFirstOrThrow();

export const updateStage = (db: Kysely<DB>, orgId: string, id: string, patch: Updateable<FunnelStagesTable>) =>
  db
    .updateTable('funnel_stages')
    .set(patch)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

export const clearInitial = (db: Kysely<DB>, orgId: string, now: Date) =>
  db
    .updateTable('funnel_stages')
    .set({ is_initial: false, updated_at: now })
    .where('org_id', '=', orgId)
    .where('is_initial', '=', true)
    .execute();

export const deleteStage = (db: Kysely<DB>, orgId: string, id: string) =>
  db.deleteFrom('funnel_stages').where('org_id', '=', orgId).where('id', '=', id).execute();

export async function countLiveContacts(db: Kysely<DB>, orgId: string, stageId: string): Promise<number> {
  const row = await db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('org_id', '=', orgId)
    .where('funnel_stage_id', '=', stageId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function writeOrder(db: Kysely<DB>, orgId: string, ids: string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  const rows = sql.join(ids.map((id, index) => sql`(${id}, ${index}::int)`));
  await sql`update funnel_stages s set order_idx = v.idx, updated_at = ${now}
    from (values ${rows}) as v (id, idx)
    where s.org_id = ${orgId} and s.id = v.id and s.order_idx <> v.idx`.execute(db);
}

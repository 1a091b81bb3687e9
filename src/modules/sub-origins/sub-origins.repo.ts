// SQL for sub-origins. Every query filters by org_id.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, SubOriginsTable } from '../../db/schema.ts';

export type SubOriginRow = Selectable<SubOriginsTable>;

export const listSubOrigins = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('sub_origins').selectAll().where('org_id', '=', orgId).orderBy('created_at').orderBy('id').execute();

export const findSubOrigin = (db: Kysely<DB>, orgId: string, id: string) =>
  db.selectFrom('sub_origins').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();

export const findSubOriginByKey = (db: Kysely<DB>, orgId: string, key: string) =>
  db.selectFrom('sub_origins').selectAll().where('org_id', '=', orgId).where('key', '=', key).executeTakeFirst();

export const insertSubOrigin = (db: Kysely<DB>, row: Insertable<SubOriginsTable>) =>
  db.insertInto('sub_origins').values(row).returningAll().executeTakeFirstOrThrow();

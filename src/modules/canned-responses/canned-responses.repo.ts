// SQL of canned responses; every query filters by org_id.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

const COLUMNS = ['id', 'short_code', 'text', 'created_at', 'updated_at'] as const;

/** `q` as a LIKE pattern's literal part (its own `%`, `_` and `\` match themselves). */
const literal = (q: string) => q.replace(/[\\%_]/g, (c) => `\\${c}`);

export function listCannedResponses(db: Kysely<DB>, orgId: string, q?: string) {
  let query = db.selectFrom('canned_responses').select(COLUMNS).where('org_id', '=', orgId).orderBy('short_code');
  if (q !== undefined) {
    const like = literal(q);
    query = query.where((eb) => eb.or([eb('short_code', 'ilike', `${like}%`), eb('text', 'ilike', `%${like}%`)]));
  }
  return query.execute();
}

export const findCannedResponse = (db: Kysely<DB>, orgId: string, id: string) =>
  db.selectFrom('canned_responses').select(COLUMNS).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();

/** The organization's row, locked against other creations (the limit is counted under it). */
export async function countLocked(db: Kysely<DB>, orgId: string): Promise<number> {
  await db.selectFrom('organizations').select('id').where('id', '=', orgId).forNoKeyUpdate().execute();
  const row = await sql<{ count: number }>`select count(*)::int as count from canned_responses
    where org_id = ${orgId}`.execute(db);
  return Number(row.rows[0]?.count ?? 0);
}

export const insertCannedResponse = (
  db: Kysely<DB>,
  orgId: string,
  row: { id: string; short_code: string; text: string; at: Date },
) =>
  db
    .insertInto('canned_responses')
    .values({
      org_id: orgId,
      id: row.id,
      short_code: row.short_code,
      text: row.text,
      created_at: row.at,
      updated_at: row.at,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();

export const updateCannedResponse = (
  db: Kysely<DB>,
  orgId: string,
  id: string,
  set: { short_code?: string; text?: string; updated_at: Date },
) =>
  db
    .updateTable('canned_responses')
    .set(set)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst();

export const deleteCannedResponse = (db: Kysely<DB>, orgId: string, id: string) =>
  db.deleteFrom('canned_responses').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();

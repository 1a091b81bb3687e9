// SQL of automation rules and their runs (decisions §20).
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { AutomationRuleRunsTable, AutomationRulesTable } from '../../db/schema-automation.ts';

export type RuleRow = Selectable<AutomationRulesTable>;
export type RunRow = Selectable<AutomationRuleRunsTable>;

/** Every rule, in the order they run. */
export const listRules = (db: Kysely<DB>, orgId: string) =>
  db.selectFrom('automation_rules').selectAll().where('org_id', '=', orgId).orderBy('position').orderBy('id').execute();

export const findRule = (db: Kysely<DB>, orgId: string, id: string, options: { lock?: boolean } = {}) => {
  const query = db.selectFrom('automation_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id);
  return (options.lock ? query.forUpdate() : query).executeTakeFirst();
};

/** Serializes rule creations of one organization, so the limit of 100 holds under concurrent requests. */
export async function lockOrganization(db: Kysely<DB>, orgId: string): Promise<void> {
  await db.selectFrom('organizations').select('id').where('id', '=', orgId).forUpdate().execute();
}

export async function ruleStats(
  db: Kysely<DB>,
  orgId: string,
): Promise<{ count: number; lastPosition: number | null }> {
  const row = await db
    .selectFrom('automation_rules')
    .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.max('position').as('last')])
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), lastPosition: row.last === null ? null : Number(row.last) };
}

export const insertRule = (db: Kysely<DB>, row: Insertable<AutomationRulesTable>) =>
  db.insertInto('automation_rules').values(row).returningAll().executeTakeFirstOrThrow();

export const updateRule = (
  db: Kysely<DB>,
  orgId: string,
  id: string,
  changes: Partial<Insertable<AutomationRulesTable>>,
) =>
  db
    .updateTable('automation_rules')
    .set(changes)
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();

export async function deleteRule(db: Kysely<DB>, orgId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('automation_rules')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Of `ids`, those that are users of the organization. */
export async function existingUsers(db: Kysely<DB>, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('org_id', '=', orgId).where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}

/** A page of a rule's runs, newest first, after (created_at, id); `found` says whether the rule exists. */
export async function listRuns(
  db: Kysely<DB>,
  orgId: string,
  ruleId: string,
  page: { after?: [string, string] | undefined; limit: number },
) {
  const rule = await findRule(db, orgId, ruleId);
  if (!rule) return { found: false, rows: [] as RunRow[] };
  let query = db
    .selectFrom('automation_rule_runs')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('rule_id', '=', ruleId);
  if (page.after) {
    const [createdAt, id] = page.after;
    query = query.where(sql<boolean>`(created_at, id) < (${new Date(createdAt)}, ${id})`);
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).execute();
  return { found: true, rows };
}

export const insertRuns = (db: Kysely<DB>, rows: Insertable<AutomationRuleRunsTable>[]) =>
  rows.length === 0
    ? Promise.resolve()
    : db
        .insertInto('automation_rule_runs')
        .values(rows)
        .execute()
        .then(() => {});

/** decisions §20: each rule keeps its runs for 30 days. */
export const RULE_RUNS_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** decisions §20: one batch of retention, runs older than `retentionMs`; answers how many went. */
export async function pruneRuleRuns(db: Kysely<DB>, now: Date, retentionMs: number, batch: number): Promise<number> {
  const before = new Date(now.getTime() - retentionMs);
  const deleted = await sql`
    delete from automation_rule_runs r
    using (select org_id, id from automation_rule_runs where created_at < ${before} limit ${batch}) old
    where r.org_id = old.org_id and r.id = old.id
  `.execute(db);
  return Number(deleted.numAffectedRows ?? 0);
}

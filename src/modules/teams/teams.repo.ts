// SQL of teams and their members; every query filters by org_id.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

const selectTeams = (db: Kysely<DB>, orgId: string) =>
  db
    .selectFrom('teams as t')
    .select([
      't.id',
      't.name',
      't.auto_assign',
      't.max_open_per_member',
      't.created_at',
      't.updated_at',
      sql<string[]>`array(select tm.user_id from team_members tm where tm.org_id = t.org_id and tm.team_id = t.id
        order by tm.user_id)`.as('member_ids'),
    ])
    .where('t.org_id', '=', orgId);

export type TeamRow = Awaited<ReturnType<typeof findTeam>> & {};

export const listTeams = (db: Kysely<DB>, orgId: string) =>
  selectTeams(db, orgId).orderBy('t.created_at').orderBy('t.id').execute();

export const findTeam = (db: Kysely<DB>, orgId: string, teamId: string) =>
  selectTeams(db, orgId).where('t.id', '=', teamId).executeTakeFirst();

/** The organization's row, locked against other team creations (the 100 teams' limit is counted under it). */
export async function countTeamsLocked(db: Kysely<DB>, orgId: string): Promise<number> {
  await db.selectFrom('organizations').select('id').where('id', '=', orgId).forNoKeyUpdate().execute();
  const row = await db
    .selectFrom('teams')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** The ids of `userIds` that are not users of the organization. */
export async function unknownUsers(db: Kysely<DB>, orgId: string, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const found = await db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', 'in', userIds)
    .execute();
  const known = new Set(found.map((row) => row.id));
  return new Set(userIds.filter((id) => !known.has(id)));
}

export const insertTeam = (
  db: Kysely<DB>,
  orgId: string,
  team: { id: string; name: string; auto_assign: boolean; max_open_per_member: number; at: Date },
) =>
  db
    .insertInto('teams')
    .values({
      org_id: orgId,
      id: team.id,
      name: team.name,
      auto_assign: team.auto_assign,
      max_open_per_member: team.max_open_per_member,
      created_at: team.at,
      updated_at: team.at,
    })
    .execute();

/** Locks the team's row for a change; undefined for an unknown team. */
export const lockTeam = (db: Kysely<DB>, orgId: string, teamId: string) =>
  db
    .selectFrom('teams')
    .select(['id', 'name', 'auto_assign', 'max_open_per_member'])
    .where('org_id', '=', orgId)
    .where('id', '=', teamId)
    .forNoKeyUpdate()
    .executeTakeFirst();

export const updateTeam = (
  db: Kysely<DB>,
  orgId: string,
  teamId: string,
  set: { name?: string; auto_assign?: boolean; max_open_per_member?: number; updated_at: Date },
) => db.updateTable('teams').set(set).where('org_id', '=', orgId).where('id', '=', teamId).execute();

/**
 * Auto-assignment gave the member one (decisions §19): the team's count moves on and the member's turn is that
 * count. The conversations' giving calls it in its transaction, under the team's row lock, as the port
 * `RecordTurn` of `conversations/conversation-changes.ts` (given by the wiring, D350).
 */
export async function recordTurn(db: Kysely<DB>, orgId: string, teamId: string, userId: string): Promise<void> {
  await sql`with counted as (
      update teams set turns = turns + 1 where org_id = ${orgId} and id = ${teamId} returning turns
    )
    update team_members set last_turn = (select turns from counted)
    where org_id = ${orgId} and team_id = ${teamId} and user_id = ${userId}`.execute(db);
}

/** Replaces the members: the ones kept keep their turn. */
export async function setMembers(db: Kysely<DB>, orgId: string, teamId: string, userIds: string[]) {
  let remove = db.deleteFrom('team_members').where('org_id', '=', orgId).where('team_id', '=', teamId);
  if (userIds.length > 0) remove = remove.where('user_id', 'not in', userIds);
  await remove.execute();
  if (userIds.length === 0) return;
  await db
    .insertInto('team_members')
    .values(userIds.map((userId) => ({ org_id: orgId, team_id: teamId, user_id: userId })))
    .onConflict((conflict) => conflict.columns(['org_id', 'team_id', 'user_id']).doNothing())
    .execute();
}

/** The team's conversations (deleting a team takes them out of it, each a change of its own). */
export async function conversationsOfTeam(db: Kysely<DB>, orgId: string, teamId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('conversations')
    .select('id')
    .where('org_id', '=', orgId)
    .where('team_id', '=', teamId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

export const deleteTeam = (db: Kysely<DB>, orgId: string, teamId: string) =>
  db.deleteFrom('teams').where('org_id', '=', orgId).where('id', '=', teamId).execute();

// SQL of a conversation's state (decisions §19): its row lock, its change, and auto-assignment's reads and locks
// (teams, their members' loads and turns, the waiting queue); the turn counter is written by the teams' owner (D350).
// Every query filters by org_id.
import { type Kysely, sql, type Updateable } from 'kysely';
import type { ConversationsTable, DB } from '../../db/schema.ts';

/** The state a change compares against, under the row's lock until the transaction ends. */
export const lockConversationState = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .selectFrom('conversations')
    .select([
      'status',
      'snoozed_until',
      'assignee_type',
      'assignee_user_id',
      'team_id',
      'priority',
      'labels',
      'waiting_since',
    ])
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirst();

/** D292: the oldest contact message of the conversation that the server received at or after `since`, if any. */
export const firstContactMessageSince = (db: Kysely<DB>, orgId: string, conversationId: string, since: Date) =>
  db
    .selectFrom('messages')
    .select((eb) => eb.fn.min('created_at').as('first'))
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .where('direction', '=', 'inbound')
    .where('received_at', '>=', since)
    .executeTakeFirst();

export const updateConversationState = (
  db: Kysely<DB>,
  orgId: string,
  conversationId: string,
  set: Updateable<ConversationsTable>,
) => db.updateTable('conversations').set(set).where('org_id', '=', orgId).where('id', '=', conversationId).execute();

/** The auto-assigning teams a user is a member of. */
export async function teamsOfMember(db: Kysely<DB>, orgId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('team_members as tm')
    .innerJoin('teams as t', (join) => join.onRef('t.org_id', '=', 'tm.org_id').onRef('t.id', '=', 'tm.team_id'))
    .select('t.id')
    .where('tm.org_id', '=', orgId)
    .where('tm.user_id', '=', userId)
    .where('t.auto_assign', '=', true)
    .execute();
  return rows.map((row) => row.id);
}

/** The team's row, locked: one giving-out at a time per team (decisions §19). Undefined unless it auto-assigns. */
export const lockAutoAssigningTeam = (db: Kysely<DB>, orgId: string, teamId: string) =>
  db
    .selectFrom('teams')
    .select(['id', 'max_open_per_member'])
    .where('org_id', '=', orgId)
    .where('id', '=', teamId)
    .where('auto_assign', '=', true)
    .forNoKeyUpdate()
    .executeTakeFirst();

/** decisions §19: the team's next waiting conversation, oldest waiting first, then oldest; one held elsewhere is skipped. */
export const oldestWaiting = (db: Kysely<DB>, orgId: string, teamId: string) =>
  db
    .selectFrom('conversations')
    .select('id')
    .where('org_id', '=', orgId)
    .where('team_id', '=', teamId)
    .where('status', '=', 'open')
    .where('assignee_type', 'is', null)
    .orderBy(sql`waiting_since asc nulls last`)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();

/** A member's load: a user id parameter, or a reference to a column holding one. */
const loadOf = (orgId: string, userId: unknown) =>
  sql<number>`(select count(*)::int from conversations c where c.org_id = ${orgId}
    and c.assignee_user_id = ${userId} and c.status in ('open', 'pending'))`;

/** The team's available members under the limit, fewest open and pending first, then the least recently given. */
export const memberCandidates = (db: Kysely<DB>, orgId: string, teamId: string, limit: number) =>
  db
    .selectFrom('team_members as tm')
    .innerJoin('users as u', (join) => join.onRef('u.org_id', '=', 'tm.org_id').onRef('u.id', '=', 'tm.user_id'))
    .select(['tm.user_id', loadOf(orgId, sql.ref('tm.user_id')).as('load')])
    .where('tm.org_id', '=', orgId)
    .where('tm.team_id', '=', teamId)
    .where('u.available', '=', true)
    .where(loadOf(orgId, sql.ref('tm.user_id')), '<', limit)
    .orderBy('load')
    .orderBy('tm.last_turn')
    .orderBy('tm.user_id')
    .execute();

/** Locks the member's row (not its key: sessions keep referring to it) and answers their load as committed now. */
export async function lockMemberLoad(db: Kysely<DB>, orgId: string, userId: string): Promise<number> {
  await db
    .selectFrom('users')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', userId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  const row = await sql<{ load: number }>`select ${loadOf(orgId, userId)} as load`.execute(db);
  return Number(row.rows[0]?.load ?? 0);
}

/**
 * decisions §19/§20: a conversation created by a contact's message on a number the autonomous assistant serves
 * starts `pending`, owned by the assistant — its creation, in the transaction that creates it (no change, no event).
 */
export const startWithAssistant = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .updateTable('conversations')
    .set({ status: 'pending', assignee_type: 'ai', assignee_user_id: null })
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .execute();

/** The organizations with snoozes whose time has passed, the longest due first (D318). */
export const organizationsWithEndedSnoozes = async (db: Kysely<DB>, now: Date, limit: number) =>
  (
    await db
      .selectFrom('conversations')
      .select('org_id')
      .where('status', '=', 'snoozed')
      .where('snoozed_until', 'is not', null)
      .where('snoozed_until', '<=', now)
      .groupBy('org_id')
      .orderBy((eb) => eb.fn.min('snoozed_until'))
      .orderBy('org_id')
      .limit(limit)
      .execute()
  ).map((row) => row.org_id);

/** decisions §19: an organization's snoozes whose time has passed, locked (others' claims are skipped). */
export const claimEndedSnoozes = (db: Kysely<DB>, orgId: string, now: Date, limit: number) =>
  db
    .selectFrom('conversations')
    .select(['org_id', 'id'])
    .where('org_id', '=', orgId)
    .where('status', '=', 'snoozed')
    .where('snoozed_until', 'is not', null)
    .where('snoozed_until', '<=', now)
    .orderBy('snoozed_until')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();

/** The conversations assigned to a user, in id order. */
export async function assignedTo(db: Kysely<DB>, orgId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('conversations')
    .select('id')
    .where('org_id', '=', orgId)
    .where('assignee_user_id', '=', userId)
    .orderBy('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Whether a user or a team of the organization has this id (a PATCH's 422 when not). */
export async function exists(db: Kysely<DB>, table: 'users' | 'teams', orgId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom(table)
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

// decisions §19: the one way a conversation's state (status, snooze, assignee, team, priority, labels) changes,
// whatever makes it change: a person or a key (PATCH), a contact's message, a snooze ending, auto-assignment, and
// later the rules and the assistant of §20. Each change runs in the caller's transaction, under the conversation's
// row lock (so two changes at once apply one after the other, never a lost update), and records exactly one
// `conversation.updated` event with what changed and what it was. A change that changes nothing writes nothing.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { claimFairly } from '../../lib/fair-claims.ts';
import { recordEvents } from '../events/events.ts';
import * as state from './conversation-state.repo.ts';
import { conversationEventData } from './conversation-view.ts';
import * as repo from './conversations.repo.ts';

export type ConversationStatus = 'open' | 'pending' | 'snoozed' | 'resolved';
export type Priority = 'none' | 'low' | 'medium' | 'high' | 'urgent';
export type Assignee = { type: 'user'; id: string } | { type: 'ai' };

/** A change of a conversation's state; a field left out stays as it is. */
export interface ConversationChange {
  status?: ConversationStatus;
  /** Only with `status: "snoozed"` (null or absent: until the contact's next message). */
  snoozed_until?: Date | null;
  assignee?: Assignee | null;
  team_id?: string | null;
  priority?: Priority;
  labels?: string[];
}

/** What made a change (for logs, and for §20's rules to tell their own changes apart); not part of the event. */
export type ChangeCause = 'request' | 'contact_message' | 'snooze_end' | 'auto_assignment' | 'rule' | 'assistant';

type State = NonNullable<Awaited<ReturnType<typeof state.lockConversationState>>>;

const assigneeOf = (state: Pick<State, 'assignee_type' | 'assignee_user_id'>): Assignee | null =>
  state.assignee_type === 'user'
    ? { type: 'user', id: state.assignee_user_id as string }
    : state.assignee_type === 'ai'
      ? { type: 'ai' }
      : null;

const sameAssignee = (a: Assignee | null, b: Assignee | null) =>
  a?.type === b?.type && (a?.type !== 'user' || a.id === (b as { id: string }).id);

const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

const sameLabels = (a: string[], b: string[]) => a.length === b.length && a.every((label, i) => label === b[i]);

/** Counts toward a member's load (decisions §19: `open` or `pending`, assigned to them). */
const loads = (status: ConversationStatus) => status === 'open' || status === 'pending';

export interface AppliedChange {
  /** The API's names of the fields that changed, in the contract's order; empty when nothing did. */
  changed: string[];
}

/**
 * Auto-assignment's turn counter moves on: the team's count of given conversations, and the member's turn as that
 * count. The teams' owner writes it (`teams/teams.repo.ts` `recordTurn`), given by the wiring: teams/ imports
 * conversations/, never the other way (D350). Called in the giving's transaction, under the team's row lock.
 */
export type RecordTurn = (trx: Kysely<DB>, orgId: string, teamId: string, userId: string) => Promise<void>;

/**
 * Applies `change` to one conversation within `trx` and records its one `conversation.updated` event; then gives
 * out the waiting conversations the change made room for (auto-assignment, each its own change and event).
 * Answers undefined for an unknown conversation.
 */
async function applyConversationChange(
  turns: RecordTurn,
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  change: ConversationChange,
  // Not part of the event (decisions §19 names none); §20's rules will read it to tell their own changes apart.
  _cause: ChangeCause,
  now: Date,
): Promise<AppliedChange | undefined> {
  const applied = await changeState(trx, orgId, conversationId, change, now);
  if (!applied) return undefined;
  if (applied.teams.length > 0) await giveOut(turns, trx, orgId, applied.teams, now);
  return { changed: applied.changed };
}

/** The change alone (no giving out): answers what changed and which teams may now give a conversation out. */
async function changeState(
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  change: ConversationChange,
  now: Date,
): Promise<{ changed: string[]; teams: string[] } | undefined> {
  const before = await state.lockConversationState(trx, orgId, conversationId);
  if (!before) return undefined;
  const previousAssignee = assigneeOf(before);
  let status = before.status as ConversationStatus;
  let snoozedUntil = before.snoozed_until;
  if (change.status !== undefined) {
    status = change.status;
    // decisions §19: a snooze ends with any other status; resolving clears it too.
    snoozedUntil = status === 'snoozed' ? (change.snoozed_until ?? null) : null;
  }
  const assignee = change.assignee === undefined ? previousAssignee : change.assignee;
  const teamId = change.team_id === undefined ? before.team_id : change.team_id;
  const priority = change.priority ?? (before.priority as Priority);
  const labels = change.labels ?? before.labels;

  const changed: string[] = [];
  const previous: Record<string, unknown> = {};
  const note = (field: string, old: unknown, same: boolean) => {
    if (same) return;
    changed.push(field);
    previous[field] = old;
  };
  note('status', before.status, status === before.status);
  note('snoozed_until', before.snoozed_until, sameTime(snoozedUntil, before.snoozed_until));
  note('assignee', previousAssignee, sameAssignee(assignee, previousAssignee));
  note('team_id', before.team_id, teamId === before.team_id);
  note('priority', before.priority, priority === before.priority);
  note('labels', before.labels, sameLabels(labels, before.labels));
  if (changed.length === 0) return { changed, teams: [] };

  await state.updateConversationState(trx, orgId, conversationId, {
    status,
    snoozed_until: snoozedUntil,
    assignee_type: assignee?.type ?? null,
    assignee_user_id: assignee?.type === 'user' ? assignee.id : null,
    team_id: teamId,
    priority,
    labels,
    label_keys: labels.map((label) => label.toLowerCase()),
    // decisions §19: `resolved` clears the wait.
    ...(status === 'resolved' ? { waiting_since: null } : {}),
    updated_at: now,
  });
  const conversation = (await repo.findConversation(trx, orgId, conversationId)) as repo.ConversationRow;
  await recordEvents(
    trx,
    orgId,
    [{ type: 'conversation.updated', data: conversationEventData(conversation, changed, previous) }],
    now,
  );

  // Which teams may give out a conversation now: this one's, when it waits for a member; the teams of a member
  // whose load this change lowered (resolved, snoozed or given to someone else).
  const teams = new Set<string>();
  if (status === 'open' && assignee === null && teamId !== null) teams.add(teamId);
  const freed =
    previousAssignee?.type === 'user' &&
    loads(before.status as ConversationStatus) &&
    (!loads(status) || !sameAssignee(assignee, previousAssignee));
  if (freed) {
    for (const team of await state.teamsOfMember(trx, orgId, previousAssignee.id)) teams.add(team);
  }
  return { changed, teams: [...teams] };
}

/**
 * decisions §19, auto-assignment: each team (in id order, the lock order) that auto-assigns gives its waiting
 * conversations (open, unassigned; oldest waiting first, then oldest) to the available member with the fewest open
 * and pending conversations under the team's limit, the least recently given first, until none waits or no member
 * has room. The team's row lock serializes its giving; the chosen member's row lock serializes giving to one
 * person across teams, so that concurrent arrivals never push anyone over a limit. A waiting conversation that
 * another transaction holds is left to it (it gives it out itself when it is done).
 */
async function giveOut(
  turns: RecordTurn,
  trx: Kysely<DB>,
  orgId: string,
  teamIds: string[],
  now: Date,
): Promise<number> {
  let given = 0;
  for (const teamId of [...new Set(teamIds)].sort()) {
    const team = await state.lockAutoAssigningTeam(trx, orgId, teamId);
    if (!team) continue;
    for (;;) {
      const waiting = await state.oldestWaiting(trx, orgId, teamId);
      if (!waiting) break;
      const member = await pickMember(trx, orgId, teamId, team.max_open_per_member);
      if (!member) break;
      await changeState(trx, orgId, waiting.id, { assignee: { type: 'user', id: member } }, now);
      await turns(trx, orgId, teamId, member);
      given++;
    }
  }
  return given;
}

async function pickMember(trx: Kysely<DB>, orgId: string, teamId: string, limit: number) {
  for (const candidate of await state.memberCandidates(trx, orgId, teamId, limit)) {
    // The member's row lock, then their load again: what another team gave them meanwhile is committed now.
    if ((await state.lockMemberLoad(trx, orgId, candidate.user_id)) < limit) return candidate.user_id;
  }
  return undefined;
}

/**
 * decisions §19: a contact's message moves a snoozed or resolved conversation to `open` (to `pending` when the
 * assistant owns it) and ends the snooze. Called in the transaction that stores the message.
 */
async function reopenOnContactMessage(
  turns: RecordTurn,
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  now: Date,
) {
  const current = await state.lockConversationState(trx, orgId, conversationId);
  if (!current || (current.status !== 'snoozed' && current.status !== 'resolved')) return;
  const status = current.assignee_type === 'ai' ? 'pending' : 'open';
  await applyConversationChange(turns, trx, orgId, conversationId, { status }, 'contact_message', now);
}

/**
 * D292: a resolve or snooze asked for at `arrived` covers the contact's messages the server received before that
 * moment. One received at or after it is taken as coming after the change, whichever transaction committed first:
 * when it committed before the change took the row's lock, the change is applied (its event) and then undone by the
 * message here (a second event), as if the message had arrived just after; when it commits later, its own
 * transaction reopens the conversation (reopenOnContactMessage). `waitingBefore` is `waiting_since` before the change:
 * the wait the message starts again is its own time, unless an answer came after it (then nothing waits).
 * Call in the change's transaction, after it.
 */
async function reopenForLaterContactMessage(
  turns: RecordTurn,
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  arrived: Date,
  waitingBefore: Date | null,
  now: Date,
) {
  const current = await state.lockConversationState(trx, orgId, conversationId);
  if (!current || (current.status !== 'snoozed' && current.status !== 'resolved')) return;
  const first = (await state.firstContactMessageSince(trx, orgId, conversationId, arrived))?.first;
  if (!first) return;
  // The serial order: a resolve cleared the wait, then the message started it again (a snooze kept it). Written
  // before the reopening, so that its event shows it.
  if (current.status === 'resolved' && waitingBefore !== null) {
    await state.updateConversationState(trx, orgId, conversationId, { waiting_since: new Date(first) });
  }
  const status = current.assignee_type === 'ai' ? 'pending' : 'open';
  await applyConversationChange(turns, trx, orgId, conversationId, { status }, 'contact_message', now);
}

/**
 * decisions §19: snoozes whose time has passed move to `open`; a batch per call, shared out over the organizations
 * that have some, each in its own transaction (D318). Answers how many ended.
 */
async function endSnoozes(turns: RecordTurn, db: Kysely<DB>, now: Date, batch = 100): Promise<number> {
  const orgs = await state.organizationsWithEndedSnoozes(db, now, batch);
  const ended = await claimFairly(orgs, batch, (orgId, max) =>
    db.transaction().execute(async (trx) => {
      const due = await state.claimEndedSnoozes(trx, orgId, now, max);
      for (const row of due) {
        await applyConversationChange(turns, trx, row.org_id, row.id, { status: 'open' }, 'snooze_end', now);
      }
      return due;
    }),
  );
  return ended.length;
}

/**
 * decisions §19: a person removed from the organization owns nothing any more: each of their conversations becomes
 * unassigned (its own event) and, in an auto-assigning team, goes to someone else. Call after removing them.
 */
async function unassignRemovedUser(turns: RecordTurn, trx: Kysely<DB>, orgId: string, userId: string, now: Date) {
  for (const conversationId of await state.assignedTo(trx, orgId, userId)) {
    await applyConversationChange(turns, trx, orgId, conversationId, { assignee: null }, 'request', now);
  }
}

/** decisions §19: a member who becomes available may take the waiting conversations of their teams. */
async function giveOutToMember(turns: RecordTurn, trx: Kysely<DB>, orgId: string, userId: string, now: Date) {
  return giveOut(turns, trx, orgId, await state.teamsOfMember(trx, orgId, userId), now);
}

/**
 * The change functions above with auto-assignment's turn counter given (D350): the wiring builds them once and hands
 * them to the services, handlers and tasks that change a conversation's state.
 */
export function createConversationChanges(recordTurn: RecordTurn) {
  return {
    applyConversationChange: applyConversationChange.bind(null, recordTurn),
    giveOut: giveOut.bind(null, recordTurn),
    reopenOnContactMessage: reopenOnContactMessage.bind(null, recordTurn),
    reopenForLaterContactMessage: reopenForLaterContactMessage.bind(null, recordTurn),
    endSnoozes: endSnoozes.bind(null, recordTurn),
    unassignRemovedUser: unassignRemovedUser.bind(null, recordTurn),
    giveOutToMember: giveOutToMember.bind(null, recordTurn),
  };
}

export type ConversationChanges = ReturnType<typeof createConversationChanges>;

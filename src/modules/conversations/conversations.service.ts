// Read-only conversation history: conversations newest activity first, their messages newest first.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { transactionWithRetry } from '../../db/retry-transaction.ts';
import type { DB } from '../../db/schema.ts';
import { ApiError, notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import type { MessagingPlatform } from '../../messaging/platform.ts';
import { assistantEnabled } from './assistant.ts';
import type { ConversationChange, ConversationChanges } from './conversation-changes.ts';
import * as state from './conversation-state.repo.ts';
import { conversationView } from './conversation-view.ts';
import * as repo from './conversations.repo.ts';
import type { ConversationListQuery, ConversationPatchBody, MessageListQuery } from './conversations.schemas.ts';
import { messageView } from './message-view.ts';
import { addNote, type NoteInput } from './notes.ts';

function position(cursor: string | undefined, scope: string, filter: unknown): repo.Position | undefined {
  if (cursor === undefined) return undefined;
  const [time, id] = decodeCursor(cursor, scope, filter);
  const at = typeof time === 'string' ? new Date(time) : undefined;
  if (!at || Number.isNaN(at.getTime()) || typeof id !== 'string') {
    throw validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', { input: cursor });
  }
  return [at, id];
}

function page<T extends { id: string }>(
  rows: T[],
  limit: number,
  scope: string,
  filter: unknown,
  time: (row: T) => Date,
) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items,
    next_cursor: rows.length > limit && last ? encodeCursor(scope, filter, [time(last).toISOString(), last.id]) : null,
  };
}

const SNOOZE_MAX_MS = 90 * 24 * 60 * 60 * 1000;

/** decisions §19: the checks a PATCH body needs no database for (422 at the field). */
function checkPatch(body: ConversationPatchBody, now: Date): ConversationChange {
  const change: ConversationChange = {};
  if (body.snoozed_until !== undefined && body.status !== 'snoozed') {
    throw validationError(['body', 'snoozed_until'], 'Only with status "snoozed"', 'value_error', {
      input: body.snoozed_until,
    });
  }
  if (body.status !== undefined) change.status = body.status;
  if (body.snoozed_until !== undefined && body.snoozed_until !== null) {
    const until = new Date(body.snoozed_until);
    if (!(until.getTime() > now.getTime()) || until.getTime() - now.getTime() > SNOOZE_MAX_MS) {
      throw validationError(['body', 'snoozed_until'], 'Must be in the future, at most 90 days ahead', 'value_error', {
        input: body.snoozed_until,
      });
    }
    change.snoozed_until = until;
  }
  if (body.labels !== undefined) {
    const seen = new Set<string>();
    body.labels.forEach((label, index) => {
      const key = label.toLowerCase();
      if (seen.has(key)) {
        throw validationError(['body', 'labels', index], 'Labels must be unique ignoring case', 'value_error', {
          input: label,
        });
      }
      seen.add(key);
    });
    change.labels = body.labels;
  }
  if (body.assignee !== undefined) change.assignee = body.assignee;
  if (body.team_id !== undefined) change.team_id = body.team_id;
  if (body.priority !== undefined) change.priority = body.priority;
  return change;
}

/** decisions §19: a list cursor's position for its sort; anything else in it is a 422 on the cursor. */
function listPosition(cursor: string, scope: string, filter: unknown, sort: string): repo.ListPosition {
  const values = decodeCursor(cursor, scope, filter);
  const time = (value: unknown) => {
    const at = typeof value === 'string' ? new Date(value) : undefined;
    return at && !Number.isNaN(at.getTime()) ? at : undefined;
  };
  const id = values.at(-1);
  if (typeof id === 'string') {
    if (sort === 'last_activity_at' && values.length === 2) {
      const at = time(values[0]);
      if (at) return { sort, at, id };
    }
    if (sort === 'waiting_since' && values.length === 3) {
      const waiting = values[0] === null ? null : time(values[0]);
      const created = time(values[1]);
      if (waiting !== undefined && created) return { sort, waiting, created, id };
    }
  }
  throw validationError(['query', 'cursor'], 'Invalid cursor', 'value_error', { input: cursor });
}

export interface ConversationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  /** §19's change functions, with auto-assignment's turn counter (D350). */
  changes: ConversationChanges;
  platform: Pick<MessagingPlatform, 'markRead'>;
  log: FastifyBaseLogger;
}

export function createConversationsService(deps: ConversationsDeps) {
  const { db, clock, platform, log } = deps;
  const { applyConversationChange, reopenForLaterContactMessage } = deps.changes;

  async function get(orgId: string, conversationId: string) {
    const row = await repo.findConversation(db, orgId, conversationId);
    if (!row) throw notFound();
    return conversationView(row);
  }

  return {
    async list(orgId: string, query: ConversationListQuery) {
      const limit = query.limit ?? 50;
      const sort = query.sort ?? 'last_activity_at';
      const filter = {
        contact_id: query.contact_id,
        channel_id: query.channel_id,
        unread: query.unread,
        window: query.window,
        status: query.status,
        assignee: query.assignee,
        team_id: query.team_id,
        label: query.label?.toLowerCase(),
        priority: query.priority,
        sort,
      };
      // decisions §2: a cursor is bound to its list, sort and filter (another one is a 422).
      const scope = `conversations:${sort}`;
      const after = query.cursor === undefined ? undefined : listPosition(query.cursor, scope, filter, sort);
      const window = query.window === undefined ? undefined : { open: query.window === 'open', now: clock.now() };
      const rows = await repo.listConversations(db, orgId, { ...filter, window }, limit + 1, sort, after);
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      const iso = (value: Date | null) => (value === null ? null : value.toISOString());
      const next =
        rows.length > limit && last
          ? sort === 'waiting_since'
            ? [iso(last.waiting_since), last.created_at.toISOString(), last.id]
            : [last.last_activity_at.toISOString(), last.id]
          : undefined;
      return {
        items: items.map(conversationView),
        next_cursor: next ? encodeCursor(scope, filter, next) : null,
      };
    },

    get,

    /** decisions §19: a private note, with its event, in one transaction. */
    async addNote(orgId: string, conversationId: string, input: NoteInput) {
      const note = await transactionWithRetry(db, (trx) => addNote(trx, orgId, conversationId, input, clock.now()));
      if (!note) throw notFound();
      return messageView(note);
    },

    /**
     * decisions §19: PATCH. Checks in this order: the body (422), the conversation (404), the assignee (422 for
     * another id, 409 `ai_disabled`), the team (422); then the change and its one event, in one transaction.
     */
    async update(orgId: string, conversationId: string, body: ConversationPatchBody) {
      // D292: the moment the request arrived, which the contact's messages received since then come after.
      const now = clock.now();
      const change = checkPatch(body, now);
      await transactionWithRetry(db, async (trx) => {
        const before = await state.lockConversationState(trx, orgId, conversationId);
        if (!before) throw notFound();
        const assignee = change.assignee;
        if (assignee?.type === 'user' && !(await state.exists(trx, 'users', orgId, assignee.id))) {
          throw validationError(['body', 'assignee', 'id'], 'Not a user of the organization', 'value_error', {
            input: assignee.id,
          });
        }
        if (assignee?.type === 'ai' && !(await assistantEnabled(trx, orgId))) {
          throw new ApiError(409, { code: 'ai_disabled' });
        }
        if (change.team_id && !(await state.exists(trx, 'teams', orgId, change.team_id))) {
          throw validationError(['body', 'team_id'], 'Not a team of the organization', 'value_error', {
            input: change.team_id,
          });
        }
        await applyConversationChange(trx, orgId, conversationId, change, 'request', now);
        if (change.status === 'resolved' || change.status === 'snoozed') {
          await reopenForLaterContactMessage(trx, orgId, conversationId, now, before.waiting_since, now);
        }
      });
      return get(orgId, conversationId);
    },

    /**
     * decisions §15: zeroes the unread count and tells the platform the newest inbound message was read. The
     * receipt is sent after the commit and only when something was unread: a second call changes nothing. A receipt
     * the platform refused is logged; the conversation stays read here.
     */
    async markRead(orgId: string, conversationId: string) {
      const read = await db.transaction().execute((trx) => repo.markRead(trx, orgId, conversationId, clock.now()));
      if (!read) throw notFound();
      const newest = read.newest;
      if (newest?.platform_message_id) {
        const receipt = { phoneNumberId: newest.phone_number_id, platformMessageId: newest.platform_message_id };
        const answer = await platform.markRead(receipt);
        if (!answer.ok) log.warn({ conversation: conversationId, reason: answer.reason }, 'read receipt refused');
      }
      return conversationView(read.conversation);
    },

    async messages(orgId: string, conversationId: string, query: MessageListQuery) {
      const limit = query.limit ?? 50;
      const scope = `messages:${conversationId}`;
      let after: repo.Position | undefined;
      try {
        after = position(query.cursor, scope, null);
      } catch (error) {
        await get(orgId, conversationId); // an unknown conversation answers 404 before a bad cursor's 422
        throw error;
      }
      const rows = await repo.listMessages(db, orgId, conversationId, limit + 1, after);
      // Messages belong to their conversation (foreign key; conversations are never deleted): a page with messages
      // proves it exists, so only an empty page costs a second statement (decisions D22: one per read).
      if (rows.length === 0) await get(orgId, conversationId);
      const result = page(rows, limit, scope, null, (row) => row.created_at);
      return { ...result, items: result.items.map(messageView) };
    },
  };
}

export type ConversationsService = ReturnType<typeof createConversationsService>;

// Read-only conversation history: conversations newest activity first, their messages newest first.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import * as repo from './conversations.repo.ts';
import type { ConversationListQuery, MessageListQuery } from './conversations.schemas.ts';

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

export function createConversationsService(deps: { db: Kysely<DB> }) {
  const { db } = deps;

  async function get(orgId: string, conversationId: string) {
    const row = await repo.findConversation(db, orgId, conversationId);
    if (!row) throw notFound();
    return row;
  }

  return {
    async list(orgId: string, query: ConversationListQuery) {
      const limit = query.limit ?? 50;
      const filter = { contact_id: query.contact_id, channel_id: query.channel_id };
      const scope = 'conversations:recent';
      const rows = await repo.listConversations(db, orgId, filter, limit + 1, position(query.cursor, scope, filter));
      return page(rows, limit, scope, filter, (row) => row.last_message_at);
    },

    get,

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
      // proves it exists, so only an empty page costs a second statement (issue 9: one per read).
      if (rows.length === 0) await get(orgId, conversationId);
      const result = page(rows, limit, scope, null, (row) => row.created_at);
      return { ...result, items: result.items.map(({ org_id: _org, updated_at: _updated, ...message }) => message) };
    },
  };
}

export type ConversationsService = ReturnType<typeof createConversationsService>;

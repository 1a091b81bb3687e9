// Read-only conversation history: conversations newest activity first, their messages newest first.
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { notFound, validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { Clock } from '../../lib/clock.ts';
import type { MessagingPlatform } from '../../messaging/platform.ts';
import * as repo from './conversations.repo.ts';
import type { ConversationListQuery, MessageListQuery } from './conversations.schemas.ts';
import { messageView } from './message-view.ts';

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

/** A conversation as the API shows it (decisions §15: the window's end derives from the newest inbound message). */
export function conversationView(row: repo.ConversationRow) {
  return {
    id: row.id,
    contact_id: row.contact_id,
    // decisions §19: the contact and the newest message come with the conversation (no request per list row).
    contact: {
      id: row.contact_id,
      first_name: row.contact_first_name,
      last_name: row.contact_last_name,
      phone: row.contact_phone,
    },
    last_message:
      row.last_message_id === null
        ? null
        : {
            id: row.last_message_id,
            sender: row.last_message_sender as string,
            type: row.last_message_type as string,
            text: row.last_message_text,
            private: row.last_message_private as boolean,
            created_at: row.last_message_created_at as Date,
          },
    channel_id: row.channel_id,
    last_message_at: row.last_message_at,
    last_inbound_at: row.last_inbound_at,
    window_expires_at: row.last_inbound_at ? new Date(row.last_inbound_at.getTime() + repo.WINDOW_MS) : null,
    unread_count: row.unread_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export interface ConversationsDeps {
  db: Kysely<DB>;
  clock: Clock;
  platform: Pick<MessagingPlatform, 'markRead'>;
  log: FastifyBaseLogger;
}

export function createConversationsService(deps: ConversationsDeps) {
  const { db, clock, platform, log } = deps;

  async function get(orgId: string, conversationId: string) {
    const row = await repo.findConversation(db, orgId, conversationId);
    if (!row) throw notFound();
    return conversationView(row);
  }

  return {
    async list(orgId: string, query: ConversationListQuery) {
      const limit = query.limit ?? 50;
      const filter = {
        contact_id: query.contact_id,
        channel_id: query.channel_id,
        unread: query.unread,
        window: query.window,
      };
      const scope = 'conversations:recent';
      const after = position(query.cursor, scope, filter);
      const window = query.window === undefined ? undefined : { open: query.window === 'open', now: clock.now() };
      const rows = await repo.listConversations(db, orgId, { ...filter, window }, limit + 1, after);
      const result = page(rows, limit, scope, filter, (row) => row.last_message_at);
      return { ...result, items: result.items.map(conversationView) };
    },

    get,

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

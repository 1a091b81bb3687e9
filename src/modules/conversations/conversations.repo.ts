// SQL for conversations and their messages. Every query filters by org_id.
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { ConversationsTable, DB, MessagesTable } from '../../db/schema.ts';
import { newId } from '../../lib/ids.ts';

export type ConversationRow = Selectable<ConversationsTable>;
export type MessageRow = Selectable<MessagesTable>;

/** Keyset position: (time, id) of the last row of the previous page, newest first. */
export type Position = [Date, string];

export function listConversations(
  db: Kysely<DB>,
  orgId: string,
  filter: { contact_id?: string | undefined; channel_id?: string | undefined },
  limit: number,
  after?: Position,
) {
  let query = db
    .selectFrom('conversations')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('last_message_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  if (filter.contact_id !== undefined) query = query.where('contact_id', '=', filter.contact_id);
  if (filter.channel_id !== undefined) query = query.where('channel_id', '=', filter.channel_id);
  if (after) {
    query = query.where((eb) => eb(eb.refTuple('last_message_at', 'id'), '<', eb.tuple(after[0], after[1])));
  }
  return query.execute();
}

export const findConversation = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .selectFrom('conversations')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .executeTakeFirst();

export function listMessages(db: Kysely<DB>, orgId: string, conversationId: string, limit: number, after?: Position) {
  let query = db
    .selectFrom('messages')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit);
  if (after) query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
  return query.execute();
}

/** One conversation per contact and number; concurrent first messages meet on the unique index. */
export async function findOrCreateConversation(
  db: Kysely<DB>,
  orgId: string,
  contactId: string,
  channelId: string,
  at: Date,
): Promise<string> {
  const find = () =>
    db
      .selectFrom('conversations')
      .select('id')
      .where('org_id', '=', orgId)
      .where('contact_id', '=', contactId)
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
  const existing = await find();
  if (existing) return existing.id;
  const inserted = await db
    .insertInto('conversations')
    .values({
      org_id: orgId,
      id: newId('conv'),
      contact_id: contactId,
      channel_id: channelId,
      last_message_at: at,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) => conflict.columns(['org_id', 'contact_id', 'channel_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return inserted.id;
  const winner = await find();
  if (!winner) throw new Error('conversation insert conflicted but none exists');
  return winner.id;
}

/** Stores a message once per platform id; answers whether it was new. Moves the conversation's clock forward. */
export async function insertMessage(db: Kysely<DB>, row: Insertable<MessagesTable>): Promise<boolean> {
  const inserted = await db
    .insertInto('messages')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'platform_message_id']).where('platform_message_id', 'is not', null).doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return false;
  const at = row.created_at as Date;
  await db
    .updateTable('conversations')
    .set({ last_message_at: sql<Date>`greatest(last_message_at, ${at})`, updated_at: at })
    .where('org_id', '=', row.org_id)
    .where('id', '=', row.conversation_id)
    .execute();
  return true;
}

/** The message a status webhook names, locked until the webhook's transaction ends. */
export const lockMessageByPlatformId = (db: Kysely<DB>, orgId: string, platformMessageId: string) =>
  db
    .selectFrom('messages')
    .select(['id', 'status', 'contact_id', 'delivered_at'])
    .where('org_id', '=', orgId)
    .where('platform_message_id', '=', platformMessageId)
    .forUpdate()
    .executeTakeFirst();

export const updateMessage = (
  db: Kysely<DB>,
  orgId: string,
  messageId: string,
  patch: Partial<Pick<MessageRow, 'status' | 'error' | 'sent_at' | 'delivered_at' | 'read_at' | 'failed_at'>> & {
    updated_at: Date;
  },
) => db.updateTable('messages').set(patch).where('org_id', '=', orgId).where('id', '=', messageId).execute();

/** contract: a not-on-the-network answer moves an `unverified` contact to `unavailable` (and nothing else). */
export const markContactUnavailable = (db: Kysely<DB>, orgId: string, contactId: string, at: Date) =>
  db
    .updateTable('contacts')
    .set({ messaging_status: 'unavailable', updated_at: at })
    .where('org_id', '=', orgId)
    .where('id', '=', contactId)
    // A not-on-the-network report can follow an accepted (verifying) send: it moves a `verified` contact too.
    .where('messaging_status', 'in', ['unverified', 'verified'])
    .execute();

// SQL of a reply's admission (decisions §15): what the checks read (the conversation with its number and contact,
// the message answered), and the answering transaction's writes (the message, its hand-off row, the wake-up of the
// workers; the 24-hour window's count is the messaging account's, messaging-accounts/window.repo.ts).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { insertMessage, type MessageRow } from './conversations.repo.ts';
import type { ReplyRequest } from './reply-handoffs.repo.ts';

/** The notification channel that wakes every worker process at the commit of a reply (pg_notify). */
export const REPLY_WAKE_CHANNEL = 'crm_reply_handoffs';

/** The conversation with what a reply needs: its number (live or not, its account) and its contact. */
export const findReplyContext = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .selectFrom('conversations as cv')
    .innerJoin('channels as ch', (join) =>
      join.onRef('ch.org_id', '=', 'cv.org_id').onRef('ch.id', '=', 'cv.channel_id'),
    )
    .innerJoin('contacts as ct', (join) =>
      join.onRef('ct.org_id', '=', 'cv.org_id').onRef('ct.id', '=', 'cv.contact_id'),
    )
    .select([
      'cv.id',
      'cv.contact_id',
      'cv.channel_id',
      'cv.last_inbound_at',
      'ch.status as channel_status',
      'ch.account_id',
      'ch.phone_number_id',
      'ct.phone as contact_phone',
      'ct.opted_out',
      (eb) =>
        eb
          .selectFrom('messages as m')
          .select('m.phone')
          .whereRef('m.org_id', '=', 'cv.org_id')
          .whereRef('m.conversation_id', '=', 'cv.id')
          .orderBy('m.created_at', 'desc')
          .limit(1)
          .as('last_phone'),
    ])
    .where('cv.org_id', '=', orgId)
    .where('cv.id', '=', conversationId)
    .executeTakeFirst();

export type ReplyContext = NonNullable<Awaited<ReturnType<typeof findReplyContext>>>;

/** A message of this conversation (for `reply_to`): its platform id, or undefined when it is not one of it. */
export const findConversationMessage = (db: Kysely<DB>, orgId: string, conversationId: string, messageId: string) =>
  db
    .selectFrom('messages')
    .select(['id', 'platform_message_id'])
    .where('org_id', '=', orgId)
    .where('conversation_id', '=', conversationId)
    .where('id', '=', messageId)
    .executeTakeFirst();

/**
 * Locks the conversation's row for the answering transaction: replies of one conversation commit one after
 * another, so their hand-off order (`seq`) is the order they were accepted. Answers its newest inbound time.
 */
export const lockConversation = (db: Kysely<DB>, orgId: string, conversationId: string) =>
  db
    .selectFrom('conversations')
    .select('last_inbound_at')
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .forUpdate()
    .executeTakeFirstOrThrow();

/** The reply, its hand-off row (same transaction), and the notification that wakes the workers at the commit. */
export async function insertReply(db: Kysely<DB>, message: MessageRow, request: ReplyRequest): Promise<void> {
  const { media, ...row } = message;
  await insertMessage(db, { ...row, media: media === null ? null : JSON.stringify(media) });
  await db
    .insertInto('reply_handoffs')
    .values({
      org_id: message.org_id,
      message_id: message.id,
      conversation_id: message.conversation_id,
      request: JSON.stringify(request),
    })
    .execute();
  await sql`select pg_notify(${REPLY_WAKE_CHANNEL}, '')`.execute(db);
}

export const findMessage = (db: Kysely<DB>, orgId: string, messageId: string) =>
  db.selectFrom('messages').selectAll().where('org_id', '=', orgId).where('id', '=', messageId).executeTakeFirst();

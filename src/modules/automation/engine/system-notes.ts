// decisions §20: the handoff's private note `AI handed off: <reason>` (`sender: "system"`, `author_id` null) and a
// rule's `add_note`. §19's notes are private: never handed to the platform, no status, and they count for no unread
// or wait, so the row is written here directly (not through insertMessage, which answers the wait), moving only the
// conversation's `last_activity_at` (decisions §19: notes included).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../../db/schema.ts';
import { newId } from '../../../lib/ids.ts';

export async function addSystemNote(
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  text: string,
  at: Date,
): Promise<string | undefined> {
  const conversation = await trx
    .selectFrom('conversations as c')
    .innerJoin('contacts as ct', (join) => join.onRef('ct.org_id', '=', 'c.org_id').onRef('ct.id', '=', 'c.contact_id'))
    .select(['c.contact_id', 'c.channel_id', 'ct.phone'])
    .where('c.org_id', '=', orgId)
    .where('c.id', '=', conversationId)
    .executeTakeFirst();
  if (!conversation) return undefined;
  const id = newId('msg');
  await trx
    .insertInto('messages')
    .values({
      org_id: orgId,
      id,
      conversation_id: conversationId,
      contact_id: conversation.contact_id,
      channel_id: conversation.channel_id,
      direction: 'outbound',
      sender: 'system',
      type: 'note',
      text,
      template_id: null,
      // The contact's number, as on every message of the conversation (a note goes nowhere).
      phone: conversation.phone ?? '',
      platform_message_id: null,
      status: null as unknown as string,
      error: null,
      author_id: null,
      private: true,
      created_at: at,
      updated_at: at,
    })
    .execute();
  await trx
    .updateTable('conversations')
    .set({ last_activity_at: sql<Date>`greatest(last_activity_at, ${at})` })
    .where('org_id', '=', orgId)
    .where('id', '=', conversationId)
    .execute();
  return id;
}

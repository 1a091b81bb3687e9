// decisions §19, private notes: a Message of the conversation (`type: "note"`, `private: true`, no status) that never
// goes to the platform and counts for no unread, wait or reply time; it moves only `last_activity_at`. Recorded with
// its `conversation.note_created` event in the caller's transaction (the route's, or §20's rules and assistant,
// whose notes are `sender: "system"` or `"ai"`).
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { validationError } from '../../http/errors.ts';
import { newId } from '../../lib/ids.ts';
import { recordEvents } from '../events/events.ts';
import type { MessageRow } from './conversations.repo.ts';
import { messageEventData } from './message-view.ts';

export interface NoteInput {
  text: string;
  /** Users of the organization the note mentions (another id: 422 at its index). */
  mention_ids?: string[] | undefined;
  /** The console's person who wrote it; null for a key, a rule or the assistant. */
  authorId: string | null;
  sender?: 'agent' | 'ai' | 'system';
}

/** Adds a note to a conversation within `trx`; undefined for an unknown conversation. */
export async function addNote(
  trx: Kysely<DB>,
  orgId: string,
  conversationId: string,
  input: NoteInput,
  now: Date,
): Promise<MessageRow | undefined> {
  // The conversation's row lock orders the note among the conversation's other changes; it answers what the note
  // copies (the contact, the number and the phone of the exchange).
  const conversation = await trx
    .updateTable('conversations as cv')
    .from('contacts as ct')
    .set({ last_activity_at: sql<Date>`greatest(cv.last_activity_at, ${now})`, updated_at: now })
    .whereRef('ct.org_id', '=', 'cv.org_id')
    .whereRef('ct.id', '=', 'cv.contact_id')
    .where('cv.org_id', '=', orgId)
    .where('cv.id', '=', conversationId)
    .returning(['cv.contact_id', 'cv.channel_id', 'ct.phone'])
    .executeTakeFirst();
  if (!conversation) return undefined;
  const mentions = [...new Set(input.mention_ids ?? [])];
  if (mentions.length > 0) {
    const known = new Set(
      (
        await trx.selectFrom('users').select('id').where('org_id', '=', orgId).where('id', 'in', mentions).execute()
      ).map((row) => row.id),
    );
    const index = (input.mention_ids ?? []).findIndex((id) => !known.has(id));
    if (index >= 0) {
      throw validationError(['body', 'mention_ids', index], 'Not a user of the organization', 'value_error', {
        input: input.mention_ids?.[index],
      });
    }
  }
  const note = await trx
    .insertInto('messages')
    .values({
      org_id: orgId,
      id: newId('msg'),
      conversation_id: conversationId,
      contact_id: conversation.contact_id,
      channel_id: conversation.channel_id,
      direction: 'outbound',
      sender: input.sender ?? 'agent',
      type: 'note',
      text: input.text,
      template_id: null,
      phone: conversation.phone ?? '',
      platform_message_id: null,
      status: null,
      error: null,
      error_message: null,
      media: null,
      reply_to: null,
      author_id: input.authorId,
      private: true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const data = { ...messageEventData(note), mention_ids: mentions };
  await recordEvents(trx, orgId, [{ type: 'conversation.note_created', data }], now);
  return note;
}

// A conversation as the API shows it (the Conversation schema), and as a `conversation.updated` event carries it.
import type { EventData } from '../events/event-types.ts';
import { type ConversationRow, WINDOW_MS } from './conversations.repo.ts';

/** decisions §19: `{type: "user", id}`, `{type: "ai"}` or null. */
function assigneeView(row: Pick<ConversationRow, 'assignee_type' | 'assignee_user_id'>) {
  if (row.assignee_type === 'user') return { type: 'user' as const, id: row.assignee_user_id as string };
  if (row.assignee_type === 'ai') return { type: 'ai' as const };
  return null;
}

/** A conversation as the API shows it (decisions §15: the window's end derives from the newest inbound message). */
export function conversationView(row: ConversationRow) {
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
    window_expires_at: row.last_inbound_at ? new Date(row.last_inbound_at.getTime() + WINDOW_MS) : null,
    unread_count: row.unread_count,
    status: row.status,
    snoozed_until: row.snoozed_until,
    assignee: assigneeView(row),
    team_id: row.team_id,
    priority: row.priority,
    labels: row.labels,
    waiting_since: row.waiting_since,
    first_reply_at: row.first_reply_at,
    last_activity_at: row.last_activity_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type ConversationView = ReturnType<typeof conversationView>;

/** decisions §19: `conversation.updated`'s data (JSON: times as ISO strings). */
export function conversationEventData(
  row: ConversationRow,
  changed: string[],
  previous: Record<string, unknown>,
): EventData<'conversation.updated'> {
  return JSON.parse(JSON.stringify({ conversation: conversationView(row), changed, previous }));
}

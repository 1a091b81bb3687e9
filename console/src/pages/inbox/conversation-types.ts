// The conversation fields of decisions §15 (replies), read when the server sends them.
import type { Conversation, Message } from '@crm-messaging/sdk';

export type InboxConversation = Conversation & {
  unread_count?: number;
  last_inbound_at?: string | null;
  window_expires_at?: string | null;
};

export type InboxMessage = Message & {
  media?: { mime_type: string; filename: string | null; caption: string | null; url: string | null } | null;
};

/** Open while the last inbound message is less than 24 hours old (decisions §15); the server decides on send. */
export function windowOpen(conversation: InboxConversation, now = Date.now()): boolean {
  return Boolean(conversation.window_expires_at && Date.parse(conversation.window_expires_at) > now);
}

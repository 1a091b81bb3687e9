// The conversation fields of decisions §15 (replies), and what a failed message's `error` means in words.
import type { Conversation, Message } from '@crm-messaging/sdk';

export type InboxConversation = Conversation;

export type InboxMessage = Message;

/** A conversation's newest message in one line of a list row: its text, else what it is. */
export function previewOf(message: NonNullable<Conversation['last_message']>): string {
  const what = message.text ?? (message.type === 'template' ? 'Template message' : `${message.type} message`);
  return message.private ? `Note: ${what}` : what;
}

/** Open while the last inbound message is less than 24 hours old (decisions §15); the server decides on send. */
export function windowOpen(conversation: InboxConversation, now = Date.now()): boolean {
  return Boolean(conversation.window_expires_at && Date.parse(conversation.window_expires_at) > now);
}

const FAILURES: Record<string, string> = {
  not_on_network: 'This number is not on the messaging network; the contact is marked unavailable.',
  window_closed: 'The platform refused it: the 24-hour window had closed. Send a template instead.',
  platform_error: 'The messaging platform could not deliver it.',
  handoff_unconfirmed: 'The platform never confirmed it received this message; it may not have been sent.',
};

/** A failed message's `error` as a sentence (an unknown code made readable). */
export function failureSentence(code: string): string {
  return FAILURES[code] ?? `${code.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase())}.`;
}

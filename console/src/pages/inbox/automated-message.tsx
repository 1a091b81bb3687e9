// Who wrote a message, in words (decisions §20): the assistant's messages (`sender: "ai"`) and those of rules and
// the system (`sender: "system"`: away messages, rules' texts, a handoff's note) are marked, and a private note is
// shown as a note, never as something the contact received.
import type { InboxMessage } from './conversation-types.ts';
import './automated-message.css';

const SENDERS: Record<string, string> = { ai: 'Assistant', system: 'Automation' };

/**
 * Who wrote it in words, for the assistant and automation only. A broadcast's template message is `system` too
 * (the Message schema), and is no automation: it keeps its sender as written.
 */
function automatedSender(message: InboxMessage): string | undefined {
  return message.type === 'template' ? undefined : SENDERS[message.sender];
}

/** The classes that set an automated message or a note apart. */
export function automatedClass(message: InboxMessage): string {
  if (message.private) return ' message-note';
  return automatedSender(message) ? ' message-automated' : '';
}

export function SenderLabel({ message }: { message: InboxMessage }) {
  const automated = automatedSender(message);
  // A note is marked "Private note" by the message itself (conversation.tsx, D287), not here.
  return automated ? <span className="message-tag">{automated}</span> : message.sender;
}

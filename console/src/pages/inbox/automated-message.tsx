// Who wrote a message, in words (decisions §20): the assistant's messages (`sender: "ai"`) and those of rules and
// the system (`sender: "system"`: away messages, rules' texts, a handoff's note) are marked, and a private note is
// shown as a note, never as something the contact received.
import type { InboxMessage } from './conversation-types.ts';
import './automated-message.css';

const SENDERS: Record<string, string> = { ai: 'Assistant', system: 'Automation' };

/** The classes that set an automated message or a note apart. */
export function automatedClass(message: InboxMessage): string {
  if (message.private) return ' message-note';
  return message.sender in SENDERS ? ' message-automated' : '';
}

export function SenderLabel({ message }: { message: InboxMessage }) {
  const automated = SENDERS[message.sender];
  return (
    <>
      {message.private ? <span className="message-tag">Private note</span> : null}
      {automated ? <span className="message-tag">{automated}</span> : message.sender}
    </>
  );
}

// One conversation (decisions §15, §17 flow 2): its messages with sender, time and status, a failure's reason in
// words, inbound files (images shown, other files to download) and the message a reply quotes; opening it marks it
// read; the reply box below. Messages and statuses update live: the organization's stream invalidates these queries.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { ContactName } from './contact-name.tsx';
import { failureSentence, type InboxMessage } from './conversation-types.ts';
import { MessageMedia } from './message-media.tsx';
import { ReplyBox } from './reply-box.tsx';

/** A message without text: a template (by its name) or a file (by its type). */
function MessageKind({ message }: { message: InboxMessage }) {
  const template = useQuery({
    queryKey: keys.templates.detail(message.template_id ?? ''),
    queryFn: () => api.templates.get(message.template_id!),
    enabled: message.template_id !== null,
    staleTime: 300_000,
  });
  if (message.template_id) return <em>Template {template.data?.name ?? ''}</em>;
  if (message.media) return null;
  return <em>{message.type}</em>;
}

/** What a message says, in one line, for a quote. */
function summaryOf(message: InboxMessage): string {
  if (message.text) return message.text;
  if (message.media?.filename) return `${message.type}: ${message.media.filename}`;
  return message.template_id ? 'Template message' : message.type;
}

function Quote({ id, byId }: { id: string; byId: Map<string, InboxMessage> }) {
  const quoted = byId.get(id);
  return (
    <blockquote className="message-quote">
      <span className="visually-hidden">In reply to: </span>
      {quoted ? (
        <>
          <span className="muted">{quoted.direction === 'inbound' ? 'Contact' : 'You'}: </span>
          {summaryOf(quoted)}
        </>
      ) : (
        <span className="muted">An earlier message</span>
      )}
    </blockquote>
  );
}

function MessageItem({ message, byId }: { message: InboxMessage; byId: Map<string, InboxMessage> }) {
  const time = useTime();
  const failed = message.status === 'failed';
  return (
    <li className={`message message-${message.direction}${failed ? ' message-failed' : ''}`}>
      {message.reply_to ? <Quote id={message.reply_to} byId={byId} /> : null}
      <MessageMedia message={message} />
      <div className="message-text">{message.text ?? <MessageKind message={message} />}</div>
      <div className="message-meta">
        {message.sender} · <time dateTime={message.created_at}>{time(message.created_at)}</time> ·{' '}
        {message.direction === 'outbound' ? (
          <span className={failed ? 'badge badge-failed' : ''}>{message.status}</span>
        ) : (
          'received'
        )}
      </div>
      {failed ? (
        <p className="message-error">
          {failureSentence(message.error ?? 'platform_error')}
          {message.error_message ? <span className="muted"> ({message.error_message})</span> : null}
        </p>
      ) : null}
    </li>
  );
}

export function ConversationView({ id }: { id: string }) {
  const queryClient = useQueryClient();
  const conversation = useQuery({
    queryKey: keys.conversations.detail(id),
    queryFn: () => api.conversations.get(id),
  });
  // Newest first from the API; shown oldest first, as a chat reads.
  const messages = useQuery({
    queryKey: keys.conversations.messages(id),
    queryFn: () => api.conversations.messages(id, { limit: 50 }),
  });
  const markRead = useMutation({
    mutationFn: () => api.conversations.markRead(id),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: keys.conversations.list() }),
  });
  const unread = conversation.data?.unread_count ?? 0;
  // biome-ignore lint/correctness/useExhaustiveDependencies: marks read once per opening and per new unread message
  useEffect(() => {
    if (unread > 0) markRead.mutate();
  }, [id, unread]);

  return (
    <QueryView query={conversation}>
      {(data) => (
        <article className="card conversation" aria-labelledby="conversation-title">
          <h2 id="conversation-title">
            <ContactName id={data.contact_id} />
          </h2>
          <QueryView query={messages} isEmpty={(page) => page.items.length === 0} empty="No messages yet.">
            {(page) => {
              const byId = new Map(page.items.map((message) => [message.id, message]));
              return (
                <ol className="messages" aria-label="Messages">
                  {[...page.items].reverse().map((message) => (
                    <MessageItem key={message.id} message={message} byId={byId} />
                  ))}
                </ol>
              );
            }}
          </QueryView>
          <ReplyBox conversation={data} />
        </article>
      )}
    </QueryView>
  );
}

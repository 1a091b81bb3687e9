// One conversation: its messages with sender, time, status and a failure's reason; opening it marks it read; the
// reply box while the window is open, and a template otherwise (decisions §15, §17).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { ContactName } from './contact-name.tsx';
import { type InboxConversation, type InboxMessage, windowOpen } from './conversation-types.ts';
import { ReplyBox } from './reply-box.tsx';

/** A message without text: a template (by its name) or media (by its file name). */
function MessageKind({ message }: { message: InboxMessage }) {
  const template = useQuery({
    queryKey: keys.templates.detail(message.template_id ?? ''),
    queryFn: () => api.templates.get(message.template_id!),
    enabled: message.template_id !== null,
    staleTime: 300_000,
  });
  if (message.template_id) return <em>Template {template.data?.name ?? ''}</em>;
  return <em>{message.media?.filename ? `${message.type}: ${message.media.filename}` : message.type}</em>;
}

export function ConversationView({ id }: { id: string }) {
  const time = useTime();
  const queryClient = useQueryClient();
  const conversation = useQuery({
    queryKey: keys.conversations.detail(id),
    queryFn: () => api.conversations.get(id) as Promise<InboxConversation>,
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
        <article className="card" aria-labelledby="conversation-title">
          <h2 id="conversation-title">
            <ContactName id={data.contact_id} />
          </h2>
          <QueryView query={messages} isEmpty={(page) => page.items.length === 0} empty="No messages yet.">
            {(page) => (
              <ol className="messages" aria-label="Messages">
                {[...(page.items as InboxMessage[])].reverse().map((message) => (
                  <li key={message.id} className={`message message-${message.direction}`}>
                    <div>{message.text ?? <MessageKind message={message} />}</div>
                    <div className="message-meta">
                      {message.sender} · <time dateTime={message.created_at}>{time(message.created_at)}</time> ·{' '}
                      {message.direction === 'outbound' ? (
                        <span className={message.status === 'failed' ? 'badge badge-failed' : ''}>
                          {message.status}
                        </span>
                      ) : (
                        'received'
                      )}
                      {message.error ? <span> — {message.error}</span> : null}
                    </div>
                  </li>
                ))}
              </ol>
            )}
          </QueryView>
          <ReplyBox conversationId={id} open={windowOpen(data)} known={data.window_expires_at !== undefined} />
        </article>
      )}
    </QueryView>
  );
}

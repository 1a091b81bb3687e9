// Inbox (decisions §17, flow 2): conversations by latest activity with unread counts and the window's state; the
// chosen conversation beside them; on a phone the list and a conversation are separate views (decisions §19).
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { Page } from '../../ui/page.tsx';
import { useTime } from '../../ui/session.tsx';
import { QueryView } from '../../ui/states.tsx';
import { contactLabel } from './contact-name.tsx';
import { ConversationView } from './conversation.tsx';
import { type InboxConversation, previewOf, windowOpen } from './conversation-types.ts';

const PAGE_SIZE = 25;

export function InboxPage() {
  const { conversationId } = useParams();
  const time = useTime();
  const query = useQuery({
    queryKey: keys.conversations.list({ limit: PAGE_SIZE }),
    queryFn: () => api.conversations.list({ limit: PAGE_SIZE }),
  });
  return (
    <Page title="Inbox">
      <div className={conversationId ? 'inbox inbox-chosen' : 'inbox'}>
        <nav aria-label="Conversations">
          <QueryView
            query={query}
            isEmpty={(page) => page.items.length === 0}
            empty="No conversations yet. They start when a contact writes in or a broadcast reaches them."
          >
            {(page) => (
              <ul className="conversation-list">
                {(page.items as InboxConversation[]).map((conversation) => {
                  // The conversation on screen is being read: it counts no unread (decisions §19).
                  const unread = conversation.id === conversationId ? 0 : (conversation.unread_count ?? 0);
                  return (
                    <li key={conversation.id}>
                      <Link
                        to={`/inbox/${conversation.id}`}
                        aria-current={conversation.id === conversationId ? 'page' : undefined}
                      >
                        <span>
                          {/* decisions §19: the name and the preview come with the list, no request per row. */}
                          <strong>{contactLabel(conversation.contact)}</strong>
                          <br />
                          {conversation.last_message ? (
                            <span className="conversation-preview">{previewOf(conversation.last_message)}</span>
                          ) : null}
                          <span className="muted">{time(conversation.last_message_at)}</span>
                        </span>
                        <span>
                          {unread > 0 ? <span className="badge">{unread} unread</span> : null}{' '}
                          {conversation.window_expires_at !== undefined ? (
                            <span className={`badge ${windowOpen(conversation) ? 'badge-open' : ''}`}>
                              {windowOpen(conversation) ? 'Open' : 'Closed'}
                            </span>
                          ) : null}
                        </span>
                      </Link>
                    </li>
                  );
                })}
              </ul>
            )}
          </QueryView>
        </nav>
        <div>
          {conversationId ? (
            <ConversationView id={conversationId} />
          ) : (
            <p className="state">Choose a conversation to read it.</p>
          )}
        </div>
      </div>
    </Page>
  );
}

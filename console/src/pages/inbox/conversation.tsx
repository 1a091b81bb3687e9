// One conversation (decisions §15, §17 flow 2): its messages with sender, time and status, a failure's reason in
// words, inbound files (images shown, other files to download) and the message a reply quotes; opening it marks it
// read; the reply box below. Messages and statuses update live: the organization's stream invalidates these queries.
// The 50 newest come first; "Load older messages" follows the API's cursor (D166), keeps the message that was at
// the top where it was on screen and moves focus to the newest of the older ones, just above it.
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useLayoutEffect, useRef } from 'react';
import { Button } from 'react-aria-components';
import { Link } from 'react-router';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { usePresence } from '../../api/presence.ts';
import { useSession, useTime } from '../../ui/session.tsx';
import { Empty, ErrorState, Loading, QueryView } from '../../ui/states.tsx';
import { automatedClass, SenderLabel } from './automated-message.tsx';
import { contactLabel } from './contact-name.tsx';
import { ConversationHeader } from './conversation-header.tsx';
import { failureSentence, type InboxMessage } from './conversation-types.ts';
import { MessageMedia } from './message-media.tsx';
import { personName, usePeople } from './people.ts';
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

/**
 * Who wrote a message: its author by name (decisions §19: `author_id`, from the one people list), the contact, or —
 * without an author — the assistant or automation marked as such (decisions §20, `SenderLabel`), else its sender.
 */
function Author({ message, personOf }: { message: InboxMessage; personOf: ReturnType<typeof usePeople>['personOf'] }) {
  const person = personOf(message.author_id);
  const name = person ? personName(person) : message.author_id ? 'A former user' : undefined;
  if (name === undefined && message.direction !== 'inbound') return <SenderLabel message={message} />;
  return <>{name ?? 'Contact'}</>;
}

function MessageItem({ message, byId }: { message: InboxMessage; byId: Map<string, InboxMessage> }) {
  const time = useTime();
  const { personOf } = usePeople();
  const failed = message.status === 'failed';
  const note = message.private;
  return (
    <li
      className={`message message-${note ? 'note' : message.direction}${failed ? ' message-failed' : ''}${note ? '' : automatedClass(message)}`}
      data-message-id={message.id}
      tabIndex={-1}
    >
      {note ? <p className="note-mark">Private note</p> : null}
      {message.reply_to ? <Quote id={message.reply_to} byId={byId} /> : null}
      <MessageMedia message={message} />
      <div className="message-text">{message.text ?? <MessageKind message={message} />}</div>
      <div className="message-meta">
        <Author message={message} personOf={personOf} /> ·{' '}
        <time dateTime={message.created_at}>{time(message.created_at)}</time>
        {note ? null : ' · '}
        {note ? null : message.direction === 'outbound' ? (
          <span className={failed ? 'badge badge-failed' : ''}>{message.status}</span>
        ) : (
          'received'
        )}
      </div>
      {failed ? (
        <p className="message-error">
          {failureSentence(message.error ?? 'platform_error')}{' '}
          <code className="muted">({message.error ?? 'platform_error'})</code>
          {message.error_message ? <span className="muted"> ({message.error_message})</span> : null}
        </p>
      ) : null}
    </li>
  );
}

const PAGE_SIZE = 50;

/** The messages, oldest first as a chat reads, with the older pages on demand. */
function MessageList({ id }: { id: string }) {
  // Newest first from the API, page after page; a live invalidation refetches every page loaded so far.
  const messages = useInfiniteQuery({
    queryKey: keys.conversations.messages(id),
    queryFn: ({ pageParam }) =>
      api.conversations.messages(id, pageParam ? { limit: PAGE_SIZE, cursor: pageParam } : { limit: PAGE_SIZE }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.next_cursor,
  });
  const list = useRef<HTMLOListElement>(null);
  // The oldest message shown when older ones were asked for, and where it was on screen.
  const anchor = useRef<{ id: string; top: number; count: number } | null>(null);
  const items = messages.data?.pages.flatMap((page) => page.items) ?? [];
  const messageElement = (messageId: string) =>
    list.current?.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(messageId)}"]`) ?? null;

  const loadOlder = () => {
    const oldest = items.at(-1);
    if (oldest)
      anchor.current = {
        id: oldest.id,
        top: messageElement(oldest.id)?.getBoundingClientRect().top ?? 0,
        count: items.length,
      };
    void messages.fetchNextPage();
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the older page has been drawn
  useLayoutEffect(() => {
    const held = anchor.current;
    if (!held || messages.isFetchingNextPage) return;
    anchor.current = null;
    const element = messageElement(held.id);
    if (!element || items.length === held.count) return;
    window.scrollBy(0, element.getBoundingClientRect().top - held.top);
    (element.previousElementSibling as HTMLElement | null)?.focus();
  }, [messages.data, messages.isFetchingNextPage]);

  if (messages.isPending) return <Loading />;
  if (messages.isError && !messages.data)
    return <ErrorState error={messages.error} retry={() => void messages.refetch()} />;
  if (items.length === 0) return <Empty>No messages yet.</Empty>;
  const byId = new Map(items.map((message) => [message.id, message]));
  const loaded = (messages.data?.pages.length ?? 1) - 1;
  return (
    <>
      {messages.hasNextPage ? (
        <div className="load-older">
          <Button onPress={loadOlder} isDisabled={messages.isFetchingNextPage}>
            {messages.isFetchingNextPage ? 'Loading older messages…' : 'Load older messages'}
          </Button>
        </div>
      ) : null}
      {messages.isFetchNextPageError ? (
        <ErrorState error={messages.error} retry={() => void messages.fetchNextPage()} />
      ) : null}
      <p className="visually-hidden" role="status">
        {loaded > 0 ? `${items.length} messages shown, the oldest first.` : ''}
      </p>
      <ol className="messages" aria-label="Messages" ref={list}>
        {[...items].reverse().map((message) => (
          <MessageItem key={message.id} message={message} byId={byId} />
        ))}
      </ol>
    </>
  );
}

/** decisions §19: each person sees who else has this conversation open (D289), announced politely. */
function AlsoHere({ id }: { id: string }) {
  const { user } = useSession();
  const { personOf } = usePeople();
  const others = usePresence(user.id, id).map((userId) => {
    const person = personOf(userId);
    return person ? personName(person) : 'Someone';
  });
  return (
    <p className="presence" role="status">
      {others.length > 0 ? `Also here: ${others.join(', ')}` : ''}
    </p>
  );
}

export function ConversationView({ id, backTo = '/inbox' }: { id: string; backTo?: string }) {
  const queryClient = useQueryClient();
  const conversation = useQuery({
    queryKey: keys.conversations.detail(id),
    queryFn: () => api.conversations.get(id),
  });
  // The conversation on screen is read (decisions §19): marked as each message arrives, its own count reset at once
  // so that the next arrival (1 again) marks it too.
  const markRead = useMutation({
    mutationFn: () => api.conversations.markRead(id),
    onSuccess: () => {
      queryClient.setQueryData(keys.conversations.detail(id), (current: typeof conversation.data) =>
        current ? { ...current, unread_count: 0 } : current,
      );
      void queryClient.invalidateQueries({ queryKey: keys.conversations.list() });
    },
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
          <Link className="back-link" to={backTo}>
            ← All conversations
          </Link>
          <h2 id="conversation-title">{contactLabel(data.contact)}</h2>
          <AlsoHere id={id} />
          <ConversationHeader conversation={data} />
          <MessageList key={id} id={id} />
          <ReplyBox conversation={data} />
        </article>
      )}
    </QueryView>
  );
}

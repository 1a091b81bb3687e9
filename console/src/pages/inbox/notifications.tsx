// Browser notifications (decisions §19, D288, D293): once a person allows them, a conversation newly given to them
// and a note that mentions them are announced by the browser. The person's open and pending conversations are read
// (one list, refreshed by the live stream like every other read); an id that was not there before is a conversation
// just given to them. A note's stream event names its author and mentions: one that mentions this person, written
// by someone else, is announced with the conversation's contact.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Button } from 'react-aria-components';
import { api } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { onNoteCreated } from '../../api/live.ts';
import { useSession } from '../../ui/session.tsx';
import { contactLabel } from './contact-name.tsx';

const supported = () => typeof Notification !== 'undefined';

function usePermission(): [NotificationPermission | 'unsupported', () => void] {
  const [permission, setPermission] = useState<NotificationPermission | 'unsupported'>(() =>
    supported() ? Notification.permission : 'unsupported',
  );
  const ask = () => void Notification.requestPermission().then(setPermission);
  return [permission, ask];
}

export function NotificationsButton() {
  const [permission, ask] = usePermission();
  if (permission === 'unsupported') return null;
  if (permission === 'granted') return <span className="muted">Notifications on</span>;
  if (permission === 'denied') return <span className="muted">Notifications are blocked in this browser</span>;
  return <Button onPress={ask}>Allow notifications</Button>;
}

export function useInboxNotifications(): void {
  const { user } = useSession();
  const granted = supported() && Notification.permission === 'granted';
  const query = { assignee: user.id, status: ['open', 'pending'] as ('open' | 'pending')[], limit: 100 };
  const mine = useQuery({
    queryKey: keys.conversations.list(query),
    queryFn: () => api.conversations.list(query),
    enabled: granted,
  });
  const known = useRef<Set<string> | null>(null);
  useEffect(() => {
    const items = mine.data?.items;
    if (!items) return;
    if (known.current)
      for (const conversation of items)
        if (!known.current.has(conversation.id))
          new Notification('A conversation was given to you', { body: contactLabel(conversation.contact) });
    known.current = new Set(items.map((conversation) => conversation.id));
  }, [mine.data]);
  useEffect(() => {
    if (!granted) return;
    return onNoteCreated((note) => {
      if (!note.conversation_id || note.author_id === user.id || !note.mention_ids?.includes(user.id)) return;
      const conversationId = note.conversation_id;
      void api.conversations.get(conversationId).then(
        (conversation) =>
          new Notification('You were mentioned in a note', {
            body: contactLabel(conversation.contact),
            tag: `note-${note.id ?? conversationId}`,
          }),
        () => new Notification('You were mentioned in a note', { tag: `note-${note.id ?? conversationId}` }),
      );
    });
  }, [granted, user.id]);
}

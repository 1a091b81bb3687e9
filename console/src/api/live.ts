// Live updates (decisions §17): the organization's changes arrive as server-sent events from /app/api/events; each
// one invalidates the query keys it makes stale, so whatever page is open refetches what it shows. The stream has
// no replay: on a reconnection and on `resync`, everything shown is fetched again. EventSource reconnects by itself.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api } from './client.ts';
import { keysForEvent } from './keys.ts';
import { announceAgain, receivePresence } from './presence.ts';

/** The event names the stream sends (the webhook events' types, and `resync`). */
const EVENT_TYPES = [
  'message.received',
  'message.updated',
  'conversation.updated',
  'conversation.note_created',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'broadcast.started',
  'broadcast.updated',
  'broadcast.finished',
  'broadcast.recipient.updated',
  'template.status_updated',
];

/** A note's event as the stream gives it (D293): its ids, with its author and the people it mentions. */
export interface NoteEvent {
  id?: string;
  conversation_id?: string;
  author_id?: string;
  mention_ids?: string[];
}

const noteListeners = new Set<(note: NoteEvent) => void>();

/** Calls `listener` with each note written in the organization while the stream is open; answers the unsubscribe. */
export function onNoteCreated(listener: (note: NoteEvent) => void): () => void {
  noteListeners.add(listener);
  return () => noteListeners.delete(listener);
}

/** How long the events of a burst are gathered before their queries are invalidated (well within §17's 2 s). */
const BURST_MS = 250;

export function useLiveUpdates(enabled: boolean): void {
  const queryClient = useQueryClient();
  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') return;
    const source = new EventSource(api.console.events.url());
    let opened = false;
    const refetchAll = () => void queryClient.invalidateQueries();
    // Events come in bursts (a contact sends three files; a broadcast reports many recipients): the keys they make
    // stale are gathered for a moment and invalidated once, so a burst costs one refetch per read, not one per event.
    const stale = new Map<string, readonly string[]>();
    let flush: ReturnType<typeof setTimeout> | undefined;
    const onEvent = (event: MessageEvent<string>) => {
      for (const queryKey of keysForEvent(event.type)) stale.set(JSON.stringify(queryKey), queryKey);
      flush ??= setTimeout(() => {
        flush = undefined;
        for (const queryKey of stale.values()) void queryClient.invalidateQueries({ queryKey });
        stale.clear();
      }, BURST_MS);
    };
    source.addEventListener('open', () => {
      // Presence heard while the stream was away is lost too: say again which conversation this page shows (D289).
      if (opened) {
        refetchAll();
        announceAgain();
      }
      opened = true;
    });
    source.addEventListener('resync', refetchAll);
    for (const name of EVENT_TYPES) source.addEventListener(name, onEvent as EventListener);
    source.addEventListener('conversation.note_created', (event: MessageEvent<string>) => {
      let note: NoteEvent;
      try {
        note = JSON.parse(event.data);
      } catch {
        return;
      }
      for (const listener of noteListeners) listener(note);
    });
    // Who has which conversation open (D289): no data changed, nothing to refetch.
    source.addEventListener('presence', (event: MessageEvent<string>) => {
      try {
        receivePresence(JSON.parse(event.data));
      } catch {
        // Not JSON: ignored.
      }
    });
    return () => {
      clearTimeout(flush);
      source.close();
    };
  }, [enabled, queryClient]);
}

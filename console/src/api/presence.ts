// Who else has a conversation open (decisions §19: "each sees that the other has it open"; D289). The lightest way
// the console's stream allows: a person's page says which conversation it shows (`PUT /app/api/presence`, again every
// 20 seconds and `null` on leaving), the server hands that to the organization's open streams as a `presence` event
// and stores nothing, and each page keeps who it heard from in memory, forgetting anyone silent for 50 seconds. A page
// that hears a newcomer at its own conversation says so again at once, so that the newcomer learns of it too.
import { useEffect, useSyncExternalStore } from 'react';
import { api } from './client.ts';

const HEARTBEAT_MS = 20_000;
const FORGET_MS = 50_000;

interface Heard {
  conversationId: string | undefined;
  at: number;
  /** The newest announcement's number from that page (D289): an older one arriving later is ignored. */
  seq: number | undefined;
}

/** This page's announcements, in increasing order even within a millisecond. */
let lastSeq = 0;
const nextSeq = () => {
  lastSeq = Math.max(Date.now(), lastSeq + 1);
  return lastSeq;
};

const heard = new Map<string, Heard>();
const listeners = new Set<() => void>();
let self: { userId: string; conversationId: string | null } | null = null;
let again: ReturnType<typeof setTimeout> | undefined;

const changed = () => {
  for (const listener of listeners) listener();
};

function announce(conversationId: string | null): void {
  void api.console.presence.set({ conversation_id: conversationId, seq: nextSeq() }).catch(() => {
    // Presence is a courtesy: a refusal (a 429 after its retries, a lost connection) waits for the next heartbeat.
  });
}

/** Says again, once and soon, which conversation this page shows (a newcomer, a reconnected stream). */
export function announceAgain(): void {
  if (!self?.conversationId) return;
  clearTimeout(again);
  again = setTimeout(() => announce(self?.conversationId ?? null), 150);
}

/** A `presence` event of the stream: `id` is the person, `conversation_id` what they have open (absent: none). */
export function receivePresence(data: { id?: unknown; conversation_id?: unknown; seq?: unknown }): void {
  if (typeof data.id !== 'string' || data.id === self?.userId) return;
  const conversationId = typeof data.conversation_id === 'string' ? data.conversation_id : undefined;
  const seq = typeof data.seq === 'number' ? data.seq : undefined;
  const before = heard.get(data.id);
  // An announcement overtaken by a newer one of the same person (a leave racing the last heartbeat) says nothing.
  if (seq !== undefined && before?.seq !== undefined && seq < before.seq) return;
  heard.set(data.id, { conversationId, at: Date.now(), seq });
  if (before?.conversationId !== conversationId) {
    if (conversationId && conversationId === self?.conversationId) announceAgain();
    changed();
  }
}

// Leaving the page (a reload, another address, the tab closed) says `null` in a request that outlives the page.
if (typeof window !== 'undefined')
  window.addEventListener('pagehide', () => {
    if (!self?.conversationId) return;
    void api.console.presence
      .set({ conversation_id: null, seq: nextSeq() }, { keepalive: true })
      .catch(() => undefined);
  });

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // Someone silent for long enough is forgotten even when nothing else arrives.
  const tick = setInterval(listener, 10_000);
  return () => {
    listeners.delete(listener);
    clearInterval(tick);
  };
}

/** The ids of the other people who have `conversationId` open, as one stable string (`a,b`). */
function viewersKey(conversationId: string): string {
  const now = Date.now();
  return [...heard]
    .filter(([, entry]) => entry.conversationId === conversationId && now - entry.at < FORGET_MS)
    .map(([userId]) => userId)
    .sort()
    .join(',');
}

/** This page shows `conversationId` to `userId`: said now, every 20 seconds, and `null` when it stops. */
export function usePresence(userId: string, conversationId: string): string[] {
  useEffect(() => {
    self = { userId, conversationId };
    announce(conversationId);
    const heartbeat = setInterval(() => announce(conversationId), HEARTBEAT_MS);
    return () => {
      clearInterval(heartbeat);
      if (self?.conversationId === conversationId) self = { userId, conversationId: null };
      // Moving to another conversation announces that one instead; only leaving every conversation says `null`.
      setTimeout(() => {
        if (self?.conversationId === null) announce(null);
      }, 0);
    };
  }, [userId, conversationId]);
  const key = useSyncExternalStore(subscribe, () => viewersKey(conversationId));
  return key ? key.split(',') : [];
}

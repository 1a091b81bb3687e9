// The lifecycle of an outbound message at the platform, and the one rule every record that follows it obeys
// (conversation messages, broadcast recipients): a status never moves backwards (decisions §7).
// contract: sending -> sent -> delivered -> read, and sending/sent -> failed.

const RANK: Record<string, number> = { queued: 0, sending: 1, sent: 2, delivered: 3, read: 4 };

/** True when moving from `from` to `to` is forward (failed only from sending or sent). */
export function isForward(from: string, to: string): boolean {
  if (to === 'failed') return from === 'sending' || from === 'sent';
  const fromRank = RANK[from];
  const toRank = RANK[to];
  return fromRank !== undefined && toRank !== undefined && toRank > fromRank;
}

// decisions §18: keys record `last_used_at` to the minute. A request never waits for it and never writes per
// request: each process writes a key's minute at most once (remembered here), and the statement only moves the
// column forward, so several processes write the row at most once a minute between them. The write itself is the
// keys' owner's (`operator/operator.repo.ts` `recordApiKeyUse`), given by the wiring: http/ imports no feature (D290).
import type { FastifyBaseLogger } from 'fastify';

const MINUTE_MS = 60_000;
/** Keys remembered per process before the memory starts over (a forgotten key costs one no-op statement). */
const REMEMBERED_KEYS = 10_000;

export interface KeyUsage {
  /** Notes a use of the key at `now`; writes its minute unless this process (or the row, `lastUsedAt`) has it. */
  touch(orgId: string, keyId: string, lastUsedAt: Date | null, now: Date): void;
  /** Waits for the writes under way (on close, before the database closes). */
  flush(): Promise<void>;
}

/** Writes a key's last use at `at` unless the row already has it or later (the keys' owner does it). */
export type RecordKeyUse = (orgId: string, keyId: string, at: Date) => Promise<void>;

export function createKeyUsage(record: RecordKeyUse, log: FastifyBaseLogger): KeyUsage {
  const written = new Map<string, number>();
  const pending = new Set<Promise<void>>();

  return {
    touch(orgId, keyId, lastUsedAt, now) {
      const minute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
      if (lastUsedAt !== null && lastUsedAt.getTime() >= minute) return;
      if ((written.get(keyId) ?? Number.NEGATIVE_INFINITY) >= minute) return;
      if (written.size >= REMEMBERED_KEYS) written.clear();
      written.set(keyId, minute);
      const at = new Date(minute);
      const write = record(orgId, keyId, at)
        .then(
          () => undefined,
          (error: unknown) => {
            // Last use is a hint for people; a lost minute is written by the next use after it.
            if (written.get(keyId) === minute) written.delete(keyId);
            log.warn({ err: error, key_id: keyId }, 'could not record the key’s last use');
          },
        )
        .finally(() => pending.delete(write));
      pending.add(write);
    },
    async flush() {
      await Promise.all([...pending]);
    },
  };
}

// One Idempotency-Key per body (decisions §7, §15): the same key while the same body is sent again (a second press,
// a retry after a network error or a refusal), a new one when the body changes or after it was accepted.
import { useRef } from 'react';

export function useIdempotencyKey(): { keyFor: (body: unknown) => string; accepted: () => void } {
  const attempt = useRef<{ body: string; key: string } | null>(null);
  return {
    keyFor(body) {
      const json = JSON.stringify(body);
      if (attempt.current?.body !== json) attempt.current = { body: json, key: crypto.randomUUID() };
      return attempt.current.key;
    },
    accepted() {
      attempt.current = null;
    },
  };
}

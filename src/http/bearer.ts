// Shared secrets presented by callers: the token of an `Authorization: Bearer` header, and the one constant-time
// comparison of a presented secret with the configured one. Used by the /v1 guard (the header), /metrics, the
// operator API and the platform's subscription handshake.
import { createHash, timingSafeEqual } from 'node:crypto';

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A test of presented secrets against `expected`. Digests are compared, so that neither the length nor the content
 * of the secret leaks through timing; without an `expected` secret nothing matches.
 */
export function secretMatcher(expected: string | undefined): (given: string | undefined) => boolean {
  const wanted = expected === undefined ? undefined : digest(expected);
  return (given) => wanted !== undefined && given !== undefined && timingSafeEqual(digest(given), wanted);
}

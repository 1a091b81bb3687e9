// The console's one data client: the project's SDK pointed at the console's API (/app/api), signed by the session
// cookie, with the CSRF header the server compares with the `crm_csrf` cookie on every change (decisions §17).
import { ConsoleClient } from '@crm-messaging/sdk/console';

const API_BASE = '/app/api';

export function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

export const api = new ConsoleClient({
  baseUrl: API_BASE,
  session: { csrfToken: () => cookie('crm_csrf') },
  // A 429 was refused before anything ran (decisions §4), so every call — a read, a change with its
  // Idempotency-Key, an import's batch — is sent again after its Retry-After, quietly (D239). A longer wait (the
  // sign-in lockout's minutes) is not waited out here but shown.
  maxRetries: 3,
  maxRetryDelayMs: 5_000,
});

/** How long to wait before asking again after a 429: its Retry-After, with a little jitter (D154). */
export function after429(error: unknown): number {
  const after = Number((error as { headers?: Headers }).headers?.get('retry-after'));
  return (Number.isFinite(after) && after > 0 ? after * 1000 : 1000) + Math.random() * 300;
}

export const statusOf = (error: unknown) => (error as { status?: number }).status;

/**
 * Whether a read asks again (TanStack Query's `retry`): a 429 after its Retry-After, several times, since the budget
 * frees up within the second (D239); a 5xx or a lost connection twice; any other 4xx never (it will not change).
 */
export function retryRead(count: number, error: unknown): boolean {
  const status = statusOf(error);
  if (status === 429) return count < 10;
  return count < 2 && !(status! < 500);
}

/** The wait before a read asks again: a 429's Retry-After, otherwise an exponential backoff. */
export const readRetryDelay = (count: number, error: unknown) =>
  statusOf(error) === 429 ? after429(error) : Math.min(1000 * 2 ** count, 30_000);

// The console's one data client: the project's SDK pointed at the console's API (/app/api), signed by the session
// cookie, with the CSRF header the server compares with the `crm_csrf` cookie on every change (decisions §17).
import { CrmClient } from '@crm-messaging/sdk';

export const API_BASE = '/app/api';

function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

export const api = new CrmClient({
  baseUrl: API_BASE,
  session: { csrfToken: () => cookie('crm_csrf') },
  // A 429 is shown to the person at once rather than retried behind a spinner.
  maxRetries: 0,
});

/** How long to wait before asking again after a 429: its Retry-After, with a little jitter (D154). */
export function after429(error: unknown): number {
  const after = Number((error as { headers?: Headers }).headers?.get('retry-after'));
  return (Number.isFinite(after) && after > 0 ? after * 1000 : 1000) + Math.random() * 300;
}

export const statusOf = (error: unknown) => (error as { status?: number }).status;

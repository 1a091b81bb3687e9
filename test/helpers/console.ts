// A console client over the harness: signs in through /app/api like the console app does, then sends the session
// cookie, the CSRF header (the `crm_csrf` cookie's value) and a same-origin `Origin` with every request.
import type { Harness, Response } from './harness.ts';

export const CONSOLE_ORIGIN = 'http://127.0.0.1:8080';
export const TEST_PASSWORD = 'correct horse battery staple';

export interface ConsoleClient {
  cookies: Map<string, string>;
  call<T = any>(
    method: string,
    url: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response<T>>;
}

/** The cookies a response sets (`Set-Cookie`), as name -> value; a cleared cookie maps to ''. */
export function setCookies(response: Response): Map<string, string> {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [String(header)];
  return new Map(
    lines.map((line) => {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      return [pair.slice(0, index).trim(), decodeURIComponent(pair.slice(index + 1).trim())];
    }),
  );
}

export function consoleClient(h: Harness): ConsoleClient {
  const cookies = new Map<string, string>();
  return {
    cookies,
    async call(method, url, options = {}) {
      const jar = [...cookies].filter(([, value]) => value !== '').map(([name, value]) => `${name}=${value}`);
      const headers: Record<string, string> = {
        origin: CONSOLE_ORIGIN,
        ...(cookies.get('crm_csrf') ? { 'x-csrf-token': cookies.get('crm_csrf') as string } : {}),
        ...(jar.length > 0 ? { cookie: jar.join('; ') } : {}),
        ...options.headers,
      };
      const response = await h.api(method, url, {
        headers,
        ...(options.body !== undefined ? { body: options.body } : {}),
      });
      for (const [name, value] of setCookies(response)) cookies.set(name, value);
      return response;
    },
  };
}

/** A user of `orgId` with a password, created through the operator API and the sign-in link it answers. */
export async function createUser(
  h: Harness,
  orgId: string,
  fields: { email?: string; role?: 'admin' | 'agent'; name?: string } = {},
): Promise<{ user: any; email: string; password: string; client: ConsoleClient }> {
  const email = fields.email ?? `person-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const created = await h.admin('POST', `/organizations/${orgId}/users`, {
    email,
    role: fields.role ?? 'admin',
    ...(fields.name ? { name: fields.name } : {}),
  });
  if (created.status !== 201) throw new Error(`createUser failed: ${created.status} ${created.text}`);
  const token = new URL(created.body.sign_in_url).hash.replace('#token=', '');
  const client = consoleClient(h);
  const accepted = await client.call('POST', '/app/api/sign-in-links/accept', {
    body: { token, password: TEST_PASSWORD },
  });
  if (accepted.status !== 201) throw new Error(`accept failed: ${accepted.status} ${accepted.text}`);
  return { user: created.body, email, password: TEST_PASSWORD, client };
}

// The SDK signed by a browser session (the console, decisions §17): cookies go with the request, no Authorization
// header, and every change (not a read) carries X-CSRF-Token.
import { describe, expect, it } from 'vitest';
import { CrmClient } from '../src/index.ts';

function recording() {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify({ items: [], next_cursor: null }), { status: 200 });
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
}

describe('a session client', () => {
  it('sends cookies and the CSRF header on changes, never an Authorization header', async () => {
    const { calls, fetch } = recording();
    let token: string | undefined = 'csrf-1';
    const client = new CrmClient({ baseUrl: '/app/api', session: { csrfToken: () => token }, fetch });
    await client.contacts.list({ q: 'ana' });
    await client.contacts.create({ first_name: 'Ana' });
    token = undefined;
    await client.contacts.update('ct_1', { city: 'Lima' });
    const [read, create, update] = calls.map((call) => ({
      url: call.url,
      credentials: call.init.credentials,
      headers: call.init.headers as Record<string, string>,
    }));
    expect(read!.url).toBe('/app/api/v1/contacts?q=ana');
    for (const call of [read!, create!, update!]) {
      expect(call.credentials).toBe('same-origin');
      expect(call.headers.authorization).toBeUndefined();
    }
    expect(read!.headers['x-csrf-token']).toBeUndefined();
    expect(create!.headers['x-csrf-token']).toBe('csrf-1');
    expect(update!.headers['x-csrf-token']).toBeUndefined();
  });

  it('still refuses a client with neither a key nor a session', () => {
    expect(() => new CrmClient({} as never)).toThrow(/apiKey is required/);
  });
});

// The console's own operations (/app/api, decisions §17) each have a named method of ConsoleClient that makes exactly
// that request relative to the console's base (D326): a console route added without its method fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient, methodOfConsoleOperation } from '../../sdk/src/console.ts';
import { type DocumentOperation, documentOperations } from '../helpers/document-operations.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

const BASE = 'http://127.0.0.1:9/app/api';

let h: Harness;
let operations: DocumentOperation[];
beforeAll(async () => {
  h = await startHarness();
  operations = await documentOperations(h, '/app/api/');
});
afterAll(() => h.close());

type Recorded = { method: string; url: URL; headers: Headers; body: unknown; keepalive: boolean };

/** A console client whose fetch records each request and answers 200 `{}`. */
function recordingClient() {
  const requests: Recorded[] = [];
  const client = new ConsoleClient({
    baseUrl: BASE,
    session: { csrfToken: () => 'csrf-1' },
    fetch: async (input, init) => {
      requests.push({
        method: init?.method ?? 'GET',
        url: new URL(String(input)),
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
        keepalive: init?.keepalive === true,
      });
      return new Response('{}', { status: 200 });
    },
  });
  return { client, requests };
}

function methodAt(client: ConsoleClient, name: string): (...args: unknown[]) => unknown {
  const [group, method] = name.split('.') as [string, string];
  const owner = (client.console as unknown as Record<string, Record<string, unknown>>)[group]!;
  expect(typeof owner[method], name).toBe('function');
  return (owner[method] as (...args: unknown[]) => unknown).bind(owner);
}

describe('ConsoleClient covers the console’s own operations', () => {
  it('has a method for every /app/api operation of the served document, and none for one it lacks', () => {
    expect(operations.length).toBeGreaterThan(10);
    expect(Object.keys(methodOfConsoleOperation).sort()).toEqual(operations.map((operation) => operation.id).sort());
    const methods = Object.entries(recordingClient().client.console).flatMap(([group, value]) =>
      Object.keys(value as object).map((method) => `${group}.${method}`),
    );
    expect(methods.sort()).toEqual(Object.values(methodOfConsoleOperation).sort());
  });

  it("each method sends its operation's method and path under the console's base, with the CSRF header on changes", async () => {
    for (const operation of operations) {
      const { client, requests } = recordingClient();
      const name = methodOfConsoleOperation[operation.id as keyof typeof methodOfConsoleOperation];
      const ids = (operation.path.match(/\{[a-z_]+\}/g) ?? []).map((_, index) => `id_${index}/x`);
      let index = 0;
      const path = operation.path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++]!));
      if (operation.id === 'consoleEvents') {
        // The live stream is read by an EventSource: the method gives its address.
        expect(methodAt(client, name)()).toBe(`http://127.0.0.1:9${path}`);
        continue;
      }
      await methodAt(client, name)(...ids, ...(operation.hasBody ? [{}] : []), {});
      expect(requests, name).toHaveLength(1);
      const [request] = requests;
      expect({ method: request!.method, path: request!.url.pathname }, name).toEqual({
        method: operation.method,
        path,
      });
      expect(request!.headers.get('x-csrf-token'), name).toBe(operation.method === 'GET' ? null : 'csrf-1');
      expect(request!.headers.has('authorization'), name).toBe(false);
      if (operation.hasBody) expect(request!.body, `${name}: body`).toEqual({});
    }
  });

  it('keeps the public client’s /v1 methods under the same base, and passes keepalive on', async () => {
    const { client, requests } = recordingClient();
    await client.contacts.list();
    await client.console.presence.set({ conversation_id: null }, { keepalive: true });
    expect(requests.map((request) => [request.url.pathname, request.keepalive])).toEqual([
      ['/app/api/v1/contacts', false],
      ['/app/api/presence', true],
    ]);
    expect(client.conversations.mediaUrl('c 1', 'm/2')).toBe(`${BASE}/v1/conversations/c%201/messages/m%2F2/media`);
  });
});

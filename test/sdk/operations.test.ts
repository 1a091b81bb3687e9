// Every operation of the served OpenAPI document has an SDK method that makes exactly that request (a route added
// without its method fails here), and `request()` gives an `Idempotency-Key` to the operations that take one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient, methodOfOperation } from '../../sdk/src/client.ts';
import { type DocumentOperation, documentOperations } from '../helpers/document-operations.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let operations: DocumentOperation[];
beforeAll(async () => {
  h = await startHarness();
  // The console's own operations (/app/api, decisions §17) are called with request() relative to the console's
  // base; the SDK's methods are the /v1 operations.
  operations = await documentOperations(h, '/v1/');
});
afterAll(() => h.close());

type Recorded = { method: string; url: URL; headers: Headers; body: unknown };

/** A client whose fetch records each request and answers 200 with an empty page. */
function recordingClient() {
  const requests: Recorded[] = [];
  const client = new CrmClient({
    apiKey: 'oak_test',
    baseUrl: 'http://127.0.0.1:9',
    fetch: async (input, init) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      requests.push({
        method: init?.method ?? 'GET',
        url: new URL(String(input)),
        headers: new Headers(init?.headers),
        body,
      });
      return new Response(JSON.stringify({ items: [], next_cursor: null }), { status: 200 });
    },
  });
  return { client, requests };
}

/** `group.method` of the client as a function bound to its group. */
function methodAt(client: CrmClient, name: string): (...args: unknown[]) => Promise<unknown> {
  const parts = name.split('.');
  const owner = (parts.length === 2 ? (client as never)[parts[0]!] : client) as unknown as Record<string, unknown>;
  const method = owner[parts.at(-1)!];
  expect(typeof method, name).toBe('function');
  return (method as (...args: unknown[]) => Promise<unknown>).bind(owner);
}

describe('the SDK covers the API', () => {
  it('has a method for every operation of the served document, and none for an operation it lacks', () => {
    expect(operations.length).toBeGreaterThan(40);
    const documented = operations.map((operation) => operation.id).sort();
    expect(Object.keys(methodOfOperation).sort(), 'methodOfOperation in sdk/src/client.ts').toEqual(documented);
  });

  it("each method sends its operation's method and path, with an Idempotency-Key where the operation takes one", async () => {
    for (const operation of operations) {
      const { client, requests } = recordingClient();
      const name = methodOfOperation[operation.id as keyof typeof methodOfOperation];
      const ids = (operation.path.match(/\{[a-z_]+\}/g) ?? []).map((_, index) => `id_${index}/x`);
      // Path ids, then the body or the query (an empty object), then the call's options.
      await methodAt(client, name)(...ids, {}, {});
      expect(requests, name).toHaveLength(1);
      const [request] = requests;
      let index = 0;
      const path = operation.path.replace(/\{[a-z_]+\}/g, () => encodeURIComponent(ids[index++]!));
      expect({ method: request!.method, path: request!.url.pathname }, name).toEqual({
        method: operation.method,
        path,
      });
      expect(request!.headers.has('idempotency-key'), `${name}: Idempotency-Key`).toBe(operation.idempotent);
      if (operation.hasBody) expect(request!.body, `${name}: body`).toEqual({});
    }
  });

  it('every method of the client is the method of an operation (iterators walk one)', () => {
    const { client } = recordingClient();
    const mapped = new Set<string>(Object.values(methodOfOperation));
    const methods = Object.entries(client).flatMap(([group, value]) =>
      Object.keys(value as object).map((method) => `${group}.${method}`),
    );
    // Iterators walk an operation's pages; `…Url` gives an operation's address without calling it.
    const unmapped = methods.filter((method) => !mapped.has(method) && !/\.iterate|Url$/.test(method));
    expect(unmapped).toEqual([]);
  });
});

describe('request(): an Idempotency-Key where the operation takes one', () => {
  it('adds a fresh key to a POST of an operation that takes one, and to no other request', async () => {
    const { client, requests } = recordingClient();
    for (const operation of operations) {
      const path = operation.path.replace(/\{[a-z_]+\}/g, 'id_1');
      await client.request(operation.method, `${path}?x=1`, operation.hasBody ? { body: {} } : {});
      expect(requests.at(-1)!.headers.has('idempotency-key'), `${operation.method} ${path}`).toBe(operation.idempotent);
    }
    const keys = requests.map((request) => request.headers.get('idempotency-key')).filter(Boolean);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBeGreaterThanOrEqual(2);
  });

  it('keeps the key given as an option or as a header, the same on every 429 retry', async () => {
    const { client, requests } = recordingClient();
    await client.request('POST', '/v1/broadcasts/bc_1/retry', { idempotencyKey: 'mine-1' });
    await client.request('post', '/v1/broadcasts/bc_1/retry', { headers: { 'Idempotency-Key': 'mine-2' } });
    expect(requests.map((request) => request.headers.get('idempotency-key'))).toEqual(['mine-1', 'mine-2']);

    let calls = 0;
    const seen: (string | null)[] = [];
    const retrying = new CrmClient({
      apiKey: 'oak_test',
      baseUrl: 'http://127.0.0.1:9',
      fetch: async (_input, init) => {
        seen.push(new Headers(init?.headers).get('idempotency-key'));
        calls++;
        return calls === 1
          ? new Response(JSON.stringify({ detail: 'rate_limited' }), { status: 429, headers: { 'retry-after': '0' } })
          : new Response('{}', { status: 202 });
      },
    });
    await retrying.request('POST', '/v1/broadcasts/bc_1/retry');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toBe(seen[0]);
  });
});

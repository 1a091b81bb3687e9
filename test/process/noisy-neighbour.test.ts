// One organization floods, another reads (D132), against the real server process on either engine:
// the flooding organization's expensive requests past its bulkhead are answered 503 `service_busy` with
// Retry-After, the other organization's requests all succeed, /readyz stays green, and nothing says the database
// is down.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../helpers/process.ts';
import { delay } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';

interface Answer {
  status: number;
  body: { id?: string; detail?: unknown };
  detail: unknown;
  retryAfter: string | null;
}

describe('a noisy neighbour', { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let dataDir: string | undefined;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined;

  const call = async (token: string, method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    const parsed = text ? (JSON.parse(text) as Answer['body']) : {};
    return {
      status: response.status,
      body: parsed,
      detail: parsed.detail,
      retryAfter: response.headers.get('retry-after'),
    };
  };
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${server.baseUrl}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  };

  beforeAll(async () => {
    let env: Record<string, string>;
    if (onPostgres) {
      database = await createPostgresDatabase();
      env = { DATABASE_URL: database.url };
    } else {
      dataDir = mkdtempSync(join(tmpdir(), 'crm-noisy-'));
      env = { DATA_DIR: dataDir };
    }
    // One expensive request at a time per organization and no queue: overlapping ones are refused at once.
    server = await startServer({ ...env, ADMIN_TOKEN: 'secret', ORG_CONCURRENCY: '1', ORG_QUEUE: '0' }, [
      'src/cli/main.ts',
      'serve',
      '--no-worker',
    ]);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("refuses the flooding organization's excess with service_busy while the other organization is served", async () => {
    const flooding = await admin('/organizations', { name: 'Flooding', plan: 'scale' });
    const floodKeys = [
      (await admin(`/organizations/${flooding.id}/api-keys`, { name: 'one' })).key,
      (await admin(`/organizations/${flooding.id}/api-keys`, { name: 'two' })).key,
      (await admin(`/organizations/${flooding.id}/api-keys`, { name: 'three' })).key,
    ];
    const quiet = await admin('/organizations', { name: 'Quiet', plan: 'scale' });
    const quietKey = (await admin(`/organizations/${quiet.id}/api-keys`, { name: 'reads' })).key;
    const seeded = await call(quietKey, 'POST', '/v1/contacts', { first_name: 'Quiet', email: 'quiet@example.org' });
    expect(seeded.status).toBe(201);
    const quietContact = seeded.body.id as string;

    let floodOn = true;
    const floodAnswers: Answer[] = [];
    const floodLoop = async (loop: number) => {
      for (let round = 0; floodOn; round++) {
        const key = floodKeys[loop % floodKeys.length] as string;
        const answer =
          loop % 2 === 0
            ? await call(key, 'GET', `/v1/contacts?q=flood${round % 5}`)
            : await call(key, 'POST', '/v1/contacts/batch-upsert', {
                match_on: 'email',
                items: Array.from({ length: 50 }, (_, item) => ({
                  email: `flood-${loop}-${round}-${item}@example.net`,
                  first_name: 'Flood',
                })),
              });
        floodAnswers.push(answer);
        // A client that starts again with the next second's rate window (pacing, not a wait for state): every loop
        // fires at once there, so the organization's expensive requests overlap.
        if (answer.status === 429) await delay(1000 - (Date.now() % 1000) + 5);
      }
    };
    const loops = Array.from({ length: 12 }, (_, loop) => floodLoop(loop));

    const quietAnswers: Answer[] = [];
    const readiness: number[] = [];
    try {
      for (let read = 0; read < 30; read++) {
        quietAnswers.push(
          read % 2 === 0
            ? await call(quietKey, 'GET', '/v1/contacts?q=quiet')
            : await call(quietKey, 'GET', `/v1/contacts/${quietContact}`),
        );
        if (read % 10 === 0) readiness.push((await fetch(`${server.baseUrl}/readyz`)).status);
        await delay(100); // pacing: the quiet organization stays within its rate budget
      }
    } finally {
      floodOn = false;
      await Promise.all(loops);
    }

    // The other organization was served throughout, searches included.
    expect(quietAnswers.map((answer) => answer.status)).toEqual(quietAnswers.map(() => 200));
    // The flooding organization met its bulkhead: service_busy with Retry-After, never "the database is down".
    const busy = floodAnswers.filter((answer) => answer.status === 503);
    // On PGlite a statement runs on the process's own thread and a request's statements follow one another without
    // letting the next request in, so the organization's expensive requests rarely overlap there: the bulkhead is
    // for PostgreSQL, where they run side by side on the pool's connections.
    if (onPostgres) expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) {
      expect(answer.detail).toBe('service_busy');
      expect(answer.retryAfter).toBe('1');
    }
    for (const answer of floodAnswers) expect([200, 429, 503]).toContain(answer.status);
    expect(floodAnswers.some((answer) => answer.status === 200)).toBe(true);
    expect(readiness).toEqual(readiness.map(() => 200));
    expect(server.output()).not.toContain('database unavailable');
  });
});

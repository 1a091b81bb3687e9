// decisions §15: a reply accepted by one process wakes a `crm worker` in another at once (the answering
// transaction's notification), so it reaches the platform well within a second although the worker polls once a
// minute. The sandbox platform runs in the worker process and knows the contact's window from the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer, startWorkerProcess } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';

describe.skipIf(!onPostgres)('a reply wakes a worker in another process', () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  const processes: ServerProcess[] = [];
  let server: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    env = { DATABASE_URL: database.url, ADMIN_TOKEN: 'secret', WORKER_POLL_MS: '60000', LOG_LEVEL: 'info' };
    server = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
    processes.push(server);
  });
  afterAll(async () => {
    await Promise.all(processes.map((child) => child.stop('SIGKILL')));
    await database.drop();
  });

  const call = async (method: string, path: string, body?: unknown, key = 'secret') => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('hands the reply off at once after its 202, not at the next poll', async () => {
    const org = (await call('POST', '/admin/v1/organizations', { name: 'Wake' })).body;
    const key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {})).body.key as string;
    const account = (
      await call('POST', `/admin/v1/organizations/${org.id}/messaging-accounts`, {
        numbers: [{ phone: '+15550100003' }],
      })
    ).body;
    const inbound = await call('POST', '/admin/v1/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from: '+15557009001',
      text: 'hi',
    });
    expect(inbound.status).toBe(200);
    const conversationId = (await call('GET', '/v1/conversations', undefined, key)).body.items[0].id as string;

    const worker = await startWorkerProcess(env);
    processes.push(worker);
    await waitUntil(() => worker.output().includes('listening for wake-ups'), { timeoutMs: 30_000 });

    for (const text of ['first', 'second']) {
      const answered = await call('POST', `/v1/conversations/${conversationId}/messages`, { type: 'text', text }, key);
      expect(answered.status).toBe(202);
      const started = Date.now();
      await waitUntil(
        async () => {
          const page = (await call('GET', `/v1/conversations/${conversationId}/messages`, undefined, key)).body;
          return page.items.find((message: any) => message.id === answered.body.id)?.status === 'sent';
        },
        { timeoutMs: 10_000, intervalMs: 10, message: `reply "${text}" sent` },
      );
      // The poll is a minute away: only the wake-up can have handed it off this soon. (The latency itself, on a quiet
      // machine, is `npm run bench:replies`'s; a loaded test machine gets some slack here.)
      expect(Date.now() - started).toBeLessThan(3000);
    }
  }, 120_000);
});

// An idempotency key whose request died with its process (SIGKILL mid-send) does not hold the key for minutes:
// its in-flight lock is a short lease renewed only while the request runs, so a retry on a restarted server
// succeeds within seconds and queues the broadcast exactly once (D52).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer } from '../helpers/process.ts';
import { IMAGE_HEADER_WITH_BUTTON } from '../helpers/sends.ts';
import { waitUntil } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

describe.skipIf(!onPostgres)('a send killed mid-request', { timeout: 180_000 }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let media: Server;
  let mediaBase: string;
  let stall = true;
  let mediaRequests = 0;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createPostgresDatabase();
    // While `stall` is set the media server never answers: the send waits on it, holding its idempotency key.
    media = createServer((_request, response) => {
      mediaRequests++;
      if (stall) return;
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      response.end(PNG);
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop('SIGKILL')));
    media.closeAllConnections();
    await new Promise<void>((resolve) => media.close(() => resolve()));
    await database.drop();
  });

  it('lets a retry of the same key succeed within seconds of the kill, once', async () => {
    const env = { DATABASE_URL: database.url, ADMIN_TOKEN: 'secret', MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1' };
    const first = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
    servers.push(first);
    const call = async (base: string, method: string, path: string, body?: unknown, token = 'secret', headers = {}) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const org = (await call(first.baseUrl, 'POST', '/admin/v1/organizations', { name: 'Idem', plan: 'scale' })).body;
    const key = (await call(first.baseUrl, 'POST', `/admin/v1/organizations/${org.id}/api-keys`, {})).body.key;
    await call(first.baseUrl, 'POST', `/admin/v1/organizations/${org.id}/messaging-accounts`, {
      numbers: [{ phone: '+15550100001' }],
    });
    const template = (
      await call(
        first.baseUrl,
        'POST',
        '/v1/templates',
        { name: 'idem_crash', language: 'en_US', category: 'UTILITY', components: IMAGE_HEADER_WITH_BUTTON },
        key,
      )
    ).body;
    await call(first.baseUrl, 'POST', `/admin/v1/sandbox/templates/${template.id}/review`, { event: 'APPROVED' });

    const body = {
      recipients: [
        {
          phone: '+15550199001',
          variables: { 'body.1': 'A-1' },
          url_suffixes: { '0': 'A-1' },
          header_media_url: `${mediaBase}/a.png`,
        },
      ],
    };
    const headers = { 'idempotency-key': 'crash-retry-1' };
    // The first attempt claims the key and stalls on the media; the process is killed while it waits.
    const stalled = call(first.baseUrl, 'POST', `/v1/templates/${template.id}/send`, body, key, headers).catch(
      (error: Error) => error,
    );
    await waitUntil(() => mediaRequests > 0, { message: 'the media request' });
    await first.stop('SIGKILL');
    expect(await stalled).toBeInstanceOf(Error);
    const killedAt = Date.now();

    stall = false;
    const second = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
    servers.push(second);
    const answers: number[] = [];
    const accepted = await waitUntil(
      async () => {
        const answer = await call(second.baseUrl, 'POST', `/v1/templates/${template.id}/send`, body, key, headers);
        answers.push(answer.status);
        if (answer.status === 202) return answer as { status: number; body: any };
        expect(answer.body).toEqual({ detail: { code: 'idempotency_key_in_flight' } });
        return undefined;
      },
      { timeoutMs: 15_000 - (Date.now() - killedAt), intervalMs: 250, message: 'the key to be free again' },
    ).catch(() => undefined);
    // Within seconds: the lease (5 s) ran out, where the old fixed lock held the key for two minutes.
    expect(accepted, `answers: ${answers.join(',')}`).toBeDefined();
    const replay = await call(second.baseUrl, 'POST', `/v1/templates/${template.id}/send`, body, key, headers);
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(accepted?.body.id);
    const list = await call(second.baseUrl, 'GET', '/v1/broadcasts', undefined, key);
    expect(list.body.items).toHaveLength(1);
  });
});

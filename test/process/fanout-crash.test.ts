// A worker killed with SIGKILL in the middle of a broadcast loses nothing, and no recipient is handed to the
// platform twice: restarted workers (two of them, sharing one PostgreSQL) finish the work. The platform is the fake
// Graph API server, which also delivers the status webhooks that settle hand-offs whose answer died with the worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedWebhook } from '../../src/messaging/cloud/webhook-builder.ts';
import { type FakeCloudApi, startFakeCloudApi } from '../fakes/fake-cloud-api.ts';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer, startWorkerProcess } from '../helpers/process.ts';
import { phones } from '../helpers/sends.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const SECRET = 'crash-test-secret';
const WABA = '301234567890123';
const PHONE_NUMBER_ID = '401234567890123';

describe.skipIf(!onPostgres)('a worker killed mid-broadcast', () => {
  let fake: FakeCloudApi;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let server: ServerProcess;
  const processes: { stop(signal?: NodeJS.Signals): Promise<number | null> }[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    fake = await startFakeCloudApi();
    database = await createPostgresDatabase();
    env = {
      DATABASE_URL: database.url,
      ADMIN_TOKEN: 'secret',
      MESSAGING_PLATFORM: 'cloud',
      CLOUD_API_BASE_URL: fake.baseUrl,
      CLOUD_API_TOKEN: fake.token,
      WEBHOOK_APP_SECRET: SECRET,
      FANOUT_LEASE_MS: '1500',
      FANOUT_BATCH_SIZE: '20',
      FANOUT_CONCURRENCY: '8',
      FANOUT_PER_NUMBER_PER_SECOND: '0',
      WORKER_POLL_MS: '50',
      LOG_LEVEL: 'debug',
    };
    server = await startServer(env, ['src/cli.ts', 'serve', '--no-worker']);
    processes.push(server);
    fake.deliverStatusesTo({ url: `${server.baseUrl}/webhooks/messaging`, appSecret: SECRET, businessAccountId: WABA });
  });
  afterAll(async () => {
    await Promise.all(processes.map((child) => child.stop('SIGKILL')));
    await fake.close();
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

  it('finishes with every recipient handed off exactly once', async () => {
    const org = (await call('POST', '/admin/v1/organizations', { name: 'Crash test', plan: 'scale' })).body;
    const key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {})).body.key as string;
    const account = (
      await call('POST', `/admin/v1/organizations/${org.id}/messaging-accounts`, {
        business_account_id: WABA,
        balance: 1000,
        numbers: [{ phone: '+15550100001', phone_number_id: PHONE_NUMBER_ID }],
      })
    ).body;
    const template = (
      await call(
        'POST',
        '/v1/templates',
        {
          name: 'crash_notice',
          language: 'en_US',
          category: 'UTILITY',
          components: [{ type: 'BODY', text: 'Code {{1}}', example: { body_text: [['1']] } }],
        },
        key,
      )
    ).body;
    const approval = buildSignedWebhook(
      [
        {
          kind: 'template_status',
          businessAccountId: WABA,
          platformTemplateId: template.platform_template_id,
          templateName: 'crash_notice',
          language: 'en_US',
          event: 'APPROVED',
        },
      ],
      SECRET,
    );
    const approved = await fetch(`${server.baseUrl}/webhooks/messaging`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': approval.signature },
      body: approval.rawBody,
    });
    expect(approved.status).toBe(200);

    const broadcasts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sent = await call(
        'POST',
        `/v1/templates/${template.id}/send`,
        { recipients: phones(100).map((phone) => ({ phone, variables: { 'body.1': String(i) } })) },
        key,
      );
      expect(sent.status).toBe(202);
      broadcasts.push(sent.body.id);
    }

    fake.setSendDelay(20);
    const first = await startWorkerProcess(env);
    processes.push(first);
    for (let i = 0; i < 400 && fake.accepted.length < 60; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(fake.accepted.length).toBeGreaterThanOrEqual(60);
    await first.stop('SIGKILL');
    const handedBeforeKill = fake.accepted.length;
    expect(handedBeforeKill).toBeLessThan(300);

    // A slower platform for the rest, so that the remaining work outlasts the two workers' start-up skew and both
    // take part.
    fake.setSendDelay(150);
    const [second, third] = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    processes.push(second, third);
    const deadline = Date.now() + 90_000;
    let pending = 300;
    while (Date.now() < deadline) {
      const reads = await Promise.all(broadcasts.map((id) => call('GET', `/v1/broadcasts/${id}`, undefined, key)));
      for (const read of reads) expect(read.body.sent + read.body.failed + read.body.pending).toBe(read.body.requested);
      pending = reads.reduce((sum, read) => sum + read.body.pending, 0);
      if (pending === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(pending, `${second.output().slice(-3000)}\n---\n${server.output().slice(-2000)}`).toBe(0);

    // The platform's log: every recipient exactly once.
    const references = fake.accepted.map((message) => message.callbackData);
    expect(new Set(references).size).toBe(references.length);
    expect(references).toHaveLength(300);
    for (const id of broadcasts) {
      const read = (await call('GET', `/v1/broadcasts/${id}`, undefined, key)).body;
      expect(read).toMatchObject({ status: 'completed', sent: 100, failed: 0, pending: 0 });
    }
    const byReference = new Map(fake.accepted.map((message) => [message.callbackData, message.id]));
    for (const id of broadcasts) {
      let cursor: string | null = null;
      do {
        const page: any = (
          await call(
            'GET',
            `/v1/broadcasts/${id}/recipients?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
            undefined,
            key,
          )
        ).body;
        for (const [position, item] of page.items.entries()) {
          expect(item.platform_message_id).toBe(byReference.get(`${org.id}|${id}|${position}`));
        }
        cursor = page.next_cursor;
      } while (cursor);
    }
    // Each message charged once: rows the killed worker had claimed but not handed off were not charged twice.
    expect((await call('GET', `/admin/v1/messaging-accounts/${account.id}`)).body.balance).toBe(700);
    // Both restarted workers took part.
    const worked = [second, third].map((worker) => /fan-out handed off recipients/.test(worker.output()));
    expect(worked).toEqual([true, true]);
  }, 150_000);
});

// decisions §16 with real processes: two workers racing for the same due broadcasts start each exactly once, and a
// worker killed with SIGKILL while a broadcast is `preparing` leaves its recipients to the next worker without a
// duplicate or a gap (the checkpoint advances in the statement that adds the chunk). The platform is the fake Graph
// API server; 20,000 contacts are written with SQL (the test is about the broadcast, not the contact API).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedWebhook } from '../../src/messaging/cloud/webhook-builder.ts';
import { type FakeCloudApi, startFakeCloudApi } from '../fakes/fake-cloud-api.ts';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer, startWorkerProcess } from '../helpers/process.ts';
import { waitForValue } from '../helpers/wait.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const SECRET = 'audience-crash-secret';
const WABA = '301234567890777';
const PHONE_NUMBER_ID = '401234567890777';
const CONTACTS = 20_000;

const waitFor = <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 120_000) =>
  waitForValue(read, done, { message: what, timeoutMs: ms, intervalMs: 50 });

describe.skipIf(!onPostgres)('audience broadcasts across worker processes', () => {
  let fake: FakeCloudApi;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let server: ServerProcess;
  let client: pg.Client;
  const processes: ServerProcess[] = [];
  let env: Record<string, string>;
  let key: string;
  let orgId: string;
  let templateId: string;

  const call = async (method: string, path: string, body?: unknown, bearer = key) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

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
      FANOUT_PER_NUMBER_PER_SECOND: '0',
      WORKER_POLL_MS: '20',
      // Small chunks: a 20,000-contact audience takes 40 statements, so a kill lands mid-way.
      AUDIENCE_CHUNK_SIZE: '500',
      LOG_LEVEL: 'info',
    };
    server = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
    processes.push(server);
    const org = (await call('POST', '/admin/v1/organizations', { name: 'Audience', plan: 'scale' }, 'secret')).body;
    orgId = org.id;
    key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {}, 'secret')).body.key;
    await call(
      'POST',
      `/admin/v1/organizations/${org.id}/messaging-accounts`,
      {
        business_account_id: WABA,
        balance: 1_000_000,
        messaging_limit_24h: 1_000_000,
        numbers: [{ phone: '+15550100001', phone_number_id: PHONE_NUMBER_ID }],
      },
      'secret',
    );
    const template = (
      await call('POST', '/v1/templates', {
        name: 'audience_notice',
        language: 'en_US',
        category: 'UTILITY',
        components: [
          {
            type: 'BODY',
            text: 'Hello {{first_name}}',
            example: { body_text_named_params: [{ param_name: 'first_name', example: 'Ana' }] },
          },
        ],
      })
    ).body;
    templateId = template.id;
    const approval = buildSignedWebhook(
      [
        {
          kind: 'template_status',
          businessAccountId: WABA,
          platformTemplateId: template.platform_template_id,
          templateName: 'audience_notice',
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
    // An endpoint for every event, so that `broadcast.started` is recorded (it is never delivered here).
    expect(
      (await call('POST', '/v1/webhook-endpoints', { url: 'https://example.com/hook', events: ['*'] })).status,
    ).toBe(201);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(
      `insert into contacts (org_id, id, first_name, phone, origin, messaging_status, created_at, updated_at)
       select $1, 'ct_aud' || lpad(i::text, 9, '0'), 'Name' || i, '+1' || (3000000000 + i)::text, 'API', 'unverified',
         now() - interval '1 hour' + i * interval '1 millisecond', now()
       from generate_series(1, ${CONTACTS}) as i`,
      [orgId],
    );
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await Promise.all(processes.map((child) => child.stop('SIGKILL')));
    await fake.close();
    await database.drop();
  });

  const recipients = async (broadcastId: string) =>
    (
      await client.query(
        `select count(*)::int as n, count(distinct contact_id)::int as contacts, min(position) as first,
           max(position) as last from broadcast_recipients where org_id = $1 and broadcast_id = $2`,
        [orgId, broadcastId],
      )
    ).rows[0] as { n: number; contacts: number; first: number; last: number };

  it('a worker killed while a broadcast is preparing leaves no duplicate and no gap', async () => {
    // Hand-offs are slow, so the queue is not what the test waits on.
    fake.setSendDelay(200);
    const accepted = await call('POST', '/v1/broadcasts', {
      template_id: templateId,
      audience: {},
      name: 'crash',
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;
    const first = await startWorkerProcess(env);
    processes.push(first);
    const midway = await waitFor(
      'a broadcast part-way prepared',
      async () => (await call('GET', `/v1/broadcasts/${id}`)).body,
      (b) => b.status === 'preparing' && b.requested >= 1000,
    );
    await first.stop('SIGKILL');
    const atKill = (await call('GET', `/v1/broadcasts/${id}`)).body;
    expect(atKill.status).toBe('preparing');
    expect(atKill.requested).toBeLessThan(CONTACTS);
    expect(atKill.requested).toBeGreaterThanOrEqual(midway.requested);
    expect(atKill.sent + atKill.failed + atKill.pending).toBe(atKill.requested);
    const second = await startWorkerProcess(env);
    processes.push(second);
    const ready = await waitFor(
      'every recipient added',
      async () => (await call('GET', `/v1/broadcasts/${id}`)).body,
      (b) => b.status !== 'preparing',
    );
    expect(ready.requested).toBe(CONTACTS);
    expect(await recipients(id)).toEqual({ n: CONTACTS, contacts: CONTACTS, first: 0, last: CONTACTS - 1 });
    await second.stop('SIGKILL');
  }, 240_000);

  it('two workers racing for the same due broadcasts start each exactly once', async () => {
    fake.setSendDelay(0);
    const sendAt = new Date(Date.now() + 3000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const accepted = await call('POST', '/v1/broadcasts', {
        template_id: templateId,
        audience: { created_to: '2100-01-01' },
        send_at: sendAt,
      });
      expect(accepted.status).toBe(202);
      expect(accepted.body.status).toBe('scheduled');
      ids.push(accepted.body.id);
    }
    // Both workers are running before send_at, so both find the broadcasts due at the same moment.
    processes.push(...(await Promise.all([startWorkerProcess(env), startWorkerProcess(env)])));
    for (const id of ids) {
      await waitFor(
        'the broadcast prepared',
        async () => (await call('GET', `/v1/broadcasts/${id}`)).body,
        (b) => b.status !== 'scheduled' && b.status !== 'preparing',
      );
      expect(await recipients(id)).toEqual({ n: CONTACTS, contacts: CONTACTS, first: 0, last: CONTACTS - 1 });
    }
    const started = await client.query(
      `select payload from webhook_events where org_id = $1 and type = 'broadcast.started'`,
      [orgId],
    );
    const startedIds = started.rows.map((row) => {
      const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
      return (payload.data ?? payload).id as string;
    });
    for (const id of ids) expect(startedIds.filter((startedId) => startedId === id)).toHaveLength(1);
  }, 240_000);
});

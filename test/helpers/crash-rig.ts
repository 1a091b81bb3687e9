// What the crash tests (test/process/*-crash.test.ts) share: a fresh PostgreSQL database, the API server as a child
// process without a worker (`serve --no-worker`), `crm worker` processes started and killed by the test, and a
// client that waits out 429s. With `cloud`, the platform is the fake Graph API server, which delivers signed status
// reports to the server; `webhook` posts signed platform events and `approvedTemplate` makes a template usable.
import type pg from 'pg';
import { expect } from 'vitest';
import { buildSignedWebhook } from '../../src/messaging/cloud/webhook-builder.ts';
import type { PlatformEvent } from '../../src/messaging/platform.ts';
import { type FakeCloudApi, startFakeCloudApi } from '../fakes/fake-cloud-api.ts';
import { createPostgresDatabase } from './database.ts';
import { type ServerProcess, startServer, startWorkerProcess } from './process.ts';
import { waitUntil } from './wait.ts';

export const ADMIN = 'secret';

export interface CrashRig {
  database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  server: ServerProcess;
  env: Record<string, string>;
  /** The fake Graph API server (only with `cloud`). */
  fake: FakeCloudApi;
  /** A request to the server (the admin token unless a key is given); a 429 is waited out and asked again. */
  call(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  /** Signed platform events posted to the server's platform webhook (answered 200). */
  webhook(events: PlatformEvent[]): Promise<void>;
  /** A `crm worker` process, killed at the end if the test has not (`env` over the rig's, e.g. another DATABASE_URL). */
  startWorker(env?: Record<string, string>): Promise<ServerProcess>;
  /** A new organization, its API key and (given its fields) a messaging account with the cloud platform's number. */
  organization(
    name: string,
    account?: Record<string, unknown>,
  ): Promise<{ org: { id: string }; key: string; account: { id: string } | undefined }>;
  /** A UTILITY template with one body variable, approved by the platform's webhook. */
  approvedTemplate(key: string, name: string, text: string): Promise<{ id: string }>;
  close(): Promise<void>;
}

export async function startCrashRig(options: {
  env: Record<string, string>;
  cloud?: { secret: string; businessAccountId: string; phoneNumberId: string; phone: string };
}): Promise<CrashRig> {
  const { cloud } = options;
  const fake = cloud ? await startFakeCloudApi() : undefined;
  const database = await createPostgresDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    ADMIN_TOKEN: ADMIN,
    WORKER_POLL_MS: '50',
    LOG_LEVEL: 'info',
    ...(fake && cloud
      ? {
          MESSAGING_PLATFORM: 'cloud',
          CLOUD_API_BASE_URL: fake.baseUrl,
          CLOUD_API_TOKEN: fake.token,
          WEBHOOK_APP_SECRET: cloud.secret,
        }
      : {}),
    ...options.env,
  };
  const processes: ServerProcess[] = [];
  const server = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
  processes.push(server);
  if (fake && cloud) {
    fake.deliverStatusesTo({
      url: `${server.baseUrl}/webhooks/messaging`,
      appSecret: cloud.secret,
      businessAccountId: cloud.businessAccountId,
    });
  }

  async function call(method: string, path: string, body?: unknown, key = ADMIN) {
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${server.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
      } catch (error) {
        // A kept-alive connection the server closed as this request left is reset: a GET may be tried again. A
        // server that died is not: say so, with its last words.
        if (server.child.exitCode !== null || method !== 'GET' || attempt >= 3) {
          throw new Error(
            `${method} ${path}: ${String(error)}; server exit ${server.child.exitCode}\n${server.output().slice(-3000)}`,
          );
        }
        continue;
      }
      // The organization's budget is 20 requests a second: wait out a 429 (nothing was done) and ask again.
      if (response.status === 429) {
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      return { status: response.status, body: (await response.json()) as any };
    }
  }

  async function webhook(events: PlatformEvent[]) {
    if (!cloud) throw new Error('platform webhooks need the cloud rig');
    const { rawBody, signature } = buildSignedWebhook(events, cloud.secret);
    const response = await fetch(`${server.baseUrl}/webhooks/messaging`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body: rawBody,
    });
    if (response.status !== 200) throw new Error(`platform webhook answered ${response.status}`);
  }

  return {
    database,
    server,
    env,
    get fake() {
      if (!fake) throw new Error('the fake Graph API runs only in the cloud rig');
      return fake;
    },
    call,
    webhook,
    async startWorker(overrides = {}) {
      const worker = await startWorkerProcess({ ...env, ...overrides });
      processes.push(worker);
      return worker;
    },
    async organization(name, account) {
      const org = (await call('POST', '/admin/v1/organizations', { name, plan: 'scale' })).body;
      const key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {})).body.key as string;
      if (!account) return { org, key, account: undefined };
      const made = await call('POST', `/admin/v1/organizations/${org.id}/messaging-accounts`, {
        ...(cloud
          ? {
              business_account_id: cloud.businessAccountId,
              numbers: [{ phone: cloud.phone, phone_number_id: cloud.phoneNumberId }],
            }
          : {}),
        ...account,
      });
      if (made.status !== 201) throw new Error(`messaging account: ${made.status} ${JSON.stringify(made.body)}`);
      return { org, key, account: made.body };
    },
    async approvedTemplate(key, name, text) {
      if (!cloud) throw new Error('templates are approved through the cloud rig');
      const template = (
        await call(
          'POST',
          '/v1/templates',
          {
            name,
            language: 'en_US',
            category: 'UTILITY',
            components: [{ type: 'BODY', text, example: { body_text: [['1']] } }],
          },
          key,
        )
      ).body;
      await webhook([
        {
          kind: 'template_status',
          businessAccountId: cloud.businessAccountId,
          platformTemplateId: template.platform_template_id,
          templateName: name,
          language: 'en_US',
          event: 'APPROVED',
        },
      ]);
      return template;
    },
    async close() {
      await Promise.all(processes.map((child) => child.stop('SIGKILL')));
      await fake?.close();
      await database.drop();
    },
  };
}

/**
 * The ledger after a fan-out that was interrupted (kills, cuts): no recipient reached the platform twice; each is
 * `sent` with the id of the platform's message exactly when the platform took it, or failed as `handoff_unconfirmed`
 * (never sent, refunded); the platform's late reports of the messages it took have settled (D176) first. Answers
 * how many were sent.
 */
export async function expectEachHandedOffOnce(
  client: pg.Client,
  orgId: string,
  accepted: FakeCloudApi['accepted'],
  total: number,
): Promise<number> {
  const references = accepted.map((message) => message.callbackData as string);
  expect(new Set(references).size).toBe(references.length);
  const atPlatform = new Map(accepted.map((message) => [message.callbackData, message.id]));
  await waitUntil(
    async () =>
      (
        await client.query(
          `select count(*)::int as n from broadcast_recipients where org_id = $1 and status = 'failed'
             and (org_id || '|' || broadcast_id || '|' || position) = any($2::text[])`,
          [orgId, [...atPlatform.keys()]],
        )
      ).rows[0].n === 0,
    { timeoutMs: 60_000, intervalMs: 500, message: 'the reports of every message the platform took' },
  );
  const rows = (
    await client.query(
      `select broadcast_id, position, status, platform_message_id, error, charged::float8 as charged
       from broadcast_recipients where org_id = $1`,
      [orgId],
    )
  ).rows as {
    broadcast_id: string;
    position: number;
    status: string;
    platform_message_id: string | null;
    error: string | null;
  }[];
  expect(rows).toHaveLength(total);
  let sent = 0;
  for (const row of rows) {
    const reference = `${orgId}|${row.broadcast_id}|${row.position}`;
    if (row.status === 'sent') {
      sent += 1;
      expect(row.platform_message_id).toBe(atPlatform.get(reference));
    } else {
      expect(row).toMatchObject({ status: 'failed', charged: 0 });
      expect(row.error).toMatch(/^handoff_unconfirmed/);
      expect(atPlatform.has(reference)).toBe(false);
    }
  }
  expect(sent).toBe(references.length);
  return sent;
}

// decisions §15, replies with the broadcasts' guarantees: workers killed with SIGKILL, again and again, while 500
// replies across 50 conversations are handed off, send none twice (counted at the fake Graph API server), lose
// none (each ends `sent`, or `failed` `handoff_unconfirmed` and never reached the platform), keep each
// conversation's order at the platform, and charge only what the platform took. The replies are templates: the
// same queue, marks and reconciler as text and media, through the cloud adapter's template send. The fake platform
// answers each send with a signed `sent` report carrying our callback reference, which settles hand-offs whose
// answer died with a worker.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignedWebhook } from '../../src/messaging/cloud/webhook-builder.ts';
import type { PlatformEvent } from '../../src/messaging/platform.ts';
import { type FakeCloudApi, startFakeCloudApi } from '../fakes/fake-cloud-api.ts';
import { createPostgresDatabase } from '../helpers/database.ts';
import { type ServerProcess, startServer, startWorkerProcess } from '../helpers/process.ts';
import { phones } from '../helpers/sends.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const SECRET = 'reply-crash-secret';
const WABA = '301234567890124';
const PHONE_NUMBER_ID = '401234567890124';
const CONVERSATIONS = 50;
const PER_CONVERSATION = 10;
const TOTAL = CONVERSATIONS * PER_CONVERSATION;

describe.skipIf(!onPostgres)('workers killed while replies are handed off', () => {
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
      FANOUT_RECONCILE_AFTER_MS: '6000',
      WORKER_POLL_MS: '50',
      LOG_LEVEL: 'info',
    };
    server = await startServer(env, ['src/cli/main.ts', 'serve', '--no-worker']);
    processes.push(server);
    fake.deliverStatusesTo({ url: `${server.baseUrl}/webhooks/messaging`, appSecret: SECRET, businessAccountId: WABA });
  });
  afterAll(async () => {
    await Promise.all(processes.map((child) => child.stop('SIGKILL')));
    await fake.close();
    await database.drop();
  });

  const call = async (method: string, path: string, body?: unknown, key = 'secret') => {
    for (;;) {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      // The organization's budget is 20 requests a second: wait out a 429 (nothing was done) and ask again.
      if (response.status === 429) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      return { status: response.status, body: (await response.json()) as any };
    }
  };

  const webhook = async (events: PlatformEvent[]) => {
    const { rawBody, signature } = buildSignedWebhook(events, SECRET);
    const response = await fetch(`${server.baseUrl}/webhooks/messaging`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body: rawBody,
    });
    expect(response.status).toBe(200);
  };

  it('hands each of 500 replies off at most once, loses none and keeps each conversation’s order', async () => {
    const PRICE = 1;
    const BALANCE = 2 * TOTAL;
    const org = (await call('POST', '/admin/v1/organizations', { name: 'Reply crash test', plan: 'scale' })).body;
    const key = (await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, {})).body.key as string;
    const account = (
      await call('POST', `/admin/v1/organizations/${org.id}/messaging-accounts`, {
        business_account_id: WABA,
        balance: BALANCE,
        prices: { UTILITY: PRICE },
        numbers: [{ phone: '+15550100002', phone_number_id: PHONE_NUMBER_ID }],
      })
    ).body;
    const template = (
      await call(
        'POST',
        '/v1/templates',
        {
          name: 'reply_notice',
          language: 'en_US',
          category: 'UTILITY',
          components: [{ type: 'BODY', text: 'Step {{1}}', example: { body_text: [['1']] } }],
        },
        key,
      )
    ).body;
    await webhook([
      {
        kind: 'template_status',
        businessAccountId: WABA,
        platformTemplateId: template.platform_template_id,
        templateName: 'reply_notice',
        language: 'en_US',
        event: 'APPROVED',
      },
    ]);

    // 50 contacts write in: 50 conversations with their window open.
    const contacts = phones(CONVERSATIONS);
    await webhook(
      contacts.map((from, index) => ({
        kind: 'inbound_message' as const,
        businessAccountId: WABA,
        phoneNumberId: PHONE_NUMBER_ID,
        platformMessageId: `wamid.INBOUND${index}`,
        from,
        type: 'text',
        text: 'hello',
        timestamp: new Date(),
      })),
    );
    const conversations = (await call('GET', '/v1/conversations?limit=100', undefined, key)).body.items as any[];
    expect(conversations).toHaveLength(CONVERSATIONS);

    // 10 replies to each, accepted in order per conversation (rounds across the conversations).
    const accepted = new Map<string, string[]>(); // conversation → reply ids in accepted order
    const phoneOf = new Map<string, string>(); // reply id → phone
    for (let step = 0; step < PER_CONVERSATION; step++) {
      await Promise.all(
        conversations.map(async (conversation) => {
          const answered = await call(
            'POST',
            `/v1/conversations/${conversation.id}/messages`,
            { type: 'template', template_id: template.id, variables: { 'body.1': String(step) } },
            key,
          );
          expect(answered.status, JSON.stringify(answered.body)).toBe(202);
          accepted.set(conversation.id, [...(accepted.get(conversation.id) ?? []), answered.body.id]);
          phoneOf.set(answered.body.id, answered.body.phone);
        }),
      );
    }
    expect(phoneOf.size).toBe(TOTAL);

    // A slow platform, so that the kills land while hand-offs are in flight.
    fake.setSendDelay(120);
    const workers = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    processes.push(...workers);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const pendingNow = async () =>
      Number(
        (await client.query('select count(*)::int as n from reply_handoffs where org_id = $1', [org.id])).rows[0].n,
      );
    try {
      let kills = 0;
      let markedAtKills = 0;
      for (let round = 0; round < 8; round++) {
        await new Promise((resolve) => setTimeout(resolve, 300 + Math.floor(Math.random() * 500)));
        if ((await pendingNow()) < TOTAL / 10) break;
        const victim = workers[round % 2] as ServerProcess;
        // Hand-offs in flight (marked, under a live lease) as the kill lands: the ones it may interrupt.
        markedAtKills += Number(
          (
            await client.query(
              `select count(*)::int as n from reply_handoffs where org_id = $1 and state = 'marked' and lease_until > now()`,
              [org.id],
            )
          ).rows[0].n,
        );
        await victim.stop('SIGKILL');
        kills += 1;
        const replacement = await startWorkerProcess(env);
        processes.push(replacement);
        workers[round % 2] = replacement;
      }
      expect(kills).toBeGreaterThanOrEqual(3);
      expect(markedAtKills).toBeGreaterThan(0);

      const deadline = Date.now() + 180_000;
      let pending = TOTAL;
      let sending = TOTAL;
      while (Date.now() < deadline) {
        pending = await pendingNow();
        sending = Number(
          (
            await client.query(
              `select count(*)::int as n from messages where org_id = $1 and direction = 'outbound' and status = 'sending'`,
              [org.id],
            )
          ).rows[0].n,
        );
        if (pending === 0 && sending === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect({ pending, sending }, workers[0]?.output().slice(-3000)).toEqual({ pending: 0, sending: 0 });

      // The platform's log: no reply twice.
      const references = fake.accepted.map((message) => message.callbackData as string);
      expect(new Set(references).size).toBe(references.length);
      const atPlatform = new Map(fake.accepted.map((message) => [message.callbackData, message.id]));

      // Every reply accounted for: sent exactly when the platform took it (with that id), or failed as an
      // unconfirmed hand-off that never reached it.
      const rows = (
        await client.query(
          `select id, status, platform_message_id, error from messages
           where org_id = $1 and direction = 'outbound'`,
          [org.id],
        )
      ).rows as { id: string; status: string; platform_message_id: string | null; error: string | null }[];
      expect(rows).toHaveLength(TOTAL);
      let sent = 0;
      for (const row of rows) {
        const reference = `reply|${org.id}|${row.id}`;
        if (row.status === 'sent') {
          sent += 1;
          expect(row.platform_message_id).toBe(atPlatform.get(reference));
        } else {
          expect(row).toMatchObject({ status: 'failed', error: 'handoff_unconfirmed' });
          expect(atPlatform.has(reference)).toBe(false);
        }
      }
      expect(sent).toBe(references.length);
      process.stdout.write(
        `reply crash test: ${kills} kills (${markedAtKills} hand-offs in flight as they landed), ${sent} sent, ` +
          `${TOTAL - sent} handoff_unconfirmed\n`,
      );
      // A kill catches at most one hand-off per conversation in flight.
      expect(TOTAL - sent).toBeLessThanOrEqual(kills * CONVERSATIONS);

      // Each conversation's replies reached the platform in the order they were accepted.
      const platformOrder = fake.accepted.map((message) => (message.callbackData as string).split('|')[2] as string);
      for (const ids of accepted.values()) {
        const reached = new Set(platformOrder);
        const expected = ids.filter((id) => reached.has(id));
        expect(platformOrder.filter((id) => ids.includes(id))).toEqual(expected);
      }

      // Charged once per reply the platform took; unconfirmed ones were given back.
      const balance = await call('GET', `/admin/v1/messaging-accounts/${account.id}`);
      expect(balance.body.balance).toBe(BALANCE - PRICE * sent);
    } finally {
      await client.end();
    }
  }, 420_000);
});

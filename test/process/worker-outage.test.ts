// The worker's connections to PostgreSQL cut in the middle of a fan-out and of webhook deliveries (decisions D24): a
// `crm worker` reaches the database through a TCP proxy that resets every connection a few times and then refuses
// new ones for two seconds. The worker never exits; when the database is back it finishes every broadcast, hands no
// recipient to the platform twice, charges each message once, and delivers every `broadcast.finished` event.
// (test/process/database-outage.test.ts cuts the API's connections; fanout-crash and webhooks-crash kill workers.)
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrashRig, expectEachHandedOffOnce, startCrashRig } from '../helpers/crash-rig.ts';
import { phones } from '../helpers/sends.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { delay, waitUntil } from '../helpers/wait.ts';
import { startWebhookReceiver, verify, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const BROADCASTS = 6;
const PER_BROADCAST = 50;
const TOTAL = BROADCASTS * PER_BROADCAST;

describe.skipIf(!onPostgres)('a worker whose database connections are cut', () => {
  let rig: CrashRig;
  let proxy: TcpProxy;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    rig = await startCrashRig({
      cloud: {
        secret: 'outage-test-secret',
        businessAccountId: '301234567890124',
        phoneNumberId: '401234567890124',
        phone: '+15550100002',
      },
      env: {
        FANOUT_LEASE_MS: '1500',
        FANOUT_BATCH_SIZE: '50',
        FANOUT_RECONCILE_AFTER_MS: '6000',
        FANOUT_PER_NUMBER_PER_SECOND: '0',
        WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_LEASE_MS: '1500',
      },
    });
    proxy = await startTcpProxy({ port: Number(new URL(rig.database.url).port || 5432) });
  });
  afterAll(async () => {
    await rig?.close();
    await proxy?.close();
    await receiver?.close();
  });

  it('finishes every broadcast and delivers every event once the database is back, nothing twice', async () => {
    const { call, fake } = rig;
    const BALANCE = 2 * TOTAL;
    const { org, key, account } = await rig.organization('Outage', { balance: BALANCE, messaging_limit_24h: TOTAL });
    const endpoint = (
      await call(
        'POST',
        '/v1/webhook-endpoints',
        { url: `${receiver.baseUrl}/crm`, events: ['broadcast.finished'] },
        key,
      )
    ).body;
    expect(endpoint.secret).toMatch(/^whsec_/);
    const template = await rig.approvedTemplate(key, 'outage_notice', 'Code {{1}}');
    const broadcasts: string[] = [];
    for (let i = 0; i < BROADCASTS; i++) {
      const sent = await call(
        'POST',
        `/v1/templates/${template.id}/send`,
        { recipients: phones(PER_BROADCAST).map((phone) => ({ phone, variables: { 'body.1': String(i) } })) },
        key,
      );
      expect(sent.status).toBe(202);
      broadcasts.push(sent.body.id);
    }

    // A slow platform, so that the cuts land while hand-offs are in flight.
    fake.setSendDelay(100);
    const worker = await rig.startWorker({ DATABASE_URL: proxy.url(rig.database.url) });
    await waitUntil(() => fake.accepted.length >= 40, { timeoutMs: 120_000, message: 'the first hand-offs' });

    // Three resets of every open connection, then two seconds without the database at all.
    for (let cut = 0; cut < 3; cut++) {
      const before = fake.accepted.length;
      proxy.cut();
      await waitUntil(() => fake.accepted.length >= before + 20, {
        timeoutMs: 120_000,
        message: `work after cut ${cut}`,
      });
    }
    const acceptedBeforeRefusal = fake.accepted.length;
    expect(acceptedBeforeRefusal).toBeLessThan(TOTAL);
    proxy.refuse();
    await delay(2000); // the outage's length: what is asserted is what happens after it
    proxy.restore();

    const client = new pg.Client({ connectionString: rig.database.url });
    await client.connect();
    try {
      const pendingNow = async () =>
        (
          await client.query(
            `select count(*)::int as n from broadcast_recipients where org_id = $1 and status not in ('sent', 'failed')`,
            [org.id],
          )
        ).rows[0].n as number;
      await waitUntil(async () => (await pendingNow()) === 0, {
        timeoutMs: 240_000,
        intervalMs: 250,
        message: `every recipient settled\n${worker.output().slice(-3000)}`,
      });
      expect(worker.child.exitCode).toBeNull();
      expect(fake.accepted.length).toBeGreaterThan(acceptedBeforeRefusal);

      // No recipient reached the platform twice, each is sent or failed unconfirmed, never both (D176).
      const sent = await expectEachHandedOffOnce(client, org.id, fake.accepted, TOTAL);
      const accountNow = await call('GET', `/admin/v1/messaging-accounts/${account?.id}`);
      expect(accountNow.body.balance).toBe(BALANCE - sent);
    } finally {
      await client.end();
    }

    // Every broadcast finished, and its event reached the endpoint (at least once; deduplicated by webhook-id).
    const finished = new Set<string>();
    await waitUntil(
      () => {
        for (const request of receiver.at('/crm')) finished.add(verify(endpoint.secret, request).data.id);
        return finished.size === BROADCASTS;
      },
      { timeoutMs: 120_000, intervalMs: 200, message: 'every broadcast.finished delivered' },
    );
    expect([...finished].sort()).toEqual([...broadcasts].sort());
    expect(worker.child.exitCode).toBeNull();
    expect(worker.output()).not.toMatch(/Unhandled|uncaught/i);
  }, 420_000);
});

// decisions §15, replies with the broadcasts' guarantees: workers killed with SIGKILL, again and again, while 500
// replies across 50 conversations are handed off, send none twice (counted at the fake Graph API server), lose
// none (each ends `sent`, or `failed` `handoff_unconfirmed` and never reached the platform), keep each
// conversation's order at the platform, and charge only what the platform took. Half the replies are text (free
// inside the window), half templates (charged): one queue, marks and reconciler for both, through the cloud
// adapter's text and template sends. The fake platform answers each send with a signed `sent` report carrying our
// callback reference, which settles hand-offs whose answer died with a worker.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrashRig, startCrashRig } from '../helpers/crash-rig.ts';
import type { ServerProcess } from '../helpers/process.ts';
import { phones } from '../helpers/sends.ts';

const onPostgres = process.env.TEST_DB === 'postgres';
const WABA = '301234567890124';
const PHONE_NUMBER_ID = '401234567890124';
const CONVERSATIONS = 50;
const PER_CONVERSATION = 10;
const TOTAL = CONVERSATIONS * PER_CONVERSATION;

describe.skipIf(!onPostgres)('workers killed while replies are handed off', () => {
  let rig: CrashRig;

  beforeAll(async () => {
    rig = await startCrashRig({
      cloud: {
        secret: 'reply-crash-secret',
        businessAccountId: WABA,
        phoneNumberId: PHONE_NUMBER_ID,
        phone: '+15550100002',
      },
      env: { FANOUT_LEASE_MS: '6000', FANOUT_RECONCILE_AFTER_MS: '12000' },
    });
  });
  afterAll(() => rig?.close());

  it('hands each of 500 replies off at most once, loses none and keeps each conversation’s order', async () => {
    const PRICE = 1;
    const BALANCE = 2 * TOTAL;
    const { call, fake, webhook } = rig;
    const { org, key, account } = await rig.organization('Reply crash test', {
      balance: BALANCE,
      prices: { UTILITY: PRICE },
    });
    const template = await rig.approvedTemplate(key, 'reply_notice', 'Step {{1}}');

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
    const kindOf = new Map<string, string>(); // reply id → text or template
    for (let step = 0; step < PER_CONVERSATION; step++) {
      await Promise.all(
        conversations.map(async (conversation) => {
          // Text and template replies alternate within each conversation: one queue, one order for both kinds.
          const body =
            step % 2 === 0
              ? { type: 'text', text: `Step ${step}` }
              : { type: 'template', template_id: template.id, variables: { 'body.1': String(step) } };
          const answered = await call('POST', `/v1/conversations/${conversation.id}/messages`, body, key);
          expect(answered.status, JSON.stringify(answered.body)).toBe(202);
          accepted.set(conversation.id, [...(accepted.get(conversation.id) ?? []), answered.body.id]);
          phoneOf.set(answered.body.id, answered.body.phone);
          kindOf.set(answered.body.id, body.type);
        }),
      );
    }
    expect(phoneOf.size).toBe(TOTAL);

    // A slow platform (each conversation's 10 replies take 20 s or more), so that three kills or more land while
    // hand-offs are in flight, however long a worker takes to start on a loaded machine.
    fake.setSendDelay(2000);
    const workers = await Promise.all([rig.startWorker(), rig.startWorker()]);
    const client = new pg.Client({ connectionString: rig.database.url });
    await client.connect();
    const pendingNow = async () =>
      Number(
        // decisions D176: an `unconfirmed` row is settled (failed), kept only for a late report.
        (
          await client.query(
            `select count(*)::int as n from reply_handoffs where org_id = $1 and state <> 'unconfirmed'`,
            [org.id],
          )
        ).rows[0].n,
      );
    try {
      let kills = 0;
      let markedAtKills = 0;
      for (let round = 0; round < 8; round++) {
        await new Promise((resolve) => setTimeout(resolve, 300 + Math.floor(Math.random() * 500)));
        if ((await pendingNow()) < TOTAL / 25) break;
        const victim = workers[round % 2] as ServerProcess;
        // Hand-offs in flight (marked, under a live lease) as the kill lands: the ones it may interrupt. On a loaded
        // machine a restarted worker can take longer to start than the pause above, so the kill waits (up to 5 s)
        // until some are in flight.
        const marked = async () =>
          Number(
            (
              await client.query(
                `select count(*)::int as n from reply_handoffs where org_id = $1 and state = 'marked' and lease_until > now()`,
                [org.id],
              )
            ).rows[0].n,
          );
        let inFlight = await marked();
        for (let waited = 0; inFlight === 0 && waited < 5000; waited += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          inFlight = await marked();
        }
        markedAtKills += inFlight;
        await victim.stop('SIGKILL');
        kills += 1;
        workers[round % 2] = await rig.startWorker();
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
      const typeAtPlatform = new Map(fake.accepted.map((message) => [message.callbackData, message.type]));
      let sent = 0;
      const sentOf = { text: 0, template: 0 } as Record<string, number>;
      for (const row of rows) {
        const reference = `reply|${org.id}|${row.id}`;
        if (row.status === 'sent') {
          sent += 1;
          sentOf[kindOf.get(row.id) as string] = (sentOf[kindOf.get(row.id) as string] ?? 0) + 1;
          expect(row.platform_message_id).toBe(atPlatform.get(reference));
          // The platform took it as the kind of reply it was accepted as.
          expect(typeAtPlatform.get(reference)).toBe(kindOf.get(row.id));
        } else {
          expect(row).toMatchObject({ status: 'failed', error: 'handoff_unconfirmed' });
          expect(atPlatform.has(reference)).toBe(false);
        }
      }
      expect(sent).toBe(references.length);
      // Both kinds went through the kills: most of each reached the platform.
      expect(sentOf.text).toBeGreaterThan(TOTAL / 4);
      expect(sentOf.template).toBeGreaterThan(TOTAL / 4);
      process.stdout.write(
        `reply crash test: ${kills} kills (${markedAtKills} hand-offs in flight as they landed), ${sent} sent ` +
          `(${sentOf.text} text, ${sentOf.template} template), ${TOTAL - sent} handoff_unconfirmed\n`,
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

      // Charged once per template reply the platform took (text inside the window is free); unconfirmed ones were
      // given back.
      const balance = await call('GET', `/admin/v1/messaging-accounts/${account?.id}`);
      expect(balance.body.balance).toBe(BALANCE - PRICE * (sentOf.template ?? 0));
    } finally {
      await client.end();
    }
  }, 420_000);
});

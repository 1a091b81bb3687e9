// D74, D75: a status report and a group's record that deadlock both complete, through the one retry helper
// (src/db/retry-transaction.ts). PostgreSQL only (PGlite has one connection: nothing can wait on anything).
// The cycle is forced, not hoped for: test-only triggers take advisory locks so that the report holds lock A and then
// waits for the recipient row, while the record holds the recipient row and waits for lock A. PostgreSQL aborts
// one of them as the deadlock's victim; the helper runs the victim's transaction again.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWebhookPayload } from '../../../src/messaging/cloud/webhook-builder.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { claimRecipients } from '../../../src/modules/recipients/recipient-claim.ts';
import { recordOutcomes } from '../../../src/modules/recipients/recipient-handoffs.ts';
import { callbackReference } from '../../../src/modules/recipients/recipient-rules.ts';
import { controlClient, onCitus, testDatabaseKind } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';
import { waitForValue, waitUntil } from '../../helpers/wait.ts';

const REPORT_HOLDS = 919_001; // taken by the report's transaction, wanted by the record's
const BARRIER = 919_002; // held by the test until the record holds the recipient row

const postgres = testDatabaseKind() === 'postgres';
let h: Harness;
let control: pg.Client;

beforeAll(async () => {
  if (!postgres) return;
  h = await startHarness({ unlimited: true });
  control = await controlClient(h.database);
});
afterAll(async () => {
  if (!postgres) return;
  await control.end();
  await h.close();
});

/** Waits until some session waits for the advisory lock `key`. */
async function untilWaitingFor(key: number) {
  await waitUntil(
    async () => {
      const { rows } = await control.query(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and not granted`,
        [key],
      );
      return rows[0].n > 0;
    },
    { intervalMs: 10, message: `a session waiting for advisory lock ${key}` },
  );
}

async function deadlocksSoFar(): Promise<number> {
  await control.query('select pg_stat_clear_snapshot()');
  const { rows } = await control.query(
    'select deadlocks::int as n from pg_stat_database where datname = current_database()',
  );
  return rows[0].n;
}

// The barrier that holds the report is a trigger, which Citus refuses on a distributed table: one PostgreSQL only.
describe.skipIf(!postgres || onCitus)('a status report against a group’s record', () => {
  it('deadlocks for real, and both complete', async () => {
    const { org, key, account, template } = await sender(h, { balance: 100 });
    const [phone] = phones(1) as [string];
    const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor([phone]) },
    });
    expect(sent.status).toBe(202);
    const claimed = await claimRecipients(h.database.db, {
      moves: broadcastMoves,
      limit: 10,
      leaseMs: 60_000,
      token: randomUUID(),
      perNumberPerSecond: null,
      markFirst: 10,
    });
    expect(claimed).toHaveLength(1);
    const row = claimed[0] as (typeof claimed)[number];
    const platformMessageId = `wamid.deadlock.${randomUUID()}`;

    // The barrier, in this test's database only and for this organization only.
    await control.query(`
      create function test_report_holds() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(${REPORT_HOLDS});
        perform pg_advisory_xact_lock_shared(${BARRIER});
        return null;
      end $$;
      create trigger test_report_holds after insert on processed_webhook_events
        for each row when (new.org_id = '${org.id}') execute function test_report_holds();
      create function test_record_wants() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(${REPORT_HOLDS});
        return new;
      end $$;
      create trigger test_record_wants before update on broadcast_recipients
        for each row when (new.org_id = '${org.id}' and old.status = 'sending' and new.status = 'sent')
        execute function test_record_wants();
    `);
    try {
      const before = await deadlocksSoFar();
      await control.query('select pg_advisory_lock($1)', [BARRIER]);
      // 1. The report takes REPORT_HOLDS (its first statement), then waits at the barrier.
      const number = account.numbers[0];
      const report = h.webhook(
        buildWebhookPayload([
          {
            kind: 'message_status',
            businessAccountId: account.business_account_id,
            phoneNumberId: number.phone_number_id,
            platformMessageId,
            status: 'delivered',
            recipient: phone,
            timestamp: new Date(),
            callbackData: callbackReference(org.id, row.broadcast_id, row.position),
          },
        ]),
      );
      await untilWaitingFor(BARRIER);
      // 2. The record locks the recipient row (its BEFORE UPDATE trigger fires on the locked row), then waits for
      // REPORT_HOLDS.
      const record = recordOutcomes(h.database.db, broadcastMoves, [
        { row, verdict: { kind: 'accepted', platformMessageId } },
      ]);
      await untilWaitingFor(REPORT_HOLDS);
      // 3. The report goes on to lock the recipient row the record holds: a cycle.
      await control.query('select pg_advisory_unlock($1)', [BARRIER]);

      const [reported] = await Promise.all([report, record]);
      expect(reported.status).toBe(200);

      // The server counts the deadlock in its statistics a moment after the victim's error.
      await waitForValue(deadlocksSoFar, (deadlocks) => deadlocks > before, { message: 'the deadlock counted' });
    } finally {
      await control.query(`
        drop trigger test_report_holds on processed_webhook_events;
        drop function test_report_holds();
        drop trigger test_record_wants on broadcast_recipients;
        drop function test_record_wants();
      `);
    }

    // Both changes are there: the report's delivery and the record's message id, the event recorded once.
    const recipient = await h.database.db
      .selectFrom('broadcast_recipients')
      .select(['status', 'platform_message_id', 'delivered_at', 'sent_at'])
      .where('org_id', '=', org.id)
      .where('broadcast_id', '=', row.broadcast_id)
      .executeTakeFirstOrThrow();
    expect(recipient).toMatchObject({ status: 'delivered', platform_message_id: platformMessageId });
    expect(recipient.delivered_at).not.toBeNull();
    expect(recipient.sent_at).not.toBeNull();
    const processed = await h.database.db
      .selectFrom('processed_webhook_events')
      .select('kind')
      .where('org_id', '=', org.id)
      .where('kind', '=', 'message_status')
      .execute();
    expect(processed).toHaveLength(1);
    const broadcast = await h.api('GET', `/v1/broadcasts/${row.broadcast_id}`, { key });
    expect(broadcast.body).toMatchObject({ status: 'completed', sent: 1, failed: 0, pending: 0 });
  });
});

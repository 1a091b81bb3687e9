// A batch's groups go one after another: the claim marks the first, each group's record (one transaction) marks the
// next. These tests drive small groups through the edge cases of that one transaction: refusals and acceptances in
// one group, answers that leave the outcome unknown, a broadcast cancelled between two groups, the balance running
// out within a batch, and the per-number cap shared by two workers claiming at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessagingPlatform } from '../../../src/messaging/platform.ts';
import { broadcastMoves } from '../../../src/modules/broadcasts/broadcasts.repo.ts';
import { createFanout } from '../../../src/worker/fanout.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true, fanout: { batchSize: 10, groupSize: 2, concurrency: 2 } });
});
afterAll(async () => {
  await h.app.close();
});

const send = (key: string, templateId: string, list: string[]) =>
  h.api('POST', `/v1/templates/${templateId}/send`, { key, body: { recipients: recipientsFor(list) } });

const rowsOf = (orgId: string, broadcastId: string) =>
  h.database.db
    .selectFrom('broadcast_recipients')
    .select(['position', 'status', 'handoff_started_at', 'charged', 'lease_token'])
    .where('org_id', '=', orgId)
    .where('broadcast_id', '=', broadcastId)
    .orderBy('position')
    .execute();

/** A fan-out on the harness's database whose platform runs `before` ahead of each send. */
function fanoutWith(before: (call: number) => Promise<void>, wrap?: Partial<MessagingPlatform>) {
  const platform = h.messaging.platform;
  let calls = 0;
  return createFanout({
    moves: broadcastMoves,
    db: h.database.db,
    log: h.app.log,
    options: { batchSize: 10, groupSize: 2, concurrency: 2, perNumberPerSecond: null },
    platform: {
      ...platform,
      sendTemplate: async (message) => {
        calls += 1;
        await before(calls);
        return (wrap?.sendTemplate ?? platform.sendTemplate)(message);
      },
    },
  });
}

describe('a batch handed off group by group', () => {
  it('records refusals and acceptances of one group together, marks each next group, finishes once', async () => {
    const { org, key, account, template } = await sender(h, { balance: 100 });
    const list = [...phones(2), '+15557770404', ...phones(1), '+15557770500', ...phones(2)];
    const response = await send(key, template.id, list);
    expect(response.status).toBe(202);
    expect(await h.fanout.drain()).toBe(7);
    const rows = await rowsOf(org.id, response.body.id);
    expect(rows.map((row) => row.status)).toEqual(['sent', 'sent', 'failed', 'sent', 'failed', 'sent', 'sent']);
    // Every row was marked before it was sent, and none is left held.
    expect(rows.every((row) => row.handoff_started_at !== null)).toBe(true);
    expect(rows.filter((row) => row.status === 'sent').every((row) => Number(row.charged) === 1)).toBe(true);
    expect(rows.filter((row) => row.status === 'failed').every((row) => Number(row.charged) === 0)).toBe(true);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(95);
    const broadcast = (await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body;
    expect(broadcast).toMatchObject({ status: 'completed', sent: 5, failed: 2, pending: 0 });
    const messages = await h.database.db
      .selectFrom('messages')
      .select(['status'])
      .where('org_id', '=', org.id)
      .execute();
    expect(messages).toHaveLength(5);
    const contacts = await h.database.db
      .selectFrom('contacts')
      .select(['phone', 'messaging_status', 'last_contacted_at'])
      .where('org_id', '=', org.id)
      .execute();
    expect(contacts.find((row) => row.phone === '+15557770404')?.messaging_status).toBe('unavailable');
    expect(contacts.filter((row) => row.messaging_status === 'verified')).toHaveLength(5);
  });

  it('leaves uncertain answers marked and held, records the rest of the group, and goes on to the next group', async () => {
    const { org, key, template } = await sender(h, { balance: 100 });
    const response = await send(key, template.id, phones(4));
    const fanout = fanoutWith(async () => {}, {
      sendTemplate: async (message) => {
        if (message.callbackData?.endsWith('|1')) throw new Error('connection reset');
        return h.messaging.platform.sendTemplate(message);
      },
    });
    expect(await fanout.runOnce()).toBe(4);
    const rows = await rowsOf(org.id, response.body.id);
    expect(rows.map((row) => row.status)).toEqual(['sent', 'sending', 'sent', 'sent']);
    // The unknown one keeps its mark and its reservation: never sent again, settled by a report or the reconciler.
    expect(rows[1]).toMatchObject({ charged: 1 });
    expect(rows[1]?.handoff_started_at).not.toBeNull();
    expect(await h.fanout.runOnce()).toBe(0);
  });

  it('does not mark the next group of a broadcast cancelled meanwhile: its rows are released and refunded', async () => {
    const { org, key, account, template } = await sender(h, { balance: 100 });
    const response = await send(key, template.id, phones(6));
    const fanout = fanoutWith(async (call) => {
      if (call === 1) {
        const cancel = await h.api('POST', `/v1/broadcasts/${response.body.id}/cancel`, { key });
        expect(cancel.status).toBe(200);
      }
    });
    expect(await fanout.runOnce()).toBe(6);
    const rows = await rowsOf(org.id, response.body.id);
    // The first group was marked by the claim and sent; the next ones were never marked.
    expect(rows.map((row) => row.status)).toEqual(['sent', 'sent', 'cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(rows.slice(2).every((row) => row.handoff_started_at === null && Number(row.charged) === 0)).toBe(true);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(98);
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body.status).toBe('cancelled');
  });

  it('stops a broadcast whose balance runs out within a batch: paid rows go out group by group, the rest wait', async () => {
    const { org, key, account, template } = await sender(h, { balance: 5 });
    const response = await send(key, template.id, phones(8));
    expect(await h.fanout.drain()).toBe(5);
    const rows = await rowsOf(org.id, response.body.id);
    expect(rows.filter((row) => row.status === 'sent')).toHaveLength(5);
    expect(rows.filter((row) => row.status === 'queued')).toHaveLength(3);
    expect((await h.admin('GET', `/messaging-accounts/${account.id}`)).body.balance).toBe(0);
    expect((await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key })).body).toMatchObject({
      status: 'stopped_low_balance',
      sent: 5,
      pending: 3,
    });
  });

  it('keeps the per-number cap exact when two workers claim at once', async () => {
    const workers = [0, 1].map(() =>
      createFanout({
        moves: broadcastMoves,
        db: h.database.db,
        log: h.app.log,
        platform: h.messaging.platform,
        options: { batchSize: 10, groupSize: 2, concurrency: 2, perNumberPerSecond: 5 },
      }),
    );
    const { org, key, template } = await sender(h);
    await send(key, template.id, phones(40));
    await Promise.all(workers.flatMap((worker) => [worker.runOnce(), worker.runOnce()]));
    const windows = await h.database.db
      .selectFrom('channel_send_windows')
      .select(['window_start', 'count'])
      .where('org_id', '=', org.id)
      .execute();
    const sent = await h.database.db
      .selectFrom('broadcast_recipients')
      .select((eb) => [eb.fn.countAll<number>().as('n')])
      .where('org_id', '=', org.id)
      .where('status', '=', 'sent')
      .executeTakeFirstOrThrow();
    expect(Math.max(...windows.map((window) => window.count))).toBeLessThanOrEqual(5);
    expect(Number(sent.n)).toBe(windows.reduce((sum, window) => sum + window.count, 0));
    expect(Number(sent.n)).toBeLessThanOrEqual(5 * windows.length);
  });
});

// D183: the account row's lock is held by whatever charges the balance (every fan-out claim of the account, a
// template reply); the 24-hour window has a lock of its own. A send, an audience broadcast's 202 and its chunks take
// room in the window without waiting for a claim, and the window still lets no two admissions take the same room.
// PostgreSQL only (PGlite has one connection: nothing can hold a lock while another waits).
import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  controlClient,
  testDatabaseKind,
  untilASessionWaitsForALock,
  withoutWaitingForALock,
} from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, recipientsFor, sender } from '../../helpers/sends.ts';

const postgres = testDatabaseKind() === 'postgres';
let h: Harness;
let control: pg.Client;

beforeAll(async () => {
  if (!postgres) return;
  h = await startHarness({ unlimited: true, audienceChunk: 2 });
  control = await controlClient(h.database);
});
afterAll(async () => {
  if (!postgres) return;
  await control.end();
  await h.close();
});

/**
 * Runs `work` while another session holds the account row as a fan-out claim does (FOR UPDATE, uncommitted). The
 * holder names the organization as the product's statements do (D317): on Citus a `FOR UPDATE` must reach one shard.
 */
async function whileAccountLocked<T>(account: { id: string; org_id: string }, work: () => Promise<T>): Promise<T> {
  await control.query('begin');
  try {
    const locked = await control.query(
      'select balance from messaging_accounts where org_id = $2 and id = $1 for update',
      [account.id, account.org_id],
    );
    expect(locked.rowCount).toBe(1);
    return await withoutWaitingForALock(control, work(), 'the work (for the account row’s lock)');
  } finally {
    await control.query('rollback');
  }
}

/**
 * Runs the fan-out while another session holds the account row with `statement` (uncommitted): the claim must wait
 * for it; the session then ends with `end`, and the fan-out's count of handled rows is answered.
 */
async function drainWhileHeld(
  statement: string,
  account: { id: string; org_id: string },
  end: 'commit' | 'rollback',
): Promise<number> {
  await control.query('begin');
  let claiming: Promise<number> | undefined;
  try {
    await control.query(statement, [account.id, account.org_id]);
    let claimed = false;
    claiming = h.fanout.drain().finally(() => {
      claimed = true;
    });
    await untilASessionWaitsForALock(control, 'the claim waiting for the account row');
    expect(claimed).toBe(false);
  } finally {
    await control.query(end);
  }
  return claiming;
}

/** An account with `balance` and a send of `count` new phones, accepted (202) and queued. */
async function queuedSend(balance: number, count: number) {
  const setup = await sender(h, { balance });
  const sent = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
    key: setup.key,
    body: { recipients: recipientsFor(phones(count)) },
  });
  expect(sent.status).toBe(202);
  return { setup, sent };
}

async function contacts(key: string, list: string[]) {
  for (const phone of list) expect((await h.api('POST', '/v1/contacts', { key, body: { phone } })).status).toBe(201);
}

describe.skipIf(!postgres)('the account row and the 24-hour window', () => {
  it('admits a send and an audience broadcast, and adds its recipients, while a claim holds the account', async () => {
    const setup = await sender(h, { balance: 100 });
    await contacts(setup.key, phones(5));
    const { sent, created, added } = await whileAccountLocked(setup.account, async () => {
      const sent = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
        key: setup.key,
        body: { recipients: recipientsFor(phones(2)) },
      });
      const created = await h.api('POST', '/v1/broadcasts', {
        key: setup.key,
        body: { template_id: setup.template.id, audience: {}, variables: { 'body.1': '7' } },
      });
      const added = await h.audiences.drain();
      return { sent, created, added };
    });
    expect(sent.status).toBe(202);
    expect(created.status).toBe(202);
    expect(added).toBeGreaterThan(0);
    // The 5 contacts and the 2 the send created are the snapshot, added in chunks of 2 without the account lock.
    const broadcast = (await h.api('GET', `/v1/broadcasts/${created.body.id}`, { key: setup.key })).body;
    expect(broadcast).toMatchObject({ requested: 7, status: 'in_progress' });
    await h.fanout.drain();
    expect((await h.api('GET', `/v1/broadcasts/${created.body.id}`, { key: setup.key })).body).toMatchObject({
      sent: 7,
      status: 'completed',
    });
  });

  it('a claim, which charges the balance, still waits for the account row', async () => {
    const { setup, sent } = await queuedSend(100, 1);
    await drainWhileHeld(
      'select 1 from messaging_accounts where org_id = $2 and id = $1 for update',
      setup.account,
      'rollback',
    );
    expect((await h.api('GET', `/v1/broadcasts/${sent.body.id}`, { key: setup.key })).body).toMatchObject({ sent: 1 });
  });

  it('D193: a claim whose balance was spent after its unlocked read charges under the lock, and stops', async () => {
    const { setup, sent } = await queuedSend(1, 1);
    // Another writer spends the balance and has not committed: the claim reads 1 (committed), leases its row and
    // waits at its charge; when the writer commits, the charge finds 0 and the claim runs again under the lock.
    const handled = await drainWhileHeld(
      'update messaging_accounts set balance = 0 where org_id = $2 and id = $1',
      setup.account,
      'commit',
    );
    expect(handled).toBe(0);
    expect((await h.api('GET', `/v1/broadcasts/${sent.body.id}`, { key: setup.key })).body).toMatchObject({
      status: 'stopped_low_balance',
      sent: 0,
      pending: 1,
    });
    expect((await h.admin('GET', `/messaging-accounts/${setup.account.id}`)).body.balance).toBe(0);
  });

  it('D193: two workers claiming one account’s broadcast spend its balance exactly', async () => {
    const { setup, sent } = await queuedSend(25, 60);
    const second = await startHarness({ unlimited: true, database: h.database, fanout: { batchSize: 4 } });
    try {
      const handled = await Promise.all([h.fanout.drain(), second.fanout.drain(), h.fanout.drain()]);
      expect(handled.reduce((sum, n) => sum + n, 0)).toBe(25);
    } finally {
      await second.app.close();
    }
    expect((await h.api('GET', `/v1/broadcasts/${sent.body.id}`, { key: setup.key })).body).toMatchObject({
      status: 'stopped_low_balance',
      sent: 25,
      pending: 35,
    });
    expect((await h.admin('GET', `/messaging-accounts/${setup.account.id}`)).body.balance).toBe(0);
  });

  it('an audience chunk and sends racing for the last room of the window take it once', async () => {
    const setup = await sender(h, { balance: 1000, limit: 6 });
    const people = phones(6);
    await contacts(setup.key, people);
    const created = await h.api('POST', '/v1/broadcasts', {
      key: setup.key,
      body: { template_id: setup.template.id, audience: {}, variables: { 'body.1': '7' } },
    });
    expect(created.status).toBe(202);
    // The chunks (2 contacts each) race three sends of 2 new phones each for the 6 places of the day.
    const [, ...sends] = await Promise.all([
      h.audiences.drain(),
      ...[0, 1, 2].map(() =>
        h.api('POST', `/v1/templates/${setup.template.id}/send`, {
          key: setup.key,
          body: { recipients: recipientsFor(phones(2)) },
        }),
      ),
    ]);
    const { rows } = await sql<{ phones: number }>`select count(distinct phone)::int as phones
      from broadcast_recipients where account_id = ${setup.account.id}
        and status not in ('failed', 'cancelled', 'held')`.execute(h.database.db);
    expect(rows[0]?.phones).toBe(6);
    // Whatever the order, the day's 6 places are all taken and no more: the audience holds what found no room.
    expect(sends.every((answer) => answer.status === 202 || answer.status === 409)).toBe(true);
  });
});

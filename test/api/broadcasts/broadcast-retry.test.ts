// POST /v1/broadcasts/{id}/retry (decisions §13): a new broadcast of the failures another try can fix, with their
// stored send components, under the send's rules; one live retry per recipient, also under concurrency.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

/** A sent broadcast of three: one sent, one not on the network (…0404), one failed by the platform (…0500). */
async function failedBroadcast(options: Parameters<typeof sender>[1] = {}) {
  const setup = await sender(h, options);
  const [ok] = phones(1) as [string];
  const notOnNetwork = '+15557770404';
  const broken = '+15557770500';
  const send = await h.api('POST', `/v1/templates/${setup.template.id}/send`, {
    key: setup.key,
    body: {
      recipients: [
        { phone: ok, variables: { 'body.1': 'a' } },
        { phone: notOnNetwork, variables: { 'body.1': 'b' } },
        { phone: broken, variables: { 'body.1': 'c' } },
      ],
    },
  });
  expect(send.status).toBe(202);
  await h.fanout.drain();
  const after = await h.api('GET', `/v1/broadcasts/${send.body.id}`, { key: setup.key });
  expect(after.body).toMatchObject({ sent: 1, failed: 2, retry_of: null });
  return { ...setup, broadcastId: send.body.id as string, broken };
}

const retry = (key: string, broadcastId: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  h.api('POST', `/v1/broadcasts/${broadcastId}/retry`, { key, body, headers });

const rowsOf = (orgId: string, broadcastId: string) =>
  h.database.db
    .selectFrom('broadcast_recipients')
    .select(['position', 'phone', 'status', 'send_components', 'retry_of_broadcast_id', 'retry_of_position'])
    .where('org_id', '=', orgId)
    .where('broadcast_id', '=', broadcastId)
    .orderBy('position')
    .execute();

/** Gives the original's third recipient (…0500, `platform_error`) another failure code. */
const failAs = (orgId: string, broadcastId: string, error: string, errorMessage: string | null = null) =>
  h.database.db
    .updateTable('broadcast_recipients')
    .set({ error, error_message: errorMessage })
    .where('org_id', '=', orgId)
    .where('broadcast_id', '=', broadcastId)
    .where('position', '=', 2)
    .execute();

describe('retrying a broadcast’s failures', () => {
  it('queues only the failures another try can fix, with their original send components', async () => {
    const { org, key, template, broadcastId, broken } = await failedBroadcast();
    const retried = await retry(key, broadcastId);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({
      retry_of: broadcastId,
      template_id: template.id,
      requested: 1,
      pending: 1,
      status: 'in_progress',
    });
    const [original, copy] = [await rowsOf(org.id, broadcastId), await rowsOf(org.id, retried.body.id)];
    expect(copy).toEqual([
      expect.objectContaining({ phone: broken, retry_of_broadcast_id: broadcastId, retry_of_position: 2 }),
    ]);
    expect(copy[0]?.send_components).toEqual(original[2]?.send_components);

    // While the retry's recipient is live, no other retry takes it.
    const second = await retry(key, broadcastId);
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatchObject({ code: 'nothing_to_retry' });
    // The body is optional (decisions §13: `{error_codes?}`): none at all is the same request.
    const bodiless = await h.api('POST', `/v1/broadcasts/${broadcastId}/retry`, { key });
    expect(bodiless.status).toBe(409);
    expect(bodiless.body.detail).toMatchObject({ code: 'nothing_to_retry' });

    // It fails again: free for another retry.
    await h.fanout.drain();
    expect((await h.api('GET', `/v1/broadcasts/${retried.body.id}`, { key })).body).toMatchObject({ failed: 1 });
    expect((await retry(key, broadcastId)).status).toBe(202);
  });

  it('never retries opted_out failures, unavailable contacts, or errors outside error_codes', async () => {
    const { org, key, broadcastId } = await failedBroadcast();
    expect((await retry(key, broadcastId, { error_codes: ['rate_limited'] })).status).toBe(409);
    await failAs(org.id, broadcastId, 'opted_out');
    const refused = await retry(key, broadcastId);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toEqual({ code: 'nothing_to_retry', broadcast_id: broadcastId });
    await failAs(org.id, broadcastId, 'rate_limited', 'too many');
    expect((await retry(key, broadcastId, { error_codes: ['other'] })).status).toBe(409);
    expect((await retry(key, broadcastId, { error_codes: ['rate_limited'] })).status).toBe(202);
  });

  it('leaves handoff_unconfirmed failures out unless error_codes names them (decisions §13)', async () => {
    const { org, key, broadcastId, broken } = await failedBroadcast();
    // The platform took it and its answer was lost: it may have reached the contact.
    await failAs(org.id, broadcastId, 'handoff_unconfirmed', 'the platform never confirmed this message');
    const refused = await retry(key, broadcastId);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toEqual({ code: 'nothing_to_retry', broadcast_id: broadcastId });
    expect((await retry(key, broadcastId, { error_codes: ['platform_error'] })).status).toBe(409);
    const named = await retry(key, broadcastId, { error_codes: ['handoff_unconfirmed'] });
    expect(named.status).toBe(202);
    expect(named.body).toMatchObject({ retry_of: broadcastId, requested: 1 });
    expect(await rowsOf(org.id, named.body.id)).toEqual([
      expect.objectContaining({ phone: broken, retry_of_broadcast_id: broadcastId, retry_of_position: 2 }),
    ]);
  });

  it('shows a stable code with the platform’s words beside it, and error_codes targets platform_error (D134)', async () => {
    const { key, broadcastId, broken } = await failedBroadcast();
    const failed = await h.api('GET', `/v1/broadcasts/${broadcastId}/recipients?status=failed`, { key });
    expect(failed.status).toBe(200);
    expect(failed.body.items).toEqual([
      expect.objectContaining({
        phone: '+15557770404',
        error: 'not_on_network',
        error_message: 'Message undeliverable',
      }),
      expect.objectContaining({ phone: broken, error: 'platform_error', error_message: 'Something went wrong' }),
    ]);
    // The delivered recipient carries neither.
    const sent = await h.api('GET', `/v1/broadcasts/${broadcastId}/recipients?status=sent`, { key });
    expect(sent.body.items[0]).toMatchObject({ error: null, error_message: null });

    expect((await retry(key, broadcastId, { error_codes: ['Something went wrong'] })).status).toBe(409);
    const retried = await retry(key, broadcastId, { error_codes: ['platform_error'] });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ retry_of: broadcastId, requested: 1 });
  });

  it('splits the failures stored before as "code: words" or words alone (migration 0023)', async () => {
    const { org, broadcastId } = await failedBroadcast();
    const { up } = await import('../../../src/db/migrations/0023-failure-codes.ts');
    const set = (position: number, error: string) =>
      h.database.db
        .updateTable('broadcast_recipients')
        .set({ error, error_message: null })
        .where('org_id', '=', org.id)
        .where('broadcast_id', '=', broadcastId)
        .where('position', '=', position)
        .execute();
    await set(1, 'not_on_network: Message undeliverable');
    await set(2, 'Something went wrong');
    await up(h.database.db);
    const rows = await h.database.db
      .selectFrom('broadcast_recipients')
      .select(['position', 'error', 'error_message'])
      .where('org_id', '=', org.id)
      .where('broadcast_id', '=', broadcastId)
      .orderBy('position')
      .execute();
    expect(rows).toEqual([
      { position: 0, error: null, error_message: null },
      { position: 1, error: 'not_on_network', error_message: 'Message undeliverable' },
      { position: 2, error: 'platform_error', error_message: 'Something went wrong' },
    ]);
  });

  it('answers a replay for the same Idempotency-Key, and refuses bad input without writing', async () => {
    const { org, key, broadcastId } = await failedBroadcast();
    const headers = { 'idempotency-key': `retry-${Date.now()}` };
    const first = await retry(key, broadcastId, {}, headers);
    const again = await retry(key, broadcastId, {}, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const reused = await retry(key, broadcastId, { error_codes: ['x'] }, headers);
    expect(reused.status).toBe(422);
    expect(reused.body.detail).toMatchObject({ code: 'idempotency_key_reused' });

    const before = await h.database.db.selectFrom('broadcasts').select('id').where('org_id', '=', org.id).execute();
    expect((await retry(key, broadcastId, { error_codes: 'x' })).status).toBe(422);
    expect((await retry(key, broadcastId, { error_codes: [] })).status).toBe(422);
    expect((await retry(key, 'bc_unknown')).status).toBe(404);
    const other = await h.createOrg();
    expect((await retry(other.key, broadcastId)).status).toBe(404);
    const after = await h.database.db.selectFrom('broadcasts').select('id').where('org_id', '=', org.id).execute();
    expect(after).toHaveLength(before.length);
  });

  it('is refused like a send: template no longer APPROVED, 24-hour limit, balance', async () => {
    // Failed recipients do not count: one message of three is used; two more fill the limit.
    const limited = await failedBroadcast({ limit: 3 });
    const filler = await h.api('POST', `/v1/templates/${limited.template.id}/send`, {
      key: limited.key,
      body: { recipients: phones(2).map((phone) => ({ phone, variables: { 'body.1': 'x' } })) },
    });
    expect(filler.status).toBe(202);
    const full = await retry(limited.key, limited.broadcastId);
    expect(full.status).toBe(409);
    expect(full.body.detail).toMatchObject({ code: 'messaging_limit_exceeded', remaining: 0 });

    const poor = await failedBroadcast({ prices: { UTILITY: 10 } });
    await h.database.db
      .updateTable('messaging_accounts')
      .set({ balance: 5 })
      .where('org_id', '=', poor.org.id)
      .where('id', '=', poor.account.id)
      .execute();
    const broke = await retry(poor.key, poor.broadcastId);
    expect(broke.status).toBe(402);
    expect(broke.body.detail).toMatchObject({ code: 'messaging_insufficient_balance' });

    const paused = await failedBroadcast();
    const review = await h.admin('POST', `/sandbox/templates/${paused.template.id}/review`, { event: 'REJECTED' });
    expect(review.status).toBe(200);
    const refused = await retry(paused.key, paused.broadcastId);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({ code: 'template_not_sendable' });
    expect(await rowsOf(paused.org.id, paused.broadcastId)).toHaveLength(3);
  });

  it('concurrent retries of one broadcast: exactly one takes each recipient', async () => {
    const { org, key, broadcastId } = await failedBroadcast();
    const answers = await Promise.all(Array.from({ length: 6 }, () => retry(key, broadcastId)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409, 409, 409, 409, 409]);
    const live = await h.database.db
      .selectFrom('broadcast_recipients')
      .select('broadcast_id')
      .where('org_id', '=', org.id)
      .where('retry_of_broadcast_id', '=', broadcastId)
      .execute();
    expect(live).toHaveLength(1);
  });

  it('the unique index refuses a second live retry row of one recipient', async () => {
    const { org, key, broadcastId } = await failedBroadcast();
    const retried = await retry(key, broadcastId);
    const [row] = await h.database.db
      .selectFrom('broadcast_recipients')
      .selectAll()
      .where('org_id', '=', org.id)
      .where('broadcast_id', '=', retried.body.id)
      .execute();
    const { position: _position, broadcast_id: _id, attempts: _attempts, ...copy } = row as NonNullable<typeof row>;
    await expect(
      h.database.db
        .insertInto('broadcast_recipients')
        .values({ ...copy, broadcast_id: broadcastId, position: 99, send_components: JSON.stringify({}) })
        .execute(),
    ).rejects.toThrow(/broadcast_recipients_retry_uq/);
  });
});

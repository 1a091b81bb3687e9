// POST /v1/broadcasts (decisions §16): a template to an audience, now or at a time; the start, the recipients added
// in chunks as a snapshot, per-contact placeholders, opt-out, pacing by the 24-hour limit, and the lifecycle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../../src/db/migrate.ts';
import { onCitus } from '../../helpers/database.ts';
import { recordedEvents } from '../../helpers/events.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { approvedTemplate, NAMED_BODY, phones, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  // Chunks of 3 contacts: every audience below of more than 3 is added in several statements.
  h = await startHarness({ unlimited: true, audienceChunk: 3 });
});
afterAll(() => h.close());

const create = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  h.api('POST', '/v1/broadcasts', { key, body, headers });
const read = async (key: string, id: string) => (await h.api('GET', `/v1/broadcasts/${id}`, { key })).body;

/** Contacts through the API, one after another (so their creation order is the list's order). */
async function contacts(key: string, list: Record<string, unknown>[]) {
  const made = [];
  for (const contact of list) {
    const created = await h.api('POST', '/v1/contacts', { key, body: contact });
    expect(created.status).toBe(201);
    made.push(created.body);
  }
  return made;
}

/** An endpoint for every event, so that events are recorded (never delivered here: the deliverer does not run). */
async function subscribe(key: string) {
  const created = await h.api('POST', '/v1/webhook-endpoints', {
    key,
    body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
  });
  expect(created.status).toBe(201);
}

const events = (orgId: string, type: string) => recordedEvents(h, orgId, type);

const invariant = (b: { sent: number; failed: number; pending: number; requested: number }) =>
  expect(b.sent + b.failed + b.pending).toBe(b.requested);

describe('an audience broadcast, at once', () => {
  it('answers 202 preparing with no recipient, then starts once, adds the matching contacts in creation order and completes', async () => {
    const { org, key, template } = await sender(h, { components: NAMED_BODY });
    await subscribe(key);
    const [p1, p2, p3, p4, p5, p6] = phones(6);
    const made = await contacts(key, [
      { first_name: 'Ana', phone: p1, country: 'MX' },
      { first_name: 'Bo', phone: p2, country: 'MX' },
      { first_name: 'Cy', phone: p3, country: 'US' },
      { phone: p4, country: 'MX' }, // no first_name: missing_variables
      { first_name: 'Di', country: 'MX' }, // no phone: not a recipient
      { first_name: 'Ed', phone: p5, country: 'MX' },
      { first_name: 'Fe', phone: p6, country: 'MX' },
    ]);
    const accepted = await create(key, {
      template_id: template.id,
      audience: { country: ['MX'] },
      variables: { 'body.order_id': 'A-7' },
      name: 'Spring sale',
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({
      status: 'preparing',
      requested: 0,
      pending: 0,
      name: 'Spring sale',
      audience: { country: ['MX'] },
      send_at: null,
      started_at: null,
      status_reason: null,
      held_until: null,
    });
    const id = accepted.body.id;
    // Nothing per contact in the request.
    const none = await h.database.db
      .selectFrom('broadcast_recipients')
      .select('position')
      .where('broadcast_id', '=', id)
      .execute();
    expect(none).toHaveLength(0);

    // One step at a time: the start, then chunks of 3; every read keeps the invariant.
    for (let step = 0; step < 20; step++) {
      const done = await h.audiences.runOnce();
      invariant(await read(key, id));
      if (done === 0) break;
    }
    const started = await events(org.id, 'broadcast.started');
    expect(started.map((b) => b.id)).toEqual([id]);
    expect(started[0].status).toBe('preparing');

    await h.fanout.drain();
    const finished = await read(key, id);
    expect(finished).toMatchObject({ status: 'completed', requested: 5, sent: 4, failed: 1, pending: 0 });
    expect(finished.started_at).not.toBeNull();
    const rows = await h.database.db
      .selectFrom('broadcast_recipients')
      .select(['position', 'contact_id', 'status', 'error', 'send_components', 'send_values', 'charged'])
      .where('broadcast_id', '=', id)
      .orderBy('position')
      .execute();
    const mx = made.filter((c) => c.country === 'MX' && c.phone);
    expect(rows.map((row) => row.contact_id)).toEqual(mx.map((c) => c.id));
    const missing = rows.find((row) => row.contact_id === mx[2].id);
    expect(missing).toMatchObject({ status: 'failed', error: 'missing_variables' });
    expect(Number(missing?.charged)).toBe(0);
    // Each recipient keeps its contact's own first name (D219: the values, not a copy of the components; the
    // components the platform gets are checked against the Cloud API in audience-pacing.test.ts).
    expect(rows.map((row) => row.send_values)).toEqual([['Ana'], ['Bo'], [null], ['Ed'], ['Fe']]);
    expect(rows.every((row) => row.send_components === null)).toBe(true);
    expect((await events(org.id, 'broadcast.finished')).map((b) => b.id)).toEqual([id]);
  });

  it('completes with requested 0 when the audience matches nobody; {} is every contact', async () => {
    const { key, template } = await sender(h);
    const empty = await create(key, {
      template_id: template.id,
      audience: { country: ['ZZ'] },
      variables: { 'body.1': 'x' },
    });
    expect(empty.status).toBe(202);
    await h.audiences.drain();
    expect(await read(key, empty.body.id)).toMatchObject({ status: 'completed', requested: 0, pending: 0 });

    await contacts(
      key,
      phones(4).map((phone) => ({ phone })),
    );
    const everyone = await create(key, { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } });
    await h.audiences.drain();
    expect(await read(key, everyone.body.id)).toMatchObject({ status: 'in_progress', requested: 4 });
    await h.fanout.drain();
    expect(await read(key, everyone.body.id)).toMatchObject({ status: 'completed', sent: 4 });
  });

  it('fails opted-out contacts of a MARKETING template with opted_out, uncharged; UTILITY still reaches them', async () => {
    const { org, key, account } = await sender(h, { balance: 100 });
    const marketing = await approvedTemplate(h, key, undefined, { category: 'MARKETING' });
    const [a, b] = phones(2);
    const [, out] = await contacts(key, [{ phone: a }, { phone: b }]);
    expect((await h.api('PATCH', `/v1/contacts/${out.id}`, { key, body: { opted_out: true } })).status).toBe(200);
    const sent = await create(key, { template_id: marketing.id, audience: {}, variables: { 'body.1': 'x' } });
    await h.audiences.drain();
    await h.fanout.drain();
    expect(await read(key, sent.body.id)).toMatchObject({ status: 'completed', requested: 2, sent: 1, failed: 1 });
    const failed = await h.api('GET', `/v1/broadcasts/${sent.body.id}/recipients?status=failed`, { key });
    expect(failed.body.items).toEqual([expect.objectContaining({ contact_id: out.id, error: 'opted_out' })]);
    const balance = await h.database.db
      .selectFrom('messaging_accounts')
      .select('balance')
      .where('org_id', '=', org.id)
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    expect(Number(balance.balance)).toBe(99);
  });
});

describe('the checks before the 202', () => {
  it('validates the audience with the contact list’s filters, at ["body","audience",…]', async () => {
    const { key, template } = await sender(h);
    const body = (audience: unknown) => ({ template_id: template.id, audience, variables: { 'body.1': 'x' } });
    const unknownKey = await create(key, body({ property_filter: ['tier:eq:gold'] }));
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail[0].loc).toEqual(['body', 'audience', 'property_filter', 0]);
    const badEntry = await create(key, body({ property_filter: ['nonsense'] }));
    expect(badEntry.body.detail[0].loc).toEqual(['body', 'audience', 'property_filter', 0]);
    const badCountry = await create(key, body({ country: ['mexico'] }));
    expect(badCountry.status).toBe(422);
    expect(badCountry.body.detail[0].loc).toEqual(['body', 'audience', 'country', 0]);
    const extra = await create(key, body({ colour: 'red' }));
    expect(extra.status).toBe(422);
    expect(extra.body.detail[0].loc).toEqual(['body', 'audience', 'colour']);
    const missing = await h.api('POST', '/v1/broadcasts', { key, body: { template_id: template.id } });
    expect(missing.body.detail[0].loc).toEqual(['body', 'audience']);
    const count = await h.database.db
      .selectFrom('broadcasts')
      .select('id')
      .where('template_id', '=', template.id)
      .execute();
    expect(count).toHaveLength(0);
  });

  it('refuses send_at outside now … 30 days, variables no contact can fill, an unsendable template, and an empty balance', async () => {
    const { org, key, template, account } = await sender(h);
    const base = { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } };
    const past = await create(key, { ...base, send_at: new Date(Date.now() - 3_600_000).toISOString() });
    expect(past.status).toBe(422);
    expect(past.body.detail[0].loc).toEqual(['body', 'send_at']);
    const far = await create(key, { ...base, send_at: new Date(Date.now() + 31 * 86_400_000).toISOString() });
    expect(far.body.detail[0].loc).toEqual(['body', 'send_at']);
    const unfilled = await create(key, { template_id: template.id, audience: {} });
    expect(unfilled.status).toBe(422);
    expect(unfilled.body.detail).toEqual({ code: 'missing_variables', tokens: ['body.1'] });
    const unknown = await create(key, { ...base, variables: { 'body.1': 'x', 'body.9': 'y' } });
    expect(unknown.body.detail).toEqual({ code: 'unknown_variables', keys: ['body.9'] });
    const nowhere = await create(key, { ...base, template_id: 'tpl_missing' });
    expect(nowhere.status).toBe(404);
    await h.admin('PATCH', `/messaging-accounts/${account.id}`, { balance: 0 });
    const broke = await create(key, base);
    expect(broke.status).toBe(402);
    expect(broke.body.detail.code).toBe('messaging_insufficient_balance');
    const count = await h.database.db.selectFrom('broadcasts').select('id').where('org_id', '=', org.id).execute();
    expect(count).toHaveLength(0);
  });

  it('answers the original broadcast for a repeated Idempotency-Key', async () => {
    const { key, template } = await sender(h);
    const body = { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } };
    const first = await create(key, body, { 'idempotency-key': 'campaign-1' });
    const again = await create(key, body, { 'idempotency-key': 'campaign-1' });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await create(key, { ...body, name: 'x' }, { 'idempotency-key': 'campaign-1' });
    expect(other.body.detail).toEqual({ code: 'idempotency_key_reused' });
  });
});

describe('at a time, and the lifecycle', () => {
  it('stays scheduled until send_at; pause, resume and cancel from the states §16 names', async () => {
    const { key, template } = await sender(h);
    await contacts(
      key,
      phones(2).map((phone) => ({ phone })),
    );
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const later = await create(key, {
      template_id: template.id,
      audience: {},
      variables: { 'body.1': 'x' },
      send_at: sendAt,
    });
    expect(later.status).toBe(202);
    expect(later.body).toMatchObject({ status: 'scheduled', send_at: sendAt, requested: 0 });
    const id = later.body.id;
    await h.audiences.drain();
    expect((await read(key, id)).status).toBe('scheduled');
    const listed = await h.api('GET', '/v1/broadcasts?status=scheduled', { key });
    expect(listed.body.items.map((b: { id: string }) => b.id)).toEqual([id]);

    const resumeEarly = await h.api('POST', `/v1/broadcasts/${id}/resume`, { key });
    expect(resumeEarly.status).toBe(409);
    expect(resumeEarly.body.detail.code).toBe('broadcast_not_resumable');
    const paused = await h.api('POST', `/v1/broadcasts/${id}/pause`, { key });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', status_reason: 'requested' });
    expect((await h.api('POST', `/v1/broadcasts/${id}/pause`, { key })).body.detail.code).toBe(
      'broadcast_not_pausable',
    );
    expect((await h.api('GET', '/v1/broadcasts?status=paused', { key })).body.items).toHaveLength(1);
    const resumed = await h.api('POST', `/v1/broadcasts/${id}/resume`, { key });
    expect(resumed.body).toMatchObject({ status: 'scheduled', status_reason: null });
    const cancelled = await h.api('POST', `/v1/broadcasts/${id}/cancel`, { key });
    expect(cancelled.body).toMatchObject({ status: 'cancelled', requested: 0 });
    await h.audiences.drain();
    expect(await read(key, id)).toMatchObject({ status: 'cancelled', started_at: null });
  });

  it('a paused broadcast hands nothing off until resumed', async () => {
    const { key, template } = await sender(h);
    await contacts(
      key,
      phones(4).map((phone) => ({ phone })),
    );
    const accepted = await create(key, { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } });
    const id = accepted.body.id;
    await h.audiences.drain();
    expect((await h.api('POST', `/v1/broadcasts/${id}/pause`, { key })).body.status).toBe('paused');
    await h.fanout.drain();
    expect(await read(key, id)).toMatchObject({ status: 'paused', requested: 4, sent: 0, pending: 4 });
    expect((await h.api('POST', `/v1/broadcasts/${id}/resume`, { key })).body.status).toBe('in_progress');
    await h.fanout.drain();
    expect(await read(key, id)).toMatchObject({ status: 'completed', sent: 4 });
  });

  it('cancelled while its recipients are being added, it stops adding them and holds no other broadcast back', async () => {
    const { key, template } = await sender(h);
    await contacts(
      key,
      phones(7).map((phone) => ({ phone })),
    );
    const body = { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } };
    const first = (await create(key, body)).body.id;
    expect((await h.audiences.runOnce()) > 0).toBe(true); // started, and its first chunk of 3 added
    const second = (await create(key, body)).body.id;
    expect((await h.api('POST', `/v1/broadcasts/${first}/cancel`, { key })).body).toMatchObject({
      status: 'cancelled',
      requested: 3,
    });
    await h.audiences.drain();
    // The older, cancelled one is still in its preparing phase: it must not be the only one the worker looks at.
    expect(await read(key, second)).toMatchObject({ status: 'in_progress', requested: 7, pending: 7 });
    expect(await read(key, first)).toMatchObject({ status: 'cancelled', requested: 3 });
    await h.fanout.drain();
    expect(await read(key, second)).toMatchObject({ status: 'completed', sent: 7 });
  });

  it('is cancelled with template_not_sendable when the template is not APPROVED at the start', async () => {
    const { org, key, template } = await sender(h);
    await subscribe(key);
    await contacts(key, [{ phone: phones(1)[0] }]);
    const accepted = await create(key, { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } });
    await h.admin('POST', `/sandbox/templates/${template.id}/review`, { event: 'REJECTED' });
    await h.audiences.drain();
    expect(await read(key, accepted.body.id)).toMatchObject({
      status: 'cancelled',
      status_reason: 'template_not_sendable',
      requested: 0,
    });
    expect(await events(org.id, 'broadcast.started')).toHaveLength(0);
    expect((await events(org.id, 'broadcast.finished')).map((b) => b.id)).toEqual([accepted.body.id]);
  });
});

describe('a property the audience names goes while its recipients are added (D309)', () => {
  for (const replacement of [undefined, { key: 'tier', label: 'Tier', kind: 'NUMBER' }]) {
    it(`nobody more matches${replacement ? ' (the key now names a NUMBER)' : ''}: it completes with what it added`, async () => {
      const { key, template } = await sender(h);
      const property = await h.api('POST', '/v1/properties', {
        key,
        body: { key: 'tier', label: 'Tier', kind: 'TEXT' },
      });
      expect(property.status).toBe(201);
      await contacts(
        key,
        phones(5).map((phone) => ({ phone, properties: { tier: { kind: 'TEXT', value_text: 'gold' } } })),
      );
      const accepted = await create(key, {
        template_id: template.id,
        audience: { property_filter: ['tier:eq:gold'] },
        variables: { 'body.1': 'x' },
      });
      expect(accepted.status).toBe(202);
      expect((await h.audiences.runOnce()) > 0).toBe(true); // started, and its first chunk of 3 added
      expect((await h.api('DELETE', `/v1/properties/${property.body.id}`, { key })).status).toBe(204);
      if (replacement) expect((await h.api('POST', '/v1/properties', { key, body: replacement })).status).toBe(201);
      await h.audiences.drain();
      await h.fanout.drain();
      expect(await read(key, accepted.body.id)).toMatchObject({ status: 'completed', requested: 3, sent: 3 });
    });
  }
});

describe('pacing by the rolling 24-hour limit', () => {
  it('hands off only what the window has room for; the rest waits with held_until, never refused', async () => {
    const { key, template } = await sender(h, { limit: 2 });
    await contacts(
      key,
      phones(5).map((phone) => ({ phone })),
    );
    const accepted = await create(key, { template_id: template.id, audience: {}, variables: { 'body.1': 'x' } });
    expect(accepted.status).toBe(202);
    await h.audiences.drain();
    await h.fanout.drain();
    const paced = await read(key, accepted.body.id);
    expect(paced).toMatchObject({ status: 'in_progress', requested: 5, sent: 2, pending: 3 });
    expect(paced.held_until).not.toBeNull();
    expect(new Date(paced.held_until).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    invariant(paced);
  });
});

describe('held recipients are looked at again when room comes early (D226)', () => {
  /** A broadcast of 8 to an account with room for 2: 2 sent, 6 held until the window's next room (24 h). */
  async function held() {
    const setup = await sender(h, { limit: 2 });
    await contacts(
      setup.key,
      phones(8).map((phone) => ({ phone })),
    );
    const accepted = await create(setup.key, {
      template_id: setup.template.id,
      audience: {},
      variables: { 'body.1': 'x' },
    });
    expect(accepted.status).toBe(202);
    await h.audiences.drain();
    await h.fanout.drain();
    const id = accepted.body.id as string;
    expect(await read(setup.key, id)).toMatchObject({ sent: 2, pending: 6, held_until: expect.any(String) });
    return { ...setup, id };
  }

  it('a raised limit releases them at the worker’s next round, not 24 hours later', async () => {
    const { key, account, id } = await held();
    // One more of room: one released, the rest held again until the window's next room.
    expect((await h.admin('PATCH', `/messaging-accounts/${account.id}`, { messaging_limit_24h: 3 })).status).toBe(200);
    await h.audiences.drain();
    await h.fanout.drain();
    const partly = await read(key, id);
    expect(partly).toMatchObject({ status: 'in_progress', sent: 3, pending: 5 });
    expect(new Date(partly.held_until).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    // Room for all: every one released at once, though a release takes 3 rows at a time (the chunk).
    expect((await h.admin('PATCH', `/messaging-accounts/${account.id}`, { messaging_limit_24h: 100 })).status).toBe(
      200,
    );
    await h.audiences.drain();
    await h.fanout.drain();
    const done = await read(key, id);
    expect(done).toMatchObject({ status: 'completed', sent: 8, pending: 0, held_until: null });
    invariant(done);
  });

  it('a resume looks again: room the window gained while paused is used at once', async () => {
    const { org, key, account, id } = await held();
    expect((await h.api('POST', `/v1/broadcasts/${id}/pause`, { key })).status).toBe(200);
    // The window's phones age out (their 24 hours pass) while the broadcast is paused.
    await h.database.db
      .updateTable('messaging_window_phones')
      .set({ last_queued_at: new Date(Date.now() - 25 * 3_600_000) })
      .where('org_id', '=', org.id)
      .where('account_id', '=', account.id)
      .execute();
    expect((await h.api('POST', `/v1/broadcasts/${id}/resume`, { key })).status).toBe(200);
    await h.audiences.drain();
    await h.fanout.drain();
    expect(await read(key, id)).toMatchObject({ status: 'in_progress', sent: 4, pending: 4 });
  });
});

// A replay of an old migration's down on today's schema: its statements update distributed tables with functions
// Citus refuses (VOLATILE in an UPDATE); migrations run forward on Citus, so it is one PostgreSQL's (and PGlite's).
describe.skipIf(onCitus)('migration 0035 (D219)', () => {
  it('down puts each audience recipient’s components back from its values; up keeps them, and they are sent', async () => {
    const { key, template } = await sender(h, { components: NAMED_BODY });
    const [p1, p2] = phones(2);
    await contacts(key, [
      { first_name: 'Ana "la" \\ $&', phone: p1 },
      { first_name: 'Bo', phone: p2 },
    ]);
    const accepted = await create(key, {
      template_id: template.id,
      audience: {},
      variables: { 'body.order_id': 'A-9' },
    });
    expect(accepted.status).toBe(202);
    await h.audiences.drain();
    const recipients = () =>
      h.database.db
        .selectFrom('broadcast_recipients')
        .select(['send_components', 'status'])
        .where('broadcast_id', '=', accepted.body.id)
        .orderBy('position')
        .execute();
    const migration = migrations['0035-recipient-values'];
    if (!migration?.down) throw new Error('migration 0035 has no down');
    await migration.down(h.database.db);
    const parameters = (first: string) => [
      {
        type: 'body',
        parameters: [
          { type: 'text', text: first, parameterName: 'first_name' },
          { type: 'text', text: 'A-9', parameterName: 'order_id' },
        ],
      },
    ];
    const down = await recipients();
    expect(down.map((row) => row.send_components)).toEqual([parameters('Ana "la" \\ $&'), parameters('Bo')]);
    await migration.up(h.database.db);
    expect((await recipients()).map((row) => row.send_components)).toEqual(down.map((row) => row.send_components));
    await h.fanout.drain();
    expect((await recipients()).map((row) => row.status)).toEqual(['sent', 'sent']);
  });
});

// The set-based batch upsert (decisions §12, D42): a bounded number of statements whatever the number
// of items, the rules of single writes replayed in input order within a batch (a value freed by an earlier item is
// free, a value taken by an earlier item is that item's 409), events per item, and real concurrency decided by the
// unique indexes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones } from '../../helpers/sends.ts';
import { statementCounter } from '../../helpers/statement-counter.ts';

const counter = statementCounter();

let test: TestDatabase;
let h: Harness;
beforeAll(async () => {
  test = await createTestDatabase();
  h = await startHarness({
    unlimited: true,
    database: { ...test.database, db: test.database.db.withPlugin(counter.plugin) },
  });
});
afterAll(async () => {
  await h.close();
  await test.drop();
});

type Item = { index: number; result: string; contact: { id: string; email: string | null; phone: string | null } };
const upsert = (key: string, body: unknown) => h.api('POST', '/v1/contacts/batch-upsert', { key, body });
const liveContacts = (orgId: string) =>
  h.database.db
    .selectFrom('contacts')
    .select(['id', 'email', 'phone', 'city'])
    .where('org_id', '=', orgId)
    .where('deleted_at', 'is', null)
    .execute();

describe('batch upsert, set-based', () => {
  it('costs the same few statements for 100 items as for 5 (not a round of statements per item)', async () => {
    const { key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'plan', label: 'Plan', kind: 'TEXT' } });
    await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Lead' } });
    const batch = (count: number, offset: number) => ({
      match_on: 'email',
      items: Array.from({ length: count }, (_, index) => ({
        email: `s${offset + index}@example.com`,
        city: 'Lima',
        properties: { plan: { kind: 'TEXT', value_text: 'gold' } },
      })),
    });
    // Half of the second batch matches contacts of the first, half is new.
    const measure = async (body: unknown) => {
      const before = counter.count;
      const response = await upsert(key, body);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return counter.count - before;
    };
    await measure(batch(50, 0));
    const small = await measure(batch(5, 48));
    const large = await measure(batch(100, 50));
    expect(large).toBe(small);
    expect(large).toBeLessThanOrEqual(14);
  });

  it('replays the duplicate rule in input order: a value an earlier item frees is free, one it takes is refused', async () => {
    const { org, key } = await h.createOrg();
    const [p1, p2, p3] = phones(3) as [string, string, string];
    const x = (await h.api('POST', '/v1/contacts', { key, body: { email: 'x@example.com', phone: p1 } })).body;
    const y = (await h.api('POST', '/v1/contacts', { key, body: { email: 'y@example.com', phone: p2 } })).body;

    // Item 0 cannot take Y's phone: Y still holds it when item 0 is written (items are written as if in order).
    const early = await upsert(key, {
      match_on: 'email',
      items: [
        { email: 'x@example.com', phone: p2 },
        { email: 'y@example.com', phone: p3 },
      ],
    });
    expect(early.status, JSON.stringify(early.body)).toBe(409);
    expect(early.body.detail).toMatchObject({ code: 'duplicate_contact', field: 'phone', index: 0 });
    expect(early.body.detail.conflicting_contact_id).toBe(y.id);
    expect(early.body.detail.phone).toBe(p2);

    // Y frees its phone, X takes it and frees its own, a new contact takes that one.
    const ordered = await upsert(key, {
      match_on: 'email',
      items: [
        { email: 'y@example.com', phone: p3 },
        { email: 'X@example.com', phone: p2 },
        { email: 'n@example.com', phone: p1 },
      ],
    });
    expect(ordered.status, JSON.stringify(ordered.body)).toBe(200);
    expect(ordered.body.items.map((item: Item) => [item.result, item.contact.phone])).toEqual([
      ['updated', p3],
      ['updated', p2],
      ['created', p1],
    ]);
    expect(ordered.body.items[1].contact).toMatchObject({ id: x.id, email: 'X@example.com' });
    const byEmail = new Map((await liveContacts(org.id)).map((row) => [row.email?.toLowerCase(), row.phone]));
    expect(Object.fromEntries(byEmail)).toEqual({ 'x@example.com': p2, 'y@example.com': p3, 'n@example.com': p1 });
  });

  it('two new items with the same phone: the second one’s 409, naming no contact, and nothing written', async () => {
    const { org, key } = await h.createOrg();
    const [phone] = phones(1) as [string];
    const response = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'a@example.com' }, { email: 'b@example.com', phone }, { email: 'c@example.com', phone }],
    });
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatchObject({ field: 'phone', conflicting_contact_id: null, index: 2 });
    expect(await liveContacts(org.id)).toHaveLength(0);
  });

  it('applies the create rules to created items only: required properties, the initial stage, references', async () => {
    const { key } = await h.createOrg();
    const stage = (await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'New' } })).body;
    const won = (await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Won' } })).body;
    const origin = (
      await h.api('POST', '/v1/sub-origins', { key, body: { key: 'fair', label: 'Fair', origin: 'API' } })
    ).body;
    const old = (await h.api('POST', '/v1/contacts', { key, body: { email: 'old@example.com', city: 'Quito' } })).body;
    const tierProperty = { key: 'tier', label: 'Tier', kind: 'TEXT', required: true };
    expect((await h.api('POST', '/v1/properties', { key, body: tierProperty })).status).toBe(201);

    // The matched contact needs no `tier` (required on create only); the new one does.
    const missing = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'old@example.com', city: 'Cuenca' }, { email: 'new@example.com' }],
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'items', 1, 'properties', 'tier'], type: 'missing' });

    const unknownOrigin = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'old@example.com', sub_origin_key: 'nope' }],
    });
    expect(unknownOrigin.body.detail[0].loc).toEqual(['body', 'items', 0, 'sub_origin_key']);
    const tier = { tier: { kind: 'TEXT', value_text: 'A' } };
    const unknownStage = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'old@example.com' }, { email: 'n2@example.com', properties: tier, funnel_stage_id: 'fs_nope' }],
    });
    expect(unknownStage.body.detail[0].loc).toEqual(['body', 'items', 1, 'funnel_stage_id']);

    const ok = await upsert(key, {
      match_on: 'email',
      items: [
        { email: 'old@example.com', city: 'Cuenca', sub_origin_key: origin.key },
        { email: 'new@example.com', properties: tier },
        { email: 'won@example.com', properties: tier, funnel_stage_id: won.id, sub_origin_id: origin.id },
      ],
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.items[0].contact).toMatchObject({ id: old.id, city: 'Cuenca', sub_origin_id: origin.id });
    expect(ok.body.items[0].contact.funnel_stage_id).toBe(old.funnel_stage_id);
    expect(ok.body.items[1].contact).toMatchObject({ funnel_stage_id: stage.id, messaging_status: 'unavailable' });
    expect(ok.body.items[2].contact).toMatchObject({ funnel_stage_id: won.id, sub_origin_id: origin.id });
  });

  it('changes nothing for an item that changes nothing: no write, no updated_at, no contact.updated (D155)', async () => {
    const { org, key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'plan', label: 'Plan', kind: 'TEXT' } });
    await h.api('POST', '/v1/properties', { key, body: { key: 'seats', label: 'Seats', kind: 'NUMBER' } });
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(endpoint.status).toBe(201);
    const item = (index: number, city = 'Lima') => ({
      email: `same${index}@example.com`,
      first_name: `Same ${index}`,
      city,
      properties: { plan: { kind: 'TEXT', value_text: 'gold' }, seats: { kind: 'NUMBER', value_number: 2.5 } },
    });
    const first = await upsert(key, { match_on: 'email', items: [item(0), item(1), item(2)] });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const events = async () =>
      (
        await h.database.db
          .selectFrom('webhook_events')
          .select(['type', 'payload'])
          .where('org_id', '=', org.id)
          .where('type', '!=', 'ping')
          .execute()
      ).map((event) => `${event.type} ${JSON.parse(event.payload).data.email}`);
    expect((await events()).sort()).toEqual([
      'contact.created same0@example.com',
      'contact.created same1@example.com',
      'contact.created same2@example.com',
    ]);

    // The same batch again (an import resumed after an interruption): answered, nothing changes.
    const again = await upsert(key, { match_on: 'email', items: [item(0), item(1), item(2)] });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.items.map((one: Item) => one.result)).toEqual(['updated', 'updated', 'updated']);
    expect(again.body.items.map((one: { contact: unknown }) => one.contact)).toEqual(
      first.body.items.map((one: { contact: unknown }) => one.contact),
    );
    expect(await events()).toHaveLength(3);

    // One real change among no-ops: only that contact moves, and only it has an event.
    const mixed = await upsert(key, { match_on: 'email', items: [item(0), item(1, 'Quito'), item(2)] });
    expect(mixed.status).toBe(200);
    expect(mixed.body.items[0].contact.updated_at).toBe(first.body.items[0].contact.updated_at);
    expect(mixed.body.items[1].contact.city).toBe('Quito');
    expect(mixed.body.items[1].contact.updated_at).not.toBe(first.body.items[1].contact.updated_at);
    expect(mixed.body.items[2].contact).toEqual(first.body.items[2].contact);
    expect((await events()).filter((event) => event.startsWith('contact.updated'))).toEqual([
      'contact.updated same1@example.com',
    ]);
    // A property value that differs is a change too.
    const property = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'same2@example.com', properties: { seats: { kind: 'NUMBER', value_number: 3 } } }],
    });
    expect(property.body.items[0].contact.properties.seats.value_number).toBe(3);
    expect(property.body.items[0].contact.updated_at).not.toBe(first.body.items[2].contact.updated_at);
    expect(await events()).toHaveLength(5);
  });

  it('records contact.created and contact.updated for each item, carrying the contact of the answer', async () => {
    const { org, key } = await h.createOrg();
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(endpoint.status).toBe(201);
    await h.api('POST', '/v1/contacts', { key, body: { email: 'e0@example.com' } });
    const response = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'e0@example.com', city: 'Lima' }, { email: 'e1@example.com' }, { email: 'e2@example.com' }],
    });
    expect(response.status).toBe(200);
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('org_id', '=', org.id)
      .where('type', '!=', 'ping')
      .execute();
    const batchEvents = events
      .map((event) => ({ type: event.type, data: JSON.parse(event.payload).data }))
      .filter((event) => event.type === 'contact.updated' || event.data.email !== 'e0@example.com');
    expect(batchEvents).toHaveLength(3);
    for (const item of response.body.items as Item[]) {
      const type = item.result === 'created' ? 'contact.created' : 'contact.updated';
      expect(batchEvents).toContainEqual({ type, data: item.contact });
    }
  });
});

describe('concurrent batches', () => {
  it('overlapping batches in opposite orders, over new and existing contacts: no duplicate, every batch answers', async () => {
    const { org, key } = await h.createOrg();
    const emails = Array.from({ length: 60 }, (_, index) => `k${index}@example.com`);
    await upsert(key, { match_on: 'email', items: emails.slice(0, 10).map((email) => ({ email })) });
    const batches = [
      emails.slice(0, 40),
      emails.slice(20, 60).reverse(),
      emails.slice(10, 50),
      emails.slice(0, 60).filter((_, index) => index % 2 === 0),
    ];
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        batches.map((list, batch) =>
          upsert(key, { match_on: 'email', items: list.map((email) => ({ email, city: `R${round}B${batch}` })) }),
        ),
      );
      expect(
        answers.map((answer) => answer.status),
        JSON.stringify(answers.map((a) => a.body)),
      ).toEqual([200, 200, 200, 200]);
    }
    const rows = await liveContacts(org.id);
    expect(rows).toHaveLength(60);
    expect(new Set(rows.map((row) => row.email)).size).toBe(60);
  });

  it('two batches giving one phone to different contacts: one wins, the other gets that contact’s 409 at its index', async () => {
    const { org, key } = await h.createOrg();
    for (const [round, phone] of phones(5).entries()) {
      const answers = await Promise.all(
        [0, 1].map((batch) =>
          upsert(key, {
            match_on: 'email',
            items: [
              { email: `r${round}-${batch}-a@example.com` },
              { email: `r${round}-${batch}-b@example.com`, phone },
            ],
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([200, 409]);
      const winner = answers.find((answer) => answer.status === 200)?.body.items[1].contact;
      const loser = answers.find((answer) => answer.status === 409)?.body.detail;
      expect(loser).toMatchObject({ code: 'duplicate_contact', field: 'phone', index: 1 });
      expect(loser.conflicting_contact_id).toBe(winner.id);
    }
    const rows = await liveContacts(org.id);
    expect(rows).toHaveLength(10);
    expect(new Set(rows.map((row) => row.phone).filter(Boolean)).size).toBe(5);
  });

  it('a batch beside single creates of the same emails: one contact per email', async () => {
    const { org, key } = await h.createOrg();
    const emails = Array.from({ length: 15 }, (_, index) => `m${index}@example.com`);
    const answers = await Promise.all([
      upsert(key, { match_on: 'email', items: emails.map((email) => ({ email, city: 'Batch' })) }),
      ...emails.map((email) => h.api('POST', '/v1/contacts', { key, body: { email } })),
    ]);
    expect(answers[0]?.status).toBe(200);
    for (const single of answers.slice(1)) expect([201, 409]).toContain(single.status);
    const rows = await liveContacts(org.id);
    expect(rows).toHaveLength(15);
    expect(rows.every((row) => row.city === 'Batch')).toBe(true);
  });
});

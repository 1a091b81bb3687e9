// POST /v1/contacts/batch-upsert (decisions §12): match on email or phone, PATCH semantics with properties merged,
// all or nothing with the item's index in every error, and concurrent batches that never create duplicates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const upsert = (key: string, body: unknown) => h.api('POST', '/v1/contacts/batch-upsert', { key, body });
const countContacts = async (orgId: string) =>
  (await h.database.db.selectFrom('contacts').select('id').where('org_id', '=', orgId).execute()).length;

describe('batch upsert', () => {
  it('updates the matching contacts (properties merged) and creates the others, in input order', async () => {
    const { org, key } = await h.createOrg();
    for (const property of [
      { key: 'plan', label: 'Plan', kind: 'TEXT' },
      { key: 'seats', label: 'Seats', kind: 'NUMBER' },
    ]) {
      expect((await h.api('POST', '/v1/properties', { key, body: property })).status).toBe(201);
    }
    const existing = await h.api('POST', '/v1/contacts', {
      key,
      body: {
        email: 'Ana@Example.com',
        first_name: 'Ana',
        city: 'Lima',
        properties: { plan: { kind: 'TEXT', value_text: 'pro' }, seats: { kind: 'NUMBER', value_number: 3 } },
      },
    });
    const response = await upsert(key, {
      match_on: 'email',
      items: [
        { email: 'new@example.com', first_name: 'Nia', opted_out: true },
        { email: 'ana@example.com', last_name: 'Silva', properties: { seats: { kind: 'NUMBER', value_number: 5 } } },
      ],
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.items.map((item: { index: number; result: string }) => [item.index, item.result])).toEqual([
      [0, 'created'],
      [1, 'updated'],
    ]);
    expect(response.body.items[0].contact).toMatchObject({ first_name: 'Nia', origin: 'API', opted_out: true });
    expect(response.body.items[1].contact).toMatchObject({
      id: existing.body.id,
      first_name: 'Ana',
      last_name: 'Silva',
      city: 'Lima',
      properties: { plan: { value_text: 'pro' }, seats: { value_number: 5 } },
    });
    expect(await countContacts(org.id)).toBe(2);

    const byPhone = phones(1)[0] as string;
    await h.api('PATCH', `/v1/contacts/${existing.body.id}`, { key, body: { phone: byPhone } });
    const phoneMatch = await upsert(key, { match_on: 'phone', items: [{ phone: byPhone, city: 'Cusco' }] });
    expect(phoneMatch.body.items[0]).toMatchObject({ result: 'updated', contact: { id: existing.body.id } });
  });

  it('is all or nothing: an invalid item is a 422 at its index and nothing is written', async () => {
    const { org, key } = await h.createOrg();
    const bad = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'one@example.com' }, { email: 'two@example.com', country: 'mexico' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'items', 1, 'country']);
    expect(await countContacts(org.id)).toBe(0);

    const unknownProperty = await upsert(key, {
      match_on: 'email',
      items: [
        { email: 'one@example.com' },
        { email: 'two@example.com', properties: { nope: { kind: 'TEXT', value_text: 'x' } } },
      ],
    });
    expect(unknownProperty.status).toBe(422);
    expect(unknownProperty.body.detail[0].loc).toEqual(['body', 'items', 1, 'properties', 'nope']);
    expect(await countContacts(org.id)).toBe(0);

    const missing = await upsert(key, { match_on: 'phone', items: [{ email: 'x@example.com' }] });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['body', 'items', 0, 'phone']);

    const twice = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'same@example.com' }, { email: 'SAME@example.com' }],
    });
    expect(twice.status).toBe(422);
    expect(twice.body.detail[0]).toMatchObject({ loc: ['body', 'items', 1, 'email'] });

    expect((await upsert(key, { match_on: 'name', items: [{}] })).status).toBe(422);
    expect((await upsert(key, { match_on: 'email', items: [] })).status).toBe(422);
    const tooMany = Array.from({ length: 101 }, (_, index) => ({ email: `p${index}@example.com` }));
    expect((await upsert(key, { match_on: 'email', items: tooMany })).status).toBe(422);
    expect(await countContacts(org.id)).toBe(0);
  });

  it('a duplicate on another field is the 409 duplicate_contact with the item’s index, and nothing is written', async () => {
    const { org, key } = await h.createOrg();
    const [phone] = phones(1) as [string];
    const holder = await h.api('POST', '/v1/contacts', { key, body: { email: 'holder@example.com', phone } });
    const response = await upsert(key, {
      match_on: 'email',
      items: [{ email: 'a@example.com' }, { email: 'b@example.com', phone }],
    });
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatchObject({
      code: 'duplicate_contact',
      field: 'phone',
      conflicting_contact_id: holder.body.id,
      index: 1,
    });
    expect(await countContacts(org.id)).toBe(1);
  });

  it('concurrent batches over the same contacts never create duplicates', async () => {
    const { org, key } = await h.createOrg();
    const emails = Array.from({ length: 20 }, (_, index) => `c${index}@example.com`);
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, batch) =>
        upsert(key, { match_on: 'email', items: emails.map((email) => ({ email, city: `City ${batch}` })) }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(await countContacts(org.id)).toBe(20);
    const created = answers.flatMap((answer) =>
      answer.body.items.filter((item: { result: string }) => item.result === 'created'),
    );
    expect(created).toHaveLength(20);
  });
});

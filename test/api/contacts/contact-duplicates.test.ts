// Duplicates within one organization: email and social handle case-insensitive, phone exact (decisions §5),
// enforced by unique indexes and answered with the contract's full `duplicate_contact` detail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/contacts', { key, body });
const holder = {
  first_name: 'Ana',
  last_name: 'Silva',
  email: 'Ana@Example.com',
  phone: '+15551112222',
  social_handle: 'Ana.Silva',
};

describe('duplicates', () => {
  it.each([
    ['email', { email: 'ana@EXAMPLE.COM' }],
    ['phone', { phone: '+15551112222' }],
    ['social_handle', { social_handle: 'ana.silva' }],
  ])('refuse a second contact with the same %s, with the holder in the detail', async (field, body) => {
    const { key } = await h.createOrg();
    const first = await create(key, holder);
    const response = await create(key, { first_name: 'Other', ...body });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({
      detail: {
        code: 'duplicate_contact',
        field,
        conflicting_contact_id: first.body.id,
        first_name: 'Ana',
        last_name: 'Silva',
        email: 'Ana@Example.com',
        phone: '+15551112222',
        social_handle: 'Ana.Silva',
      },
    });
    expect((await h.api('GET', '/v1/contacts', { key })).body.total_count).toBe(1);
  });

  it('compare phones exactly', async () => {
    const { key } = await h.createOrg();
    await create(key, { phone: '+15551112222' });
    expect((await create(key, { phone: '+155511122220' })).status).toBe(201);
  });

  it('are checked on update too, and a contact may keep its own values', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, holder);
    const second = await create(key, { email: 'b@example.com' });
    const url = `/v1/contacts/${second.body.id}`;
    for (const [field, value] of [
      ['email', 'ANA@example.com'],
      ['phone', '+15551112222'],
      ['social_handle', 'ANA.SILVA'],
    ]) {
      const response = await h.api('PATCH', url, { key, body: { [field as string]: value } });
      expect(response.status, field).toBe(409);
      expect(response.body.detail).toMatchObject({
        code: 'duplicate_contact',
        field,
        conflicting_contact_id: first.body.id,
      });
    }
    expect((await h.api('GET', url, { key })).body.email).toBe('b@example.com');
    const own = await h.api('PATCH', `/v1/contacts/${first.body.id}`, {
      key,
      body: { ...holder, email: 'ana@example.com' },
    });
    expect(own.status).toBe(200);
  });

  it('are per organization', async () => {
    const a = await h.createOrg();
    const b = await h.createOrg();
    expect((await create(a.key, holder)).status).toBe(201);
    expect((await create(b.key, holder)).status).toBe(201);
  });

  it('leave no partial write behind (properties of a refused contact are not stored)', async () => {
    const { key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'note', label: 'Note', kind: 'TEXT' } });
    await create(key, { email: 'x@example.com' });
    const refused = await create(key, {
      email: 'X@example.com',
      properties: { note: { kind: 'TEXT', value_text: 'hi' } },
    });
    expect(refused.status).toBe(409);
    const list = await h.api('GET', '/v1/contacts?property_filter=note:exists:true', { key });
    expect(list.body.total_count).toBe(0);
  });

  it('fifty concurrent creates of one email: exactly one 201 and 49 409s', async () => {
    const { key } = await h.createOrg();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => create(key, { first_name: `n${i}`, email: 'race@example.com' })),
    );
    const created = responses.filter((response) => response.status === 201);
    const conflicts = responses.filter((response) => response.status === 409);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    for (const conflict of conflicts) {
      expect(conflict.body.detail).toMatchObject({
        code: 'duplicate_contact',
        field: 'email',
        conflicting_contact_id: created[0]?.body.id,
      });
    }
    expect((await h.api('GET', '/v1/contacts', { key })).body.total_count).toBe(1);
  });
});

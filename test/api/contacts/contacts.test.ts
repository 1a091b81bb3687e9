// Contacts: create, read, update, delete (contract: Contact; decisions §5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/contacts', { key, body });

describe('create', () => {
  it('answers 201 with every field, origin API and properties', async () => {
    const { key } = await h.createOrg();
    const response = await create(key, {
      first_name: 'Ana',
      last_name: 'Silva',
      email: 'ana@example.com',
      phone: '+5215512345678',
      country: 'MX',
      city: 'Monterrey',
      social_handle: 'ana.silva_',
      owner_id: 'user_7',
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^ct_/),
      first_name: 'Ana',
      last_name: 'Silva',
      email: 'ana@example.com',
      phone: '+5215512345678',
      country: 'MX',
      city: 'Monterrey',
      social_handle: 'ana.silva_',
      inbox_handle: null,
      messaging_username: null,
      origin: 'API',
      sub_origin_id: null,
      messaging_status: 'unverified',
      funnel_stage_id: null,
      owner_id: 'user_7',
      properties: {},
      opted_out: false,
      opted_out_at: null,
      last_contacted_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const read = await h.api('GET', `/v1/contacts/${response.body.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
  });

  it('starts unavailable without a phone and accepts an empty body', async () => {
    const { key } = await h.createOrg();
    const response = await create(key, {});
    expect(response.status).toBe(201);
    expect(response.body.messaging_status).toBe('unavailable');
    expect(response.body.origin).toBe('API');
  });

  it.each([
    ['phone', 'phone', '5512345678'],
    ['phone with a leading zero', 'phone', '+0512345678'],
    ['phone too long', 'phone', '+1234567890123456'],
    ['country in lowercase', 'country', 'mx'],
    ['country of three letters', 'country', 'MEX'],
    ['empty city', 'city', ''],
    ['city over 120 characters', 'city', 'x'.repeat(121)],
    ['social handle with a dash', 'social_handle', 'ana-silva'],
    ['social handle over 30 characters', 'social_handle', 'a'.repeat(31)],
    ['email', 'email', 'not-an-email'],
  ])('refuses a bad %s with a 422 at the field', async (_label, field, value) => {
    const { key } = await h.createOrg();
    const response = await create(key, { [field]: value });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', field]);
  });

  it.each(['XX', 'ZZ', 'AA', 'UK'])(
    'refuses the unassigned country code %s with a 422 at the field, on create, update and batch (D135)',
    async (country) => {
      const { key } = await h.createOrg();
      const created = await create(key, { first_name: 'Ana', country });
      expect(created.status).toBe(422);
      expect(created.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'country'],
          type: 'value_error',
          msg: 'Input should be an ISO 3166-1 alpha-2 country code (e.g. MX, US)',
        }),
      ]);
      const contact = await create(key, { first_name: 'Ana', country: 'GB' });
      expect(contact.status).toBe(201);
      const patched = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, { key, body: { country } });
      expect(patched.status).toBe(422);
      expect(patched.body.detail[0].loc).toEqual(['body', 'country']);
      const batch = await h.api('POST', '/v1/contacts/batch-upsert', {
        key,
        body: { match_on: 'email', items: [{ email: 'bea@example.com', country }] },
      });
      expect(batch.status).toBe(422);
      expect(batch.body.detail[0].loc).toEqual(['body', 'items', 0, 'country']);
      // Nothing was written by the refused requests.
      const after = await h.api('GET', `/v1/contacts/${contact.body.id}`, { key });
      expect(after.body.country).toBe('GB');
      const listed = await h.api('GET', '/v1/contacts', { key });
      expect(listed.body.items).toHaveLength(1);
    },
  );

  it.each(['MX', 'US', 'DE', 'BR', 'XK'])('accepts the country code %s', async (country) => {
    const { key } = await h.createOrg();
    expect((await create(key, { country })).status).toBe(201);
  });

  it('accepts the boundaries of the formats', async () => {
    const { key } = await h.createOrg();
    const response = await create(key, {
      phone: '+123456789012345',
      city: 'x'.repeat(120),
      social_handle: 'A'.repeat(30),
    });
    expect(response.status).toBe(201);
  });

  it.each(['inbox_handle', 'messaging_status', 'origin', 'messaging_username'])(
    'does not take %s as input',
    async (field) => {
      const { key } = await h.createOrg();
      const response = await create(key, { [field]: 'verified' });
      expect(response.status).toBe(422);
      expect(response.body.detail[0]).toMatchObject({ loc: ['body', field], type: 'extra_forbidden' });
    },
  );

  it('does not coerce JSON types', async () => {
    const { key } = await h.createOrg();
    const response = await create(key, { first_name: 12345 });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'first_name'], type: 'string_type' });
  });

  it('resolves sub_origin_key to sub_origin_id, and refuses unknown or disagreeing ones', async () => {
    const { key } = await h.createOrg();
    const a = await h.api('POST', '/v1/sub-origins', { key, body: { key: 'zapier', label: 'Zapier', origin: 'API' } });
    const b = await h.api('POST', '/v1/sub-origins', { key, body: { key: 'form', label: 'Form', origin: 'WEB' } });
    const byKey = await create(key, { sub_origin_key: 'zapier' });
    expect(byKey.status).toBe(201);
    expect(byKey.body.sub_origin_id).toBe(a.body.id);
    const byId = await create(key, { sub_origin_id: b.body.id });
    expect(byId.body.sub_origin_id).toBe(b.body.id);
    const both = await create(key, { sub_origin_id: a.body.id, sub_origin_key: 'zapier' });
    expect(both.status).toBe(201);
    const unknownKey = await create(key, { sub_origin_key: 'nope' });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.body.detail[0].loc).toEqual(['body', 'sub_origin_key']);
    const unknownId = await create(key, { sub_origin_id: 'so_nope' });
    expect(unknownId.body.detail[0].loc).toEqual(['body', 'sub_origin_id']);
    const disagree = await create(key, { sub_origin_id: a.body.id, sub_origin_key: 'form' });
    expect(disagree.status).toBe(422);
    expect(disagree.body.detail[0].loc).toEqual(['body', 'sub_origin_key']);
  });

  it('does not resolve another organization’s sub-origin', async () => {
    const other = await h.createOrg();
    const so = await h.api('POST', '/v1/sub-origins', {
      key: other.key,
      body: { key: 'theirs', label: 'Theirs', origin: 'ADS' },
    });
    const { key } = await h.createOrg();
    expect((await create(key, { sub_origin_id: so.body.id })).status).toBe(422);
    expect((await create(key, { sub_origin_key: 'theirs' })).status).toBe(422);
  });

  it('places the contact in the initial funnel stage unless one is given', async () => {
    const { key } = await h.createOrg();
    const first = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'New' } });
    const second = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'Won' } });
    expect((await create(key, {})).body.funnel_stage_id).toBe(first.body.id);
    expect((await create(key, { funnel_stage_id: second.body.id })).body.funnel_stage_id).toBe(second.body.id);
    await h.api('PATCH', `/v1/funnel-stages/${second.body.id}`, { key, body: { is_initial: true } });
    expect((await create(key, {})).body.funnel_stage_id).toBe(second.body.id);
    const unknown = await create(key, { funnel_stage_id: 'stage_nope' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(['body', 'funnel_stage_id']);
  });
});

describe('read', () => {
  it('is 404 for an unknown id and for another organization’s contact', async () => {
    const owner = await h.createOrg();
    const contact = await create(owner.key, { first_name: 'Mine' });
    const { key } = await h.createOrg();
    for (const id of ['ct_unknown', contact.body.id]) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const response = await h.api(method, `/v1/contacts/${id}`, {
          key,
          ...(method === 'PATCH' ? { body: { first_name: 'x' } } : {}),
        });
        expect(response.status, `${method} ${id}`).toBe(404);
        expect(response.body).toEqual({ detail: 'not_found' });
      }
    }
    expect((await h.api('GET', `/v1/contacts/${contact.body.id}`, { key: owner.key })).body.first_name).toBe('Mine');
  });
});

describe('update', () => {
  it('changes only the fields given; null clears; updated_at moves', async () => {
    const { key } = await h.createOrg();
    const contact = await create(key, { first_name: 'Ana', last_name: 'Silva', city: 'Lima', owner_id: 'u1' });
    // The next write must be able to show a later time: wait for the clock to pass the creation.
    await waitUntil(() => Date.now() > Date.parse(contact.body.updated_at), { intervalMs: 1, message: 'the clock' });
    const response = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, {
      key,
      body: { first_name: 'Anna', city: null },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ first_name: 'Anna', last_name: 'Silva', city: null, owner_id: 'u1' });
    expect(response.body.created_at).toBe(contact.body.created_at);
    expect(response.body.updated_at > contact.body.updated_at).toBe(true);
    expect((await h.api('GET', `/v1/contacts/${contact.body.id}`, { key })).body).toEqual(response.body);
  });

  it('changes nothing for a PATCH that changes nothing: no updated_at, no contact.updated (D155)', async () => {
    const { org, key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'plan', label: 'Plan', kind: 'TEXT' } });
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(endpoint.status).toBe(201);
    const plan = { plan: { kind: 'TEXT', value_text: 'gold' } };
    const contact = await create(key, { first_name: 'Ana', city: 'Lima', email: 'ana@example.com', properties: plan });
    expect(contact.status).toBe(201);
    const url = `/v1/contacts/${contact.body.id}`;
    const events = async () =>
      (
        await h.database.db
          .selectFrom('webhook_events')
          .select('type')
          .where('org_id', '=', org.id)
          .where('type', '=', 'contact.updated')
          .execute()
      ).length;
    await waitUntil(() => Date.now() > Date.parse(contact.body.updated_at), { intervalMs: 1, message: 'the clock' });
    // The stored values sent again: answered as they are, nothing written.
    const same = await h.api('PATCH', url, {
      key,
      body: { first_name: 'Ana', city: 'Lima', email: 'ana@example.com', opted_out: false, properties: plan },
    });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(contact.body);
    expect(await events()).toBe(0);
    expect((await h.api('GET', url, { key })).body.updated_at).toBe(contact.body.updated_at);
    // A real change moves updated_at and records one event; a changed property value alone is a change too.
    const moved = await h.api('PATCH', url, { key, body: { city: 'Quito' } });
    expect(moved.body.updated_at > contact.body.updated_at).toBe(true);
    expect(await events()).toBe(1);
    const valued = await h.api('PATCH', url, {
      key,
      body: { properties: { plan: { kind: 'TEXT', value_text: 'x' } } },
    });
    expect(valued.body.properties.plan.value_text).toBe('x');
    expect(await events()).toBe(2);
  });

  it('moves messaging_status with the phone (decisions §5)', async () => {
    const { key } = await h.createOrg();
    const contact = await create(key, {});
    const url = `/v1/contacts/${contact.body.id}`;
    const set = await h.api('PATCH', url, { key, body: { phone: '+15551230001' } });
    expect(set.body.messaging_status).toBe('unverified');
    const removed = await h.api('PATCH', url, { key, body: { phone: null } });
    expect(removed.body).toMatchObject({ phone: null, messaging_status: 'unavailable' });
    const unrelated = await h.api('PATCH', url, { key, body: { city: 'Lima' } });
    expect(unrelated.body.messaging_status).toBe('unavailable');
  });

  it.each(['messaging_status', 'inbox_handle', 'origin'])('refuses to write %s', async (field) => {
    const { key } = await h.createOrg();
    const contact = await create(key, {});
    const response = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, { key, body: { [field]: 'verified' } });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', field], type: 'extra_forbidden' });
  });

  it('checks formats, stage and sub-origin like create; null clears them', async () => {
    const { key } = await h.createOrg();
    const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'New' } });
    await h.api('POST', '/v1/sub-origins', { key, body: { key: 'fair', label: 'Fair', origin: 'EVENT' } });
    const contact = await create(key, { sub_origin_key: 'fair' });
    const url = `/v1/contacts/${contact.body.id}`;
    expect((await h.api('PATCH', url, { key, body: { country: 'usa' } })).status).toBe(422);
    expect((await h.api('PATCH', url, { key, body: { funnel_stage_id: 'stage_x' } })).status).toBe(422);
    const cleared = await h.api('PATCH', url, { key, body: { funnel_stage_id: null, sub_origin_id: null } });
    expect(cleared.body).toMatchObject({ funnel_stage_id: null, sub_origin_id: null });
    const moved = await h.api('PATCH', url, { key, body: { funnel_stage_id: stage.body.id, sub_origin_key: 'fair' } });
    expect(moved.body.funnel_stage_id).toBe(stage.body.id);
    expect(moved.body.sub_origin_id).not.toBeNull();
  });
});

describe('delete', () => {
  it('answers 204 without a body, then 404 everywhere, and frees its values', async () => {
    const { key } = await h.createOrg();
    const contact = await create(key, { email: 'gone@example.com', phone: '+15550001111', social_handle: 'gone' });
    const url = `/v1/contacts/${contact.body.id}`;
    const deleted = await h.api('DELETE', url, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await h.api('GET', url, { key })).status).toBe(404);
    expect((await h.api('DELETE', url, { key })).status).toBe(404);
    expect((await h.api('PATCH', url, { key, body: { city: 'x' } })).status).toBe(404);
    const list = await h.api('GET', '/v1/contacts', { key });
    expect(list.body.items).toEqual([]);
    expect(list.body.total_count).toBe(0);
    const again = await create(key, { email: 'GONE@example.com', phone: '+15550001111', social_handle: 'Gone' });
    expect(again.status).toBe(201);
  });
});

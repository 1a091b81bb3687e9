// Custom property definitions (contract: Custom property definition; decisions §1, §6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFromName } from '../../../sdk/src/index.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { waitUntil } from '../../helpers/wait.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/properties', { key, body });

describe('create', () => {
  it('answers 201 with the definition, appended at the end of the order', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, {
      key: 'budget',
      label: 'Budget',
      kind: 'MONEY',
      currency: 'EUR',
      required: true,
      description: 'd',
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^prop_/),
      key: 'budget',
      label: 'Budget',
      description: 'd',
      kind: 'MONEY',
      options: [],
      currency: 'EUR',
      required: true,
      order_idx: 0,
      archived_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await create(key, {
      key: 'color',
      label: 'Color',
      kind: 'RADIO',
      options: [{ key: 'red', label: 'Red' }],
    });
    expect(second.body).toMatchObject({ order_idx: 1, description: '', currency: null, required: false });
    expect(second.body.options).toEqual([{ key: 'red', label: 'Red' }]);
  });

  it.each(['Budget', '1st', '_x', 'with-dash', 'a'.repeat(65), ''])('refuses the key %j', async (bad) => {
    const { key } = await h.createOrg();
    const response = await create(key, { key: bad, label: 'x', kind: 'TEXT' });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'key']);
  });

  it('accepts a 64-character key', async () => {
    const { key } = await h.createOrg();
    expect((await create(key, { key: `a${'b'.repeat(63)}`, label: 'x', kind: 'TEXT' })).status).toBe(201);
  });

  // D328: the console derives keys with the SDK's keyFromName; the server derives a stage's key with the same rule.
  const LABELS = [
    'Qualified Lead!',
    'Ação 2',
    '2 doors',
    '  __Ünïcödé__  ',
    'Größe/Size',
    '日本語',
    'a'.repeat(70),
    'x-y.z',
  ];

  it('takes the keys the SDK derives from labels (property and options), as it derives them itself', async () => {
    const { key } = await h.createOrg();
    for (const [index, label] of LABELS.entries()) {
      const response = await create(key, {
        key: keyFromName(label, 'property'),
        label,
        kind: 'MULTI_SELECT',
        options: [
          { key: keyFromName(label, 'option'), label },
          { key: keyFromName(`${index} other`, 'option'), label: 'o' },
        ],
      });
      expect(response.status, label).toBe(201);
      const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: label } });
      expect(stage.status, label).toBe(201);
      // Each stage name is new here, so the server's derived key is the rule's own (no `_2` variant).
      expect(stage.body.key, label).toBe(keyFromName(label));
    }
  });

  it('refuses a taken key with 409 duplicate_key, per organization', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, { key: 'plan', label: 'Plan', kind: 'TEXT' });
    const again = await create(key, { key: 'plan', label: 'Other', kind: 'NUMBER' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: { code: 'duplicate_key', key: 'plan', id: first.body.id } });
    const other = await h.createOrg();
    expect((await create(other.key, { key: 'plan', label: 'Plan', kind: 'TEXT' })).status).toBe(201);
  });

  it.each(['RADIO', 'DROPDOWN', 'MULTI_SELECT'])('a %s property needs at least one option', async (kind) => {
    const { key } = await h.createOrg();
    for (const body of [{}, { options: [] }]) {
      const response = await create(key, { key: 'x', label: 'X', kind, ...body });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'options']);
    }
  });

  it('refuses options on other kinds and repeated option keys', async () => {
    const { key } = await h.createOrg();
    const onText = await create(key, { key: 'x', label: 'X', kind: 'TEXT', options: [{ key: 'a', label: 'A' }] });
    expect(onText.body.detail[0].loc).toEqual(['body', 'options']);
    const repeated = await create(key, {
      key: 'x',
      label: 'X',
      kind: 'RADIO',
      options: [
        { key: 'a', label: 'A' },
        { key: 'a', label: 'B' },
      ],
    });
    expect(repeated.body.detail[0].loc).toEqual(['body', 'options', 1, 'key']);
  });

  it('a MONEY property needs an ISO 4217 currency; other kinds take none', async () => {
    const { key } = await h.createOrg();
    for (const [body, status] of [
      [{ kind: 'MONEY' }, 422],
      [{ kind: 'MONEY', currency: null }, 422],
      [{ kind: 'MONEY', currency: 'usd' }, 422],
      [{ kind: 'MONEY', currency: 'XYZ' }, 422],
      [{ kind: 'NUMBER', currency: 'USD' }, 422],
      [{ kind: 'MONEY', currency: 'MXN' }, 201],
    ] as const) {
      const response = await create(key, { key: 'm', label: 'M', ...body });
      expect(response.status, JSON.stringify(body)).toBe(status);
      if (status === 422) expect(response.body.detail[0].loc).toEqual(['body', 'currency']);
    }
  });

  it('refuses an unknown kind', async () => {
    const { key } = await h.createOrg();
    const response = await create(key, { key: 'x', label: 'X', kind: 'COLOR' });
    expect(response.body.detail[0]).toMatchObject({ loc: ['body', 'kind'], type: 'enum' });
  });
});

describe('read, list, update', () => {
  it('list returns every property in order, archived ones too; read returns one; other orgs 404', async () => {
    const { key } = await h.createOrg();
    const a = await create(key, { key: 'a', label: 'A', kind: 'TEXT' });
    const b = await create(key, { key: 'b', label: 'B', kind: 'DATE' });
    await h.api('PATCH', `/v1/properties/${a.body.id}`, { key, body: { archived: true } });
    const list = await h.api('GET', '/v1/properties', { key });
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['items']);
    expect(list.body.items.map((p: any) => p.key)).toEqual(['a', 'b']);
    expect((await h.api('GET', `/v1/properties/${b.body.id}`, { key })).body).toEqual(b.body);
    const other = await h.createOrg();
    expect((await h.api('GET', `/v1/properties/${b.body.id}`, { key: other.key })).status).toBe(404);
    expect((await h.api('PATCH', `/v1/properties/${b.body.id}`, { key: other.key, body: { label: 'x' } })).status).toBe(
      404,
    );
    expect((await h.api('DELETE', `/v1/properties/${b.body.id}`, { key: other.key })).status).toBe(404);
    expect((await h.api('GET', '/v1/properties', { key: other.key })).body.items).toEqual([]);
  });

  it('updates label, description, options, currency and required; the kind cannot change; the key is fixed', async () => {
    const { key } = await h.createOrg();
    const p = await create(key, { key: 'tier', label: 'Tier', kind: 'DROPDOWN', options: [{ key: 'a', label: 'A' }] });
    const url = `/v1/properties/${p.body.id}`;
    const updated = await h.api('PATCH', url, {
      key,
      body: {
        label: 'Level',
        description: 'How big',
        options: [{ key: 'b', label: 'B' }],
        required: true,
        kind: 'DROPDOWN',
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ label: 'Level', description: 'How big', required: true, kind: 'DROPDOWN' });
    expect(updated.body.options).toEqual([{ key: 'b', label: 'B' }]);
    const kind = await h.api('PATCH', url, { key, body: { kind: 'TEXT' } });
    expect(kind.status).toBe(422);
    expect(kind.body.detail[0].loc).toEqual(['body', 'kind']);
    expect((await h.api('PATCH', url, { key, body: { key: 'other' } })).body.detail[0].type).toBe('extra_forbidden');
    expect((await h.api('PATCH', url, { key, body: { options: [] } })).status).toBe(422);
    const money = await create(key, { key: 'price', label: 'Price', kind: 'MONEY', currency: 'USD' });
    const murl = `/v1/properties/${money.body.id}`;
    expect((await h.api('PATCH', murl, { key, body: { currency: 'BRL' } })).body.currency).toBe('BRL');
    expect((await h.api('PATCH', murl, { key, body: { currency: null } })).status).toBe(422);
    expect((await h.api('GET', url, { key })).body.kind).toBe('DROPDOWN');
  });

  it('archives and unarchives; archiving twice keeps the first time', async () => {
    const { key } = await h.createOrg();
    const p = await create(key, { key: 'x', label: 'X', kind: 'TEXT' });
    const url = `/v1/properties/${p.body.id}`;
    const archived = await h.api('PATCH', url, { key, body: { archived: true } });
    expect(archived.body.archived_at).toEqual(expect.any(String));
    // A second archive at a later time would show a later time: wait for the clock to pass the first.
    await waitUntil(() => Date.now() > Date.parse(archived.body.archived_at), { intervalMs: 1, message: 'the clock' });
    const again = await h.api('PATCH', url, { key, body: { archived: true } });
    expect(again.body.archived_at).toBe(archived.body.archived_at);
    expect((await h.api('PATCH', url, { key, body: { archived: false } })).body.archived_at).toBeNull();
  });
});

describe('reorder', () => {
  async function four(key: string) {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd'])
      ids.push((await create(key, { key: name, label: name, kind: 'TEXT' })).body.id);
    return ids;
  }
  const keys = (response: any) => response.body.items.map((p: any) => `${p.key}${p.order_idx}`);

  it('moves the named properties and renumbers the rest (200 with the full list)', async () => {
    const { key } = await h.createOrg();
    const [a, b, c, d] = await four(key);
    const moved = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: { items: [{ property_id: d, order_idx: 0 }] },
    });
    expect(moved.status).toBe(200);
    expect(keys(moved)).toEqual(['d0', 'a1', 'b2', 'c3']);
    const swap = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: {
        items: [
          { property_id: a, order_idx: 3 },
          { property_id: c, order_idx: 0 },
        ],
      },
    });
    expect(keys(swap)).toEqual(['c0', 'd1', 'b2', 'a3']);
    const past = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: { items: [{ property_id: c, order_idx: 99 }] },
    });
    expect(keys(past)).toEqual(['d0', 'b1', 'a2', 'c3']);
    expect((await h.api('GET', '/v1/properties', { key })).body).toEqual(past.body);
    expect(b).toBeDefined();
  });

  it('refuses unknown ids (also another org’s) whole, with missing_ids, and changes nothing', async () => {
    const { key } = await h.createOrg();
    const [a] = await four(key);
    const other = await h.createOrg();
    const theirs = (await create(other.key, { key: 'z', label: 'z', kind: 'TEXT' })).body.id;
    const before = await h.api('GET', '/v1/properties', { key });
    const response = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: {
        items: [
          { property_id: a, order_idx: 3 },
          { property_id: 'prop_nope', order_idx: 0 },
          { property_id: theirs, order_idx: 1 },
        ],
      },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toMatchObject({ code: 'unknown_ids', missing_ids: ['prop_nope', theirs] });
    expect((await h.api('GET', '/v1/properties', { key })).body).toEqual(before.body);
  });

  it('takes 1 to 100 items, each once', async () => {
    const { key } = await h.createOrg();
    const [a] = await four(key);
    expect((await h.api('POST', '/v1/properties/reorder', { key, body: { items: [] } })).body.detail[0].loc).toEqual([
      'body',
      'items',
    ]);
    const many = Array.from({ length: 101 }, (_, i) => ({ property_id: `p${i}`, order_idx: i }));
    expect((await h.api('POST', '/v1/properties/reorder', { key, body: { items: many } })).body.detail[0].loc).toEqual([
      'body',
      'items',
    ]);
    const twice = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: {
        items: [
          { property_id: a, order_idx: 0 },
          { property_id: a, order_idx: 1 },
        ],
      },
    });
    expect(twice.status).toBe(422);
    expect(twice.body.detail[0].loc).toEqual(['body', 'items', 1, 'property_id']);
    const negative = await h.api('POST', '/v1/properties/reorder', {
      key,
      body: { items: [{ property_id: a, order_idx: -1 }] },
    });
    expect(negative.body.detail[0].loc).toEqual(['body', 'items', 0, 'order_idx']);
  });

  it('concurrent reorders leave a clean 0..n-1 sequence', async () => {
    const { key } = await h.createOrg();
    const ids = await four(key);
    await Promise.all(
      ids.map((id, i) =>
        h.api('POST', '/v1/properties/reorder', { key, body: { items: [{ property_id: id, order_idx: 3 - i }] } }),
      ),
    );
    const list = await h.api('GET', '/v1/properties', { key });
    expect(list.body.items.map((p: any) => p.order_idx)).toEqual([0, 1, 2, 3]);
  });
});

describe('delete', () => {
  it('answers 204 without a body, then 404; the key can be used again', async () => {
    const { key } = await h.createOrg();
    const p = await create(key, { key: 'x', label: 'X', kind: 'TEXT' });
    const deleted = await h.api('DELETE', `/v1/properties/${p.body.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await h.api('GET', `/v1/properties/${p.body.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/properties/${p.body.id}`, { key })).status).toBe(404);
    expect((await create(key, { key: 'x', label: 'X', kind: 'NUMBER' })).status).toBe(201);
  });
});

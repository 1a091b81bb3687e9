// Funnel stages (contract: Funnel stage; decisions §1, §6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/funnel-stages', { key, body });
const stages = async (key: string) => (await h.api('GET', '/v1/funnel-stages', { key })).body.items as any[];
const initials = async (key: string) =>
  (await stages(key)).filter((stage) => stage.is_initial).map((stage) => stage.id);

describe('create', () => {
  it('answers 201; the first stage is initial, later ones are not; order follows creation', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, { name: 'New lead', description: 'Just arrived' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^stage_/),
      name: 'New lead',
      key: 'new_lead',
      description: 'Just arrived',
      order_idx: 0,
      is_initial: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await create(key, { name: 'Won', key: 'closed_won' });
    expect(second.body).toMatchObject({ key: 'closed_won', order_idx: 1, is_initial: false, description: '' });
    const list = await h.api('GET', '/v1/funnel-stages', { key });
    expect(Object.keys(list.body)).toEqual(['items']);
    expect(list.body.items.map((s: any) => s.id)).toEqual([first.body.id, second.body.id]);
    expect((await h.api('GET', `/v1/funnel-stages/${second.body.id}`, { key })).body).toEqual(second.body);
  });

  it.each([
    ['Qualified Lead!', 'qualified_lead'],
    ['Ação Comercial', 'acao_comercial'],
    ['2nd call', 'stage_2nd_call'],
    ['🔥🔥', 'stage'],
  ])('derives the key of %j as %j', async (name, expected) => {
    const { key } = await h.createOrg();
    expect((await create(key, { name })).body.key).toBe(expected);
  });

  it('derives a free key when the derived one is taken; an explicit taken key is a 409', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, { name: 'Lead' });
    expect((await create(key, { name: 'lead' })).body.key).toBe('lead_2');
    expect((await create(key, { name: 'LEAD' })).body.key).toBe('lead_3');
    const taken = await create(key, { name: 'Other', key: 'lead' });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ detail: { code: 'duplicate_key', key: 'lead', id: first.body.id } });
  });

  it('refuses a bad key or name', async () => {
    const { key } = await h.createOrg();
    expect((await create(key, { name: 'x', key: 'Bad Key' })).body.detail[0].loc).toEqual(['body', 'key']);
    expect((await create(key, { name: '' })).body.detail[0].loc).toEqual(['body', 'name']);
    expect((await create(key, {})).body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'missing' });
  });

  it('concurrent first creates make exactly one initial stage', async () => {
    const { key } = await h.createOrg();
    const responses = await Promise.all(Array.from({ length: 8 }, (_, i) => create(key, { name: `s${i}` })));
    expect(responses.every((response) => response.status === 201)).toBe(true);
    expect(await initials(key)).toHaveLength(1);
  });
});

describe('update', () => {
  it('renames and rekeys; other organizations see 404', async () => {
    const { key } = await h.createOrg();
    const stage = await create(key, { name: 'A' });
    const taken = await create(key, { name: 'B' });
    const url = `/v1/funnel-stages/${stage.body.id}`;
    const updated = await h.api('PATCH', url, { key, body: { name: 'Alpha', description: 'first', key: 'alpha' } });
    expect(updated.body).toMatchObject({ name: 'Alpha', description: 'first', key: 'alpha', is_initial: true });
    const clash = await h.api('PATCH', url, { key, body: { key: taken.body.key } });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toMatchObject({ code: 'duplicate_key', id: taken.body.id });
    const other = await h.createOrg();
    expect((await h.api('PATCH', url, { key: other.key, body: { name: 'x' } })).status).toBe(404);
    expect((await h.api('GET', url, { key: other.key })).status).toBe(404);
  });

  it('is_initial: true moves the flag; false on the initial stage is a 422', async () => {
    const { key } = await h.createOrg();
    const a = await create(key, { name: 'A' });
    const b = await create(key, { name: 'B' });
    const moved = await h.api('PATCH', `/v1/funnel-stages/${b.body.id}`, { key, body: { is_initial: true } });
    expect(moved.body.is_initial).toBe(true);
    expect(await initials(key)).toEqual([b.body.id]);
    const unset = await h.api('PATCH', `/v1/funnel-stages/${b.body.id}`, { key, body: { is_initial: false } });
    expect(unset.status).toBe(422);
    expect(unset.body.detail[0].loc).toEqual(['body', 'is_initial']);
    const noop = await h.api('PATCH', `/v1/funnel-stages/${a.body.id}`, { key, body: { is_initial: false } });
    expect(noop.status).toBe(200);
    expect(await initials(key)).toEqual([b.body.id]);
  });

  it('exactly one stays initial under concurrent updates', async () => {
    const { key } = await h.createOrg();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await create(key, { name: `s${i}` })).body.id);
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(
        ids.map((id) => h.api('PATCH', `/v1/funnel-stages/${id}`, { key, body: { is_initial: true } })),
      );
      expect(responses.map((response) => response.status)).toEqual(ids.map(() => 200));
      expect(await initials(key)).toHaveLength(1);
    }
  });
});

describe('reorder', () => {
  it('moves stages, renumbers, and refuses unknown ids with missing_ids', async () => {
    const { key } = await h.createOrg();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await create(key, { name })).body.id);
    const moved = await h.api('POST', '/v1/funnel-stages/reorder', {
      key,
      body: { items: [{ stage_id: ids[2], order_idx: 0 }] },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.items.map((s: any) => `${s.key}${s.order_idx}`)).toEqual(['c0', 'a1', 'b2']);
    const unknown = await h.api('POST', '/v1/funnel-stages/reorder', {
      key,
      body: {
        items: [
          { stage_id: ids[0], order_idx: 2 },
          { stage_id: 'stage_nope', order_idx: 0 },
        ],
      },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toMatchObject({
      code: 'unknown_ids',
      missing_ids: ['stage_nope'],
      reason: expect.any(String),
    });
    expect((await stages(key)).map((s) => s.key)).toEqual(['c', 'a', 'b']);
    expect((await h.api('POST', '/v1/funnel-stages/reorder', { key, body: { items: [] } })).status).toBe(422);
    const many = Array.from({ length: 101 }, (_, i) => ({ stage_id: `s${i}`, order_idx: i }));
    expect((await h.api('POST', '/v1/funnel-stages/reorder', { key, body: { items: many } })).status).toBe(422);
  });
});

describe('delete', () => {
  it('an empty stage: 204 without a body, then 404', async () => {
    const { key } = await h.createOrg();
    await create(key, { name: 'A' });
    const b = await create(key, { name: 'B' });
    const deleted = await h.api('DELETE', `/v1/funnel-stages/${b.body.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await h.api('GET', `/v1/funnel-stages/${b.body.id}`, { key })).status).toBe(404);
  });

  it('a stage holding contacts is a 409 stage_in_use unless move_to is given', async () => {
    const { key } = await h.createOrg();
    const a = await create(key, { name: 'A' });
    const b = await create(key, { name: 'B' });
    const contact = await h.api('POST', '/v1/contacts', { key, body: { funnel_stage_id: b.body.id } });
    const refused = await h.api('DELETE', `/v1/funnel-stages/${b.body.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatchObject({
      code: 'stage_in_use',
      stages: [b.body.id],
      contact_count: 1,
      reason: expect.any(String),
    });
    const bad = await h.api('DELETE', `/v1/funnel-stages/${b.body.id}?move_to=stage_nope`, { key });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'move_to']);
    const self = await h.api('DELETE', `/v1/funnel-stages/${b.body.id}?move_to=${b.body.id}`, { key });
    expect(self.status).toBe(422);
    const moved = await h.api('DELETE', `/v1/funnel-stages/${b.body.id}?move_to=${a.body.id}`, { key });
    expect(moved.status).toBe(204);
    expect((await h.api('GET', `/v1/contacts/${contact.body.id}`, { key })).body.funnel_stage_id).toBe(a.body.id);
  });

  it('racing contact creates: the delete either wins (no contact left in the stage) or answers stage_in_use', async () => {
    const { key } = await h.createOrg();
    await create(key, { name: 'A' });
    for (let round = 0; round < 3; round++) {
      const b = await create(key, { name: `B${round}` });
      const [deleted, ...created] = await Promise.all([
        h.api('DELETE', `/v1/funnel-stages/${b.body.id}`, { key }),
        ...Array.from({ length: 10 }, () =>
          h.api('POST', '/v1/contacts', { key, body: { funnel_stage_id: b.body.id } }),
        ),
      ]);
      for (const response of created) expect([201, 422]).toContain(response.status);
      expect([204, 409]).toContain(deleted?.status);
      const inStage = await h.api('GET', `/v1/contacts?funnel_stage_ids=${b.body.id}`, { key });
      if (deleted?.status === 204) expect(inStage.body.total_count).toBe(0);
      else expect(inStage.body.total_count).toBeGreaterThan(0);
      expect(inStage.body.total_count).toBe(created.filter((response) => response.status === 201).length);
    }
  });

  it('deleted contacts do not hold a stage', async () => {
    const { key } = await h.createOrg();
    await create(key, { name: 'A' });
    const b = await create(key, { name: 'B' });
    const contact = await h.api('POST', '/v1/contacts', { key, body: { funnel_stage_id: b.body.id } });
    await h.api('DELETE', `/v1/contacts/${contact.body.id}`, { key });
    expect((await h.api('DELETE', `/v1/funnel-stages/${b.body.id}`, { key })).status).toBe(204);
  });

  it('deleting the initial stage passes the flag to move_to, else to the first remaining stage', async () => {
    const { key } = await h.createOrg();
    const a = await create(key, { name: 'A' });
    const b = await create(key, { name: 'B' });
    const c = await create(key, { name: 'C' });
    await h.api('DELETE', `/v1/funnel-stages/${a.body.id}?move_to=${c.body.id}`, { key });
    expect(await initials(key)).toEqual([c.body.id]);
    await h.api('DELETE', `/v1/funnel-stages/${c.body.id}`, { key });
    expect(await initials(key)).toEqual([b.body.id]);
    await h.api('DELETE', `/v1/funnel-stages/${b.body.id}`, { key });
    expect(await stages(key)).toEqual([]);
    expect((await create(key, { name: 'D' })).body.is_initial).toBe(true);
  });

  it('another organization’s stage is a 404, and so is its move_to target as a 422', async () => {
    const mine = await h.createOrg();
    const theirs = await h.createOrg();
    const a = await create(mine.key, { name: 'A' });
    const t = await create(theirs.key, { name: 'T' });
    expect((await h.api('DELETE', `/v1/funnel-stages/${a.body.id}`, { key: theirs.key })).status).toBe(404);
    await h.api('POST', '/v1/contacts', { key: mine.key, body: {} });
    const cross = await h.api('DELETE', `/v1/funnel-stages/${a.body.id}?move_to=${t.body.id}`, { key: mine.key });
    expect(cross.status).toBe(422);
  });
});

// decisions §20: automation rules through the public API — CRUD, position order, every 422 at its place, the
// limits (100 rules, 20 conditions, 10 actions), and runs (newest first, paginated, kept 30 days).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const create = (key: string, body: unknown) => h.api('POST', '/v1/automation-rules', { key, body });
const greeting = {
  name: 'Greeting',
  event: 'conversation.created',
  conditions: [{ field: 'message.text', operator: 'contains', value: 'hello' }],
  actions: [{ type: 'send_text', text: 'Hi! A person will answer soon.' }],
};
const locs = (response: { body: { detail: { loc: unknown }[] } }) => response.body.detail.map((issue) => issue.loc);

describe('CRUD', () => {
  it('creates with defaults, reads, lists by position, updates and deletes', async () => {
    const { key } = await h.createOrg();
    const first = await create(key, greeting);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^rule_/),
      ...greeting,
      active: true,
      stop: false,
      position: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await create(key, {
      name: 'Urgent',
      event: 'message.received',
      conditions: [
        { field: 'message.text', operator: 'matches', value: '\\b(urgent|asap)\\b' },
        { field: 'within_business_hours', operator: 'equals', value: false },
        { field: 'contact.properties.plan', operator: 'equals', value: 'gold' },
      ],
      actions: [
        { type: 'set_priority', priority: 'urgent' },
        { type: 'add_labels', labels: ['vip', 'after-hours'] },
        { type: 'assign', assignee: { type: 'ai' } },
        { type: 'assign', assignee: null },
        { type: 'assign_team', team_id: null },
        { type: 'set_status', status: 'pending' },
        { type: 'add_note', text: 'Came in after hours.' },
      ],
      stop: true,
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    expect(second.body.position).toBe(1);
    const early = await create(key, { ...greeting, name: 'Early', position: 0 });
    expect((await h.api('GET', '/v1/automation-rules', { key })).body.items.map((rule: any) => rule.name)).toEqual([
      'Greeting',
      'Early',
      'Urgent',
    ]);
    const moved = await h.api('PATCH', `/v1/automation-rules/${second.body.id}`, {
      key,
      body: { position: 0, active: false },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ position: 0, active: false, stop: true, name: 'Urgent' });
    const read = await h.api('GET', `/v1/automation-rules/${second.body.id}`, { key });
    expect(read.body).toEqual(moved.body);
    expect((await h.api('DELETE', `/v1/automation-rules/${early.body.id}`, { key })).status).toBe(204);
    expect((await h.api('GET', `/v1/automation-rules/${early.body.id}`, { key })).status).toBe(404);
    expect((await h.api('DELETE', `/v1/automation-rules/${early.body.id}`, { key })).status).toBe(404);
  });

  it('answers 404 for another organization’s rule', async () => {
    const { key } = await h.createOrg();
    const { key: otherKey } = await h.createOrg();
    const rule = await create(key, greeting);
    expect((await h.api('GET', `/v1/automation-rules/${rule.body.id}`, { key: otherKey })).status).toBe(404);
    expect(
      (await h.api('PATCH', `/v1/automation-rules/${rule.body.id}`, { key: otherKey, body: { name: 'x' } })).status,
    ).toBe(404);
    expect((await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs`, { key: otherKey })).status).toBe(404);
  });
});

describe('422 at its place, nothing written', () => {
  it.each([
    [
      'an unknown field',
      { conditions: [{ field: 'contact.mood', operator: 'equals', value: 'x' }] },
      ['body', 'conditions', 0, 'field'],
    ],
    [
      'a property key that is not a key',
      { conditions: [{ field: 'contact.properties.Bad Key', operator: 'equals', value: 'x' }] },
      ['body', 'conditions', 0, 'field'],
    ],
    [
      'an operator the field does not take',
      { conditions: [{ field: 'message.type', operator: 'contains', value: 'text' }] },
      ['body', 'conditions', 0, 'operator'],
    ],
    [
      'an unknown operator',
      { conditions: [{ field: 'message.text', operator: 'like', value: 'x' }] },
      ['body', 'conditions', 0, 'operator'],
    ],
    [
      'a pattern that does not compile',
      { conditions: [{ field: 'message.text', operator: 'matches', value: '(abc' }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      'a pattern RE2 does not take (lookahead)',
      { conditions: [{ field: 'message.text', operator: 'matches', value: 'a(?=b)' }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      'a pattern of 201 characters',
      { conditions: [{ field: 'message.text', operator: 'matches', value: 'a'.repeat(201) }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      'a non-boolean business-hours value',
      { conditions: [{ field: 'within_business_hours', operator: 'equals', value: 'yes' }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      'an unknown status',
      { conditions: [{ field: 'conversation.status', operator: 'equals', value: 'closed' }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      'an assignee who is not a user',
      { conditions: [{ field: 'conversation.assignee', operator: 'equals', value: 'usr_nobody' }] },
      ['body', 'conditions', 0, 'value'],
    ],
    [
      '21 conditions',
      { conditions: Array.from({ length: 21 }, () => ({ field: 'message.text', operator: 'contains', value: 'x' })) },
      ['body', 'conditions'],
    ],
    [
      'an unknown action',
      { actions: [{ type: 'send_text', text: 'ok' }, { type: 'explode' }] },
      ['body', 'actions', 1, 'type'],
    ],
    ['an action missing its field', { actions: [{ type: 'send_text' }] }, ['body', 'actions', 0, 'text']],
    [
      'a field of another action',
      { actions: [{ type: 'send_text', text: 'x', labels: ['a'] }] },
      ['body', 'actions', 0, 'labels'],
    ],
    ['a text too long', { actions: [{ type: 'send_text', text: 'x'.repeat(4097) }] }, ['body', 'actions', 0, 'text']],
    [
      'labels twice ignoring case',
      { actions: [{ type: 'add_labels', labels: ['VIP', 'vip'] }] },
      ['body', 'actions', 0, 'labels', 1],
    ],
    [
      'a label with spaces around',
      { actions: [{ type: 'add_labels', labels: [' vip'] }] },
      ['body', 'actions', 0, 'labels', 0],
    ],
    [
      'a user not of the organization',
      { actions: [{ type: 'assign', assignee: { type: 'user', id: 'usr_nobody' } }] },
      ['body', 'actions', 0, 'assignee', 'id'],
    ],
    [
      'an assignee of no shape',
      { actions: [{ type: 'assign', assignee: { type: 'robot' } }] },
      ['body', 'actions', 0, 'assignee'],
    ],
    [
      'an unknown team',
      { actions: [{ type: 'assign_team', team_id: 'team_nobody' }] },
      ['body', 'actions', 0, 'team_id'],
    ],
    [
      'an unknown status to set',
      { actions: [{ type: 'set_status', status: 'closed' }] },
      ['body', 'actions', 0, 'status'],
    ],
    [
      'a snooze without snoozed',
      { actions: [{ type: 'set_status', status: 'open', snoozed_until: '2099-01-01T00:00:00Z' }] },
      ['body', 'actions', 0, 'snoozed_until'],
    ],
    [
      'an unknown priority',
      { actions: [{ type: 'set_priority', priority: 'extreme' }] },
      ['body', 'actions', 0, 'priority'],
    ],
    [
      '11 actions',
      { actions: Array.from({ length: 11 }, () => ({ type: 'send_text', text: 'x' })) },
      ['body', 'actions'],
    ],
    ['no action', { actions: [] }, ['body', 'actions']],
    ['an unknown event', { event: 'contact.created' }, ['body', 'event']],
    ['a name too long', { name: 'x'.repeat(101) }, ['body', 'name']],
  ])('refuses %s', async (_label, change, loc) => {
    const { key } = await h.createOrg();
    const refused = await create(key, { ...greeting, ...change });
    expect(refused.status).toBe(422);
    expect(locs(refused)).toContainEqual(loc);
    expect((await h.api('GET', '/v1/automation-rules', { key })).body.items).toEqual([]);
    // PATCH refuses the same, at the same place.
    const rule = await create(key, greeting);
    const patched = await h.api('PATCH', `/v1/automation-rules/${rule.body.id}`, { key, body: change });
    expect(patched.status).toBe(422);
    expect(locs(patched)).toContainEqual(loc);
    expect((await h.api('GET', `/v1/automation-rules/${rule.body.id}`, { key })).body).toEqual(rule.body);
  });

  it('takes a user of the organization as assignee, in a condition and an action', async () => {
    const { org, key } = await h.createOrg();
    const user = await h.admin('POST', `/organizations/${org.id}/users`, {
      email: 'ana@example.com',
      name: 'Ana',
      role: 'agent',
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const created = await create(key, {
      ...greeting,
      conditions: [{ field: 'conversation.assignee', operator: 'equals', value: user.body.id }],
      actions: [{ type: 'assign', assignee: { type: 'user', id: user.body.id } }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });

  it('refuses the 101st rule with automation_rule_limit', async () => {
    const { key } = await h.createOrg();
    // 90 in groups of ten, then 11 at once for the last 10 places: exactly one is refused. (101 at once would wait
    // on one lock with the database pool's connections, and past its wait a loaded machine answers 503 service_busy.)
    for (let group = 0; group < 9; group += 1) {
      const created = await Promise.all(Array.from({ length: 10 }, () => create(key, greeting)));
      expect(created.map((result) => result.status)).toEqual(Array(10).fill(201));
    }
    const results = await Promise.all(Array.from({ length: 11 }, () => create(key, greeting)));
    expect(results.filter((result) => result.status === 201)).toHaveLength(10);
    const refused = results.find((result) => result.status === 422);
    expect(refused?.body.detail).toMatchObject({ code: 'automation_rule_limit', limit: 100 });
  });
});

describe('runs', () => {
  it('lists none for a new rule, and refuses a cursor of another list', async () => {
    const { key } = await h.createOrg();
    const rule = await create(key, greeting);
    const runs = await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs`, { key });
    expect(runs.status).toBe(200);
    expect(runs.body).toEqual({ items: [], next_cursor: null });
    const bad = await h.api('GET', `/v1/automation-rules/${rule.body.id}/runs?cursor=nonsense`, { key });
    expect(bad.status).toBe(422);
    expect(locs(bad)).toContainEqual(['query', 'cursor']);
  });
});

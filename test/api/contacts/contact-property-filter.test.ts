// property_filter: `KEY:OP:VALUE` entries, ANDed; operators eq neq gt gte lt lte contains in exists (decisions §2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  key = (await h.createOrg()).key;
  const options = [
    { key: 'red', label: 'Red' },
    { key: 'blue', label: 'Blue' },
    { key: 'green', label: 'Green' },
  ];
  for (const body of [
    { key: 'note', label: 'Note', kind: 'TEXT' },
    { key: 'budget', label: 'Budget', kind: 'MONEY', currency: 'EUR' },
    { key: 'score', label: 'Score', kind: 'NUMBER' },
    { key: 'vip', label: 'VIP', kind: 'BOOLEAN' },
    { key: 'since', label: 'Since', kind: 'DATE' },
    { key: 'color', label: 'Color', kind: 'DROPDOWN', options },
    { key: 'tags', label: 'Tags', kind: 'MULTI_SELECT', options },
    { key: 'doc', label: 'Doc', kind: 'FILE' },
  ]) {
    expect((await h.api('POST', '/v1/properties', { key, body })).status).toBe(201);
  }
  const contacts: [string, Record<string, unknown>][] = [
    [
      'a',
      {
        note: 'Hello, World',
        budget: 100,
        score: 1,
        vip: true,
        since: '2026-01-10',
        color: 'red',
        tags: ['red', 'blue'],
        doc: true,
      },
    ],
    [
      'b',
      { note: 'goodbye 50%', budget: 250.5, score: 2, vip: false, since: '2026-02-01', color: 'blue', tags: ['blue'] },
    ],
    ['c', { note: 'hello again', budget: 250.5, score: 3, color: 'green', tags: ['green'] }],
    ['d', {}],
  ];
  const slot: Record<string, [string, string]> = {
    note: ['TEXT', 'value_text'],
    budget: ['MONEY', 'value_number'],
    score: ['NUMBER', 'value_number'],
    vip: ['BOOLEAN', 'value_bool'],
    since: ['DATE', 'value_date'],
    color: ['DROPDOWN', 'value_text'],
    tags: ['MULTI_SELECT', 'value_json'],
    doc: ['FILE', 'value_json'],
  };
  for (const [name, values] of contacts) {
    const properties = Object.fromEntries(
      Object.entries(values).map(([property, value]) => {
        const [kind, field] = slot[property] as [string, string];
        const stored = property === 'doc' ? [{ url: 'https://x.io/a.pdf' }] : value;
        return [property, { kind, [field]: stored }];
      }),
    );
    expect((await h.api('POST', '/v1/contacts', { key, body: { first_name: name, properties } })).status).toBe(201);
  }
});
afterAll(() => h.close());

async function matching(...filters: string[]) {
  const query = filters.map((filter) => `property_filter=${encodeURIComponent(filter)}`).join('&');
  const response = await h.api('GET', `/v1/contacts?sort=name&${query}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.total_count).toBe(response.body.items.length);
  return response.body.items.map((item: { first_name: string }) => item.first_name);
}

describe('operators', () => {
  it.each([
    ['note:eq:Hello, World', ['a']],
    ['note:eq:hello, world', []],
    ['note:neq:Hello, World', ['b', 'c', 'd']],
    ['note:contains:HELLO', ['a', 'c']],
    ['note:contains:50%', ['b']],
    ['note:contains:%', ['b']],
    ['note:in:hello again|goodbye 50%', ['b', 'c']],
    ['note:exists:true', ['a', 'b', 'c']],
    ['note:exists:false', ['d']],
    ['budget:eq:250.5', ['b', 'c']],
    ['budget:gt:100', ['b', 'c']],
    ['budget:gte:100', ['a', 'b', 'c']],
    ['budget:lt:250.5', ['a']],
    ['budget:lte:250.5', ['a', 'b', 'c']],
    ['budget:in:100|7', ['a']],
    ['score:neq:2', ['a', 'c', 'd']],
    ['vip:eq:true', ['a']],
    ['vip:eq:false', ['b']],
    ['vip:neq:true', ['b', 'c', 'd']],
    ['since:gte:2026-01-15', ['b']],
    ['since:lt:2026-01-15', ['a']],
    ['since:eq:2026-02-01', ['b']],
    ['color:in:red|green', ['a', 'c']],
    ['tags:contains:blue', ['a', 'b']],
    ['tags:eq:green', ['c']],
    ['tags:in:red|green', ['a', 'c']],
    ['tags:neq:blue', ['c', 'd']],
    ['doc:exists:true', ['a']],
  ])('%s', async (filter, expected) => {
    expect(await matching(filter)).toEqual(expected);
  });

  it('entries are ANDed, as repeated keys', async () => {
    expect(await matching('budget:eq:250.5', 'note:contains:hello')).toEqual(['c']);
    expect(await matching('budget:gte:100', 'vip:exists:false', 'score:gt:2')).toEqual(['c']);
  });

  it('entries may also come comma-separated; a comma not followed by KEY:OP: belongs to the value', async () => {
    expect(await matching('note:exists:true,budget:gt:100')).toEqual(['b', 'c']);
    expect(await matching('note:eq:Hello, World,vip:eq:true')).toEqual(['a']);
  });

  it('at most 20 entries', async () => {
    const many = Array.from({ length: 21 }, () => 'note:exists:true').join(',');
    const response = await h.api('GET', `/v1/contacts?property_filter=${many}`, { key });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'property_filter']);
  });

  it('combine with the other filters, sorts and cursors', async () => {
    const first = await h.api('GET', '/v1/contacts?sort=name&limit=1&property_filter=budget:gte:100', { key });
    expect(first.body.items.map((c: any) => c.first_name)).toEqual(['a']);
    expect(first.body.total_count).toBe(3);
    const second = await h.api(
      'GET',
      `/v1/contacts?sort=name&limit=5&property_filter=budget:gte:100&cursor=${first.body.next_cursor}`,
      { key },
    );
    expect(second.body.items.map((c: any) => c.first_name)).toEqual(['b', 'c']);
    const other = await h.api(
      'GET',
      `/v1/contacts?sort=name&property_filter=budget:gt:100&cursor=${first.body.next_cursor}`,
      { key },
    );
    expect(other.status).toBe(422);
  });
});

describe('refused entries', () => {
  it.each([
    ['nokey:eq:1', 'Unknown property'],
    ['budget', 'Expected KEY:OP:VALUE'],
    ['budget:like:1', 'Expected KEY:OP:VALUE'],
    ['budget:gt:lots', 'not a number'],
    ['since:gt:2026-02-30', 'not a date'],
    ['vip:eq:yes', 'not true or false'],
    ['note:gt:a', 'does not apply'],
    ['doc:eq:x', 'does not apply'],
    ['note:exists:maybe', 'true or false'],
  ])('%s is a 422 at ["query","property_filter",index]', async (filter, message) => {
    const response = await h.api(
      'GET',
      `/v1/contacts?property_filter=note:exists:true&property_filter=${encodeURIComponent(filter)}`,
      { key },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'property_filter', 1]);
    expect(response.body.detail[0].msg).toContain(message);
  });
});

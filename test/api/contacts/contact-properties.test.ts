// Custom property values on contacts: every CrmPropertyKind in its slot, read back with `kind` (contract:
// PropertyValue; decisions §5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const options = [
  { key: 'a', label: 'A' },
  { key: 'b', label: 'B' },
  { key: 'c', label: 'C' },
];
const DEFINITIONS = [
  { key: 'p_text', kind: 'TEXT' },
  { key: 'p_textarea', kind: 'TEXTAREA' },
  { key: 'p_email', kind: 'EMAIL' },
  { key: 'p_url', kind: 'URL' },
  { key: 'p_number', kind: 'NUMBER' },
  { key: 'p_money', kind: 'MONEY', currency: 'USD' },
  { key: 'p_bool', kind: 'BOOLEAN' },
  { key: 'p_date', kind: 'DATE' },
  { key: 'p_radio', kind: 'RADIO', options },
  { key: 'p_dropdown', kind: 'DROPDOWN', options },
  { key: 'p_multi', kind: 'MULTI_SELECT', options },
  { key: 'p_file', kind: 'FILE' },
  { key: 'p_files', kind: 'MULTI_FILE' },
];

async function orgWithProperties() {
  const { key } = await h.createOrg();
  const ids: Record<string, string> = {};
  for (const definition of DEFINITIONS) {
    const response = await h.api('POST', '/v1/properties', { key, body: { label: definition.key, ...definition } });
    expect(response.status, definition.key).toBe(201);
    ids[definition.key] = response.body.id;
  }
  return { key, ids };
}

const file = (n: number) => ({
  url: `https://files.example.com/${n}.pdf`,
  name: `${n}.pdf`,
  mime_type: 'application/pdf',
  size: 10,
});
const VALUES: [string, string, string, unknown][] = [
  ['p_text', 'TEXT', 'value_text', 'hello'],
  ['p_textarea', 'TEXTAREA', 'value_text', 'line one\nline two'],
  ['p_email', 'EMAIL', 'value_text', 'x@example.com'],
  ['p_url', 'URL', 'value_text', 'https://example.com/page'],
  ['p_number', 'NUMBER', 'value_number', 42.5],
  ['p_money', 'MONEY', 'value_number', 1999.99],
  ['p_bool', 'BOOLEAN', 'value_bool', false],
  ['p_date', 'DATE', 'value_date', '2026-02-28'],
  ['p_radio', 'RADIO', 'value_text', 'a'],
  ['p_dropdown', 'DROPDOWN', 'value_text', 'b'],
  ['p_multi', 'MULTI_SELECT', 'value_json', ['a', 'c']],
  ['p_file', 'FILE', 'value_json', [file(1)]],
  ['p_files', 'MULTI_FILE', 'value_json', Array.from({ length: 10 }, (_, i) => file(i))],
];
const empty = { value_text: null, value_number: null, value_bool: null, value_date: null, value_json: null };

describe('values of every kind', () => {
  it('are stored in the slot the contract names and read back with kind', async () => {
    const { key, ids } = await orgWithProperties();
    // The writer ignores slots irrelevant to the kind.
    const properties = Object.fromEntries(
      VALUES.map(([property, kind, slot, value]) => [property, { kind, value_text: 'ignored', [slot]: value }]),
    );
    properties.p_text = { kind: 'TEXT', value_text: 'hello', value_number: 7 };
    const created = await h.api('POST', '/v1/contacts', { key, body: { properties } });
    expect(created.status).toBe(201);
    const expected = Object.fromEntries(
      VALUES.map(([property, kind, slot, value]) => [
        property,
        { ...empty, property_id: ids[property], kind, [slot]: value },
      ]),
    );
    expect(created.body.properties).toEqual(expected);
    expect((await h.api('GET', `/v1/contacts/${created.body.id}`, { key })).body.properties).toEqual(expected);
    const list = await h.api('GET', '/v1/contacts', { key });
    expect(list.body.items[0].properties).toEqual(expected);
  });
});

describe('refused values', () => {
  const cases: [string, string, unknown, (string | number)[]][] = [
    ['a wrong kind', 'p_number', { kind: 'TEXT', value_text: '3' }, ['kind']],
    ['a number as a string', 'p_number', { kind: 'NUMBER', value_number: '3' }, ['value_number']],
    ['a missing slot', 'p_number', { kind: 'NUMBER', value_text: '3' }, ['value_number']],
    ['a bad date', 'p_date', { kind: 'DATE', value_date: '2026-02-30' }, ['value_date']],
    ['a bad email', 'p_email', { kind: 'EMAIL', value_text: 'nope' }, ['value_text']],
    ['a non-http URL', 'p_url', { kind: 'URL', value_text: 'javascript:alert(1)' }, ['value_text']],
    ['an unknown RADIO option', 'p_radio', { kind: 'RADIO', value_text: 'z' }, ['value_text']],
    ['an unknown DROPDOWN option', 'p_dropdown', { kind: 'DROPDOWN', value_text: 'A' }, ['value_text']],
    ['an unknown MULTI_SELECT option', 'p_multi', { kind: 'MULTI_SELECT', value_json: ['a', 'z'] }, ['value_json', 1]],
    ['a repeated MULTI_SELECT option', 'p_multi', { kind: 'MULTI_SELECT', value_json: ['a', 'a'] }, ['value_json', 1]],
    ['MULTI_SELECT not a list', 'p_multi', { kind: 'MULTI_SELECT', value_json: 'a' }, ['value_json']],
    ['two files in FILE', 'p_file', { kind: 'FILE', value_json: [file(1), file(2)] }, ['value_json']],
    [
      'eleven files in MULTI_FILE',
      'p_files',
      { kind: 'MULTI_FILE', value_json: Array.from({ length: 11 }, (_, i) => file(i)) },
      ['value_json'],
    ],
    ['a file without url', 'p_files', { kind: 'MULTI_FILE', value_json: [{ name: 'x' }] }, ['value_json', 0]],
    [
      'a file with an unknown field',
      'p_file',
      { kind: 'FILE', value_json: [{ url: 'https://x.io/a', owner: 1 }] },
      ['value_json', 0],
    ],
    [
      'a property_id of another property',
      'p_text',
      { property_id: 'prop_other', kind: 'TEXT', value_text: 'x' },
      ['property_id'],
    ],
    ['a TEXT over 1000 characters', 'p_text', { kind: 'TEXT', value_text: 'x'.repeat(1001) }, ['value_text']],
  ];
  it.each(cases)('%s is a 422 whose loc points at the property', async (_label, property, value, suffix) => {
    const { key } = await orgWithProperties();
    const response = await h.api('POST', '/v1/contacts', { key, body: { properties: { [property]: value } } });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'properties', property, ...suffix]);
    expect((await h.api('GET', '/v1/contacts', { key })).body.total_count).toBe(0);
  });

  it('an unknown property key is a 422 at the key', async () => {
    const { key } = await h.createOrg();
    const response = await h.api('POST', '/v1/contacts', {
      key,
      body: { properties: { nope: { kind: 'TEXT', value_text: 'x' } } },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'properties', 'nope']);
  });

  it('an archived property takes no values, on create or update; unarchived it does again', async () => {
    const { key } = await h.createOrg();
    const property = await h.api('POST', '/v1/properties', { key, body: { key: 'old', label: 'Old', kind: 'TEXT' } });
    const contact = await h.api('POST', '/v1/contacts', { key, body: {} });
    await h.api('PATCH', `/v1/properties/${property.body.id}`, { key, body: { archived: true } });
    const value = { old: { kind: 'TEXT', value_text: 'x' } };
    const created = await h.api('POST', '/v1/contacts', { key, body: { properties: value } });
    expect(created.status).toBe(422);
    expect(created.body.detail[0]).toMatchObject({ loc: ['body', 'properties', 'old'], msg: 'Property is archived' });
    const patched = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, { key, body: { properties: value } });
    expect(patched.status).toBe(422);
    await h.api('PATCH', `/v1/properties/${property.body.id}`, { key, body: { archived: false } });
    expect((await h.api('PATCH', `/v1/contacts/${contact.body.id}`, { key, body: { properties: value } })).status).toBe(
      200,
    );
  });
});

describe('required properties', () => {
  it('are enforced on create only, each missing one named', async () => {
    const { key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'budget', label: 'B', kind: 'NUMBER', required: true } });
    await h.api('POST', '/v1/properties', { key, body: { key: 'plan', label: 'P', kind: 'TEXT', required: true } });
    const missing = await h.api('POST', '/v1/contacts', {
      key,
      body: { properties: { plan: { kind: 'TEXT', value_text: null } } },
    });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((issue: any) => issue.loc)).toEqual([
      ['body', 'properties', 'budget'],
      ['body', 'properties', 'plan'],
    ]);
    expect(missing.body.detail[0].type).toBe('missing');
    const created = await h.api('POST', '/v1/contacts', {
      key,
      body: { properties: { budget: { kind: 'NUMBER', value_number: 1 }, plan: { kind: 'TEXT', value_text: 'x' } } },
    });
    expect(created.status).toBe(201);
    const cleared = await h.api('PATCH', `/v1/contacts/${created.body.id}`, {
      key,
      body: { properties: { budget: null } },
    });
    expect(cleared.status).toBe(200);
    expect(Object.keys(cleared.body.properties)).toEqual(['plan']);
  });

  it('an archived required property is not required', async () => {
    const { key } = await h.createOrg();
    const p = await h.api('POST', '/v1/properties', {
      key,
      body: { key: 'x', label: 'X', kind: 'TEXT', required: true },
    });
    await h.api('PATCH', `/v1/properties/${p.body.id}`, { key, body: { archived: true } });
    expect((await h.api('POST', '/v1/contacts', { key, body: {} })).status).toBe(201);
  });
});

describe('updating values', () => {
  it('sets the keys given, removes those set to null or an empty slot, and keeps the rest', async () => {
    const { key } = await orgWithProperties();
    const contact = await h.api('POST', '/v1/contacts', {
      key,
      body: {
        properties: {
          p_text: { kind: 'TEXT', value_text: 'one' },
          p_number: { kind: 'NUMBER', value_number: 1 },
          p_bool: { kind: 'BOOLEAN', value_bool: true },
          p_multi: { kind: 'MULTI_SELECT', value_json: ['a'] },
        },
      },
    });
    const response = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, {
      key,
      body: {
        properties: {
          p_text: { kind: 'TEXT', value_text: 'two' },
          p_number: null,
          p_bool: { kind: 'BOOLEAN', value_bool: null },
          p_multi: { kind: 'MULTI_SELECT', value_json: [] },
          p_date: { kind: 'DATE', value_date: '2026-01-01' },
        },
      },
    });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.properties).sort()).toEqual(['p_date', 'p_text']);
    expect(response.body.properties.p_text.value_text).toBe('two');
  });

  it('a refused value leaves the contact unchanged', async () => {
    const { key } = await orgWithProperties();
    const contact = await h.api('POST', '/v1/contacts', {
      key,
      body: { first_name: 'A', properties: { p_text: { kind: 'TEXT', value_text: 'one' } } },
    });
    const response = await h.api('PATCH', `/v1/contacts/${contact.body.id}`, {
      key,
      body: {
        first_name: 'B',
        properties: { p_text: { kind: 'TEXT', value_text: 'two' }, p_radio: { kind: 'RADIO', value_text: 'z' } },
      },
    });
    expect(response.status).toBe(422);
    const read = await h.api('GET', `/v1/contacts/${contact.body.id}`, { key });
    expect(read.body.first_name).toBe('A');
    expect(read.body.properties.p_text.value_text).toBe('one');
  });

  it('deleting a property removes its values from every contact', async () => {
    const { key, ids } = await orgWithProperties();
    const a = await h.api('POST', '/v1/contacts', {
      key,
      body: {
        properties: { p_text: { kind: 'TEXT', value_text: 'x' }, p_number: { kind: 'NUMBER', value_number: 2 } },
      },
    });
    await h.api('POST', '/v1/contacts', { key, body: { properties: { p_text: { kind: 'TEXT', value_text: 'y' } } } });
    expect((await h.api('DELETE', `/v1/properties/${ids.p_text}`, { key })).status).toBe(204);
    const read = await h.api('GET', `/v1/contacts/${a.body.id}`, { key });
    expect(Object.keys(read.body.properties)).toEqual(['p_number']);
    // A new property with the same key starts empty.
    await h.api('POST', '/v1/properties', { key, body: { key: 'p_text', label: 'again', kind: 'TEXT' } });
    expect((await h.api('GET', '/v1/contacts?property_filter=p_text:exists:true', { key })).body.total_count).toBe(0);
  });
});

// The CSV import's conversion (D232), shared by `crm contacts import` and the console: each properties.KEY cell
// becomes the value of its property's kind (decisions §5, §6), and a row's problems are all named at once, in
// sentences.
import { describe, expect, it } from 'vitest';
import {
  contactItemOf,
  csvColumns,
  issueSentence,
  type PropertyDefinition,
  propertyValueOf,
  refusedItems,
  ValidationError,
} from '../src/index.ts';

const property = (key: string, kind: string, extra: Partial<PropertyDefinition> = {}): PropertyDefinition => ({
  key,
  label: key.charAt(0).toUpperCase() + key.slice(1),
  kind: kind as PropertyDefinition['kind'],
  options: [],
  currency: null,
  archived_at: null,
  ...extra,
});
const options = [
  { key: 'gold', label: 'Gold' },
  { key: 'silver', label: 'Silver plus' },
];
const PROPERTIES = [
  property('tier', 'DROPDOWN', { options }),
  property('channel', 'RADIO', { options }),
  property('tags', 'MULTI_SELECT', { options }),
  property('born', 'DATE'),
  property('visits', 'NUMBER'),
  property('spent', 'MONEY', { currency: 'USD' }),
  property('vip', 'BOOLEAN'),
  property('note', 'TEXT'),
  property('bio', 'TEXTAREA'),
  property('work_email', 'EMAIL'),
  property('site', 'URL'),
  property('photo', 'FILE'),
  property('docs', 'MULTI_FILE'),
  property('old', 'TEXT', { archived_at: '2026-01-01T00:00:00.000Z' }),
];
const definition = (key: string) => PROPERTIES.find((candidate) => candidate.key === key) as PropertyDefinition;
const value = (key: string, cell: string) => propertyValueOf(definition(key), cell);

describe('propertyValueOf', () => {
  it('converts a cell by its property kind', () => {
    expect(value('tier', 'GOLD')).toEqual({ value: { kind: 'DROPDOWN', value_text: 'gold' } });
    expect(value('tier', 'silver PLUS')).toEqual({ value: { kind: 'DROPDOWN', value_text: 'silver' } });
    expect(value('channel', 'silver')).toEqual({ value: { kind: 'RADIO', value_text: 'silver' } });
    expect(value('tags', 'Gold | silver plus|gold')).toEqual({
      value: { kind: 'MULTI_SELECT', value_json: ['gold', 'silver'] },
    });
    expect(value('born', '2026-02-28')).toEqual({ value: { kind: 'DATE', value_date: '2026-02-28' } });
    expect(value('visits', '-3.5')).toEqual({ value: { kind: 'NUMBER', value_number: -3.5 } });
    expect(value('spent', '12.50')).toEqual({ value: { kind: 'MONEY', value_number: 12.5 } });
    expect(value('spent', '12.50 usd')).toEqual({ value: { kind: 'MONEY', value_number: 12.5 } });
    expect(value('spent', 'USD 7')).toEqual({ value: { kind: 'MONEY', value_number: 7 } });
    for (const [cell, bool] of [
      ['yes', true],
      ['TRUE', true],
      ['1', true],
      ['No', false],
      ['false', false],
      ['0', false],
    ] as const) {
      expect(value('vip', cell)).toEqual({ value: { kind: 'BOOLEAN', value_bool: bool } });
    }
    expect(value('note', 'Likes {braces}')).toEqual({ value: { kind: 'TEXT', value_text: 'Likes {braces}' } });
    expect(value('work_email', 'a@b.co')).toEqual({ value: { kind: 'EMAIL', value_text: 'a@b.co' } });
    expect(value('site', 'https://example.com')).toEqual({ value: { kind: 'URL', value_text: 'https://example.com' } });
    expect(value('photo', 'https://example.com/a.png')).toEqual({
      value: { kind: 'FILE', value_json: [{ url: 'https://example.com/a.png' }] },
    });
    expect(value('docs', 'https://example.com/a.pdf|https://example.com/b.pdf')).toEqual({
      value: {
        kind: 'MULTI_FILE',
        value_json: [{ url: 'https://example.com/a.pdf' }, { url: 'https://example.com/b.pdf' }],
      },
    });
  });

  it('says in a sentence why a cell does not fit', () => {
    expect(value('tier', 'Platinum')).toEqual({
      problem: '"Platinum" is not an option of "Tier" (Gold or Silver plus)',
    });
    expect(value('tags', 'gold|bronze|tin')).toEqual({
      problem: '"bronze", "tin" are not options of "Tags" (Gold or Silver plus, several separated by |)',
    });
    expect(value('born', '31/03/2026')).toEqual({
      problem: '"31/03/2026" is not a date written YYYY-MM-DD (such as 2026-03-31)',
    });
    expect(value('born', '2026-02-30')).toHaveProperty('problem');
    expect(value('visits', '1,200')).toEqual({ problem: '"1,200" is not a number (such as 42 or 3.5)' });
    expect(value('spent', '12 EUR')).toEqual({
      problem: '"12 EUR" is in EUR, and the property "Spent" holds amounts in USD',
    });
    expect(value('spent', 'lots')).toEqual({ problem: '"lots" is not an amount such as 12.50 or 12.50 USD' });
    expect(value('vip', 'maybe')).toEqual({ problem: '"maybe" is not yes or no (true, false, yes, no, 1 or 0)' });
    expect(value('work_email', 'nope')).toEqual({ problem: '"nope" is not an email address' });
    expect(value('site', 'example.com')).toEqual({
      problem: '"example.com" is not a web address (http:// or https://)',
    });
    expect(value('photo', 'https://a.example/1|https://a.example/2')).toHaveProperty('problem');
    expect(value('note', 'x'.repeat(1001))).toEqual({ problem: 'longer than 1000 characters' });
    for (const outcome of [value('tier', 'Platinum'), value('born', 'x'), value('visits', 'x')]) {
      expect(JSON.stringify(outcome)).not.toMatch(/Input should|pattern|\^/);
    }
  });
});

describe('csvColumns and contactItemOf', () => {
  it('refuses a header with columns that cannot be filled, every one named', () => {
    const { problems } = csvColumns(
      ['email', 'nickname', 'properties.tier', 'properties.ghost', 'properties.old'],
      PROPERTIES,
    );
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^nickname: not a contact field/);
    expect(problems[1]).toBe('properties.ghost: the organization has no custom property with the key "ghost"');
    expect(problems[2]).toBe('properties.old: the property "Old" is archived');
  });

  it('converts a row, names every bad cell at once, and marks created contacts IMPORT', () => {
    const { columns } = csvColumns(
      ['email', 'opted_out', 'properties.tier', 'properties.born', 'properties.vip'],
      PROPERTIES,
    );
    expect(
      contactItemOf(
        {
          email: 'a@example.com',
          opted_out: 'no',
          'properties.tier': 'gold',
          'properties.born': '',
          'properties.vip': 'Yes',
        },
        columns,
      ),
    ).toEqual({
      item: {
        email: 'a@example.com',
        opted_out: false,
        origin: 'IMPORT',
        properties: { tier: { kind: 'DROPDOWN', value_text: 'gold' }, vip: { kind: 'BOOLEAN', value_bool: true } },
      },
      problems: [],
    });
    const { problems } = contactItemOf(
      {
        email: 'b@example.com',
        opted_out: 'perhaps',
        'properties.tier': 'Platinum',
        'properties.born': 'March',
        'properties.vip': 'y',
      },
      columns,
    );
    expect(problems).toEqual([
      'opted_out: "perhaps" is not yes or no (true, false, yes, no, 1 or 0)',
      'properties.tier: "Platinum" is not an option of "Tier" (Gold or Silver plus)',
      'properties.born: "March" is not a date written YYYY-MM-DD (such as 2026-03-31)',
      'properties.vip: "y" is not yes or no (true, false, yes, no, 1 or 0)',
    ]);
    const origin = csvColumns(['email', 'origin'], PROPERTIES).columns;
    expect(contactItemOf({ email: 'c@example.com', origin: 'event' }, origin).item.origin).toBe('EVENT');
    expect(
      issueSentence('origin', {
        msg: "Input should be 'SOCIAL', 'ADS' or 'API'",
        type: 'enum',
        input: 'FAX',
        ctx: { expected: "'SOCIAL', 'ADS' or 'API'" },
      }),
    ).toBe('origin: "FAX" is not one of SOCIAL, ADS or API');
  });
});

describe('refusal sentences', () => {
  it("turns the server's schema wording into sentences", () => {
    expect(
      issueSentence('country', {
        msg: "String should match pattern '^[A-Z]{2}$'",
        type: 'string_pattern_mismatch',
        input: 'mexico',
      }),
    ).toBe('country: "mexico" is not a two-letter country code (ISO 3166-1, such as MX or US)');
    expect(
      issueSentence('phone', {
        msg: "String should match pattern '^\\+[1-9]\\d{1,14}$'",
        type: 'string_pattern_mismatch',
        input: '12',
      }),
    ).toBe(
      'phone: "12" is not a phone number in international format: + then the country code and number, such as +5215512345678',
    );
    expect(issueSentence('email', { msg: 'value is not a valid email address', type: 'value_error', input: 'x' })).toBe(
      'email: "x" is not an email address',
    );
    expect(
      issueSentence('city', {
        msg: 'String should have at most 120 characters',
        type: 'string_too_long',
        ctx: { max_length: 120 },
      }),
    ).toBe('city: longer than 120 characters');
    const refused = new ValidationError({
      status: 422,
      detail: [
        {
          loc: ['body', 'items', 1, 'social_handle'],
          msg: "String should match pattern '^[a-zA-Z0-9._]{1,30}$'",
          type: 'string_pattern_mismatch',
          input: 'a b',
        },
        {
          loc: ['body', 'items', 3, 'country'],
          msg: 'Input should be an ISO 3166-1 alpha-2 country code (e.g. MX, US)',
          type: 'value_error',
          input: 'XX',
        },
      ],
    });
    const reasons = [...(refusedItems(refused) ?? new Map()).values()].flat();
    expect(reasons).toEqual([
      'social_handle: "a b" is not a social handle: up to 30 letters, digits, dots and underscores',
      'country: "XX" is not a two-letter country code (ISO 3166-1, such as MX or US)',
    ]);
    for (const reason of reasons) expect(reason).not.toMatch(/should|pattern|\^/);
  });
});

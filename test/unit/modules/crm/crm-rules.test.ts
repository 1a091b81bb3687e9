import { describe, expect, it } from 'vitest';
import { keyFromName, keyVariant } from '../../../../src/lib/keys.ts';
import { applyMoves } from '../../../../src/lib/reorder.ts';
import { escapeLike, filterEntries, parsePropertyFilter } from '../../../../src/modules/contacts/contact-filters.ts';

describe('keyFromName', () => {
  it.each([
    ['Qualified Lead', 'qualified_lead'],
    ['  --Hot!! lead--  ', 'hot_lead'],
    ['Négociação', 'negociacao'],
    ['42', 'stage_42'],
    ['', 'stage'],
    ['x'.repeat(80), 'x'.repeat(64)],
  ])('%j -> %j', (name, key) => {
    expect(keyFromName(name)).toBe(key);
    expect(keyFromName(name)).toMatch(/^[a-z][a-z0-9_]{0,63}$/);
  });

  it('variants stay within 64 characters', () => {
    expect(keyVariant('lead', 1)).toBe('lead');
    expect(keyVariant('lead', 2)).toBe('lead_2');
    expect(keyVariant('x'.repeat(64), 12)).toBe(`${'x'.repeat(61)}_12`);
  });
});

describe('applyMoves', () => {
  const order = ['a', 'b', 'c', 'd'];
  it.each([
    [[{ id: 'd', order_idx: 0 }], ['d', 'a', 'b', 'c']],
    [[{ id: 'a', order_idx: 3 }], ['b', 'c', 'd', 'a']],
    [[{ id: 'a', order_idx: 99 }], ['b', 'c', 'd', 'a']],
    [
      [
        { id: 'd', order_idx: 0 },
        { id: 'c', order_idx: 1 },
      ],
      ['d', 'c', 'a', 'b'],
    ],
    [
      [
        { id: 'b', order_idx: 0 },
        { id: 'a', order_idx: 0 },
      ],
      ['b', 'a', 'c', 'd'],
    ],
  ])('%j', (moves, expected) => {
    expect(applyMoves(order, moves)).toEqual(expected);
  });
});

describe('property_filter entries', () => {
  it('split on commas that start a new KEY:OP: only', () => {
    expect(filterEntries('a:eq:1,b:gt:2')).toEqual(['a:eq:1', 'b:gt:2']);
    expect(filterEntries(['note:eq:Hello, World', 'x:exists:true'])).toEqual(['note:eq:Hello, World', 'x:exists:true']);
    expect(filterEntries('note:in:a,b|c')).toEqual(['note:in:a,b|c']);
    expect(filterEntries(undefined)).toEqual([]);
  });

  it('parse KEY:OP:VALUE; the value keeps its colons', () => {
    expect(parsePropertyFilter('site:eq:https://x.io', 0)).toEqual({ key: 'site', op: 'eq', value: 'https://x.io' });
    expect(() => parsePropertyFilter('site:like:x', 2)).toThrow();
    expect(() => parsePropertyFilter(':eq:x', 0)).toThrow();
  });

  it('escape LIKE wildcards', () => {
    expect(escapeLike('50%_a\\b')).toBe('50\\%\\_a\\\\b');
  });
});

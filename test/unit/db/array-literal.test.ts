import { createRequire } from 'node:module';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral } from '../../../src/db/prepared-statements.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

// pg's own conversion of a parameter (what it sends for an array today).
const { prepareValue: pgText } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

const QUOTED_ONLY: unknown[][] = [
  [],
  [''],
  ['ct_01JH5ZN4B5C6D7E8F9G0H1J2K3', 'ct_2'],
  ['a,b', '{x}', ' spaced ', 'NULL', 'null', 'García', '😀', 'line\nbreak', "it's"],
  [1, 2.5, -3, 0, Number.NaN, Number.POSITIVE_INFINITY],
  ['mixed', 7],
];

describe('array parameters as one literal (decisions D217)', () => {
  it('writes the same text as pg for arrays of plain strings and numbers', () => {
    for (const values of QUOTED_ONLY) expect(arrayLiteral(values)).toBe(pgText(values));
  });

  it('leaves to pg what needs more than quotes: nulls, quotes, backslashes, nested arrays, dates, booleans', () => {
    for (const values of [
      ['a', null],
      [undefined],
      ['say "hi"'],
      ['back\\slash'],
      [['nested']],
      [new Date(0)],
      [true],
      [{ a: 1 }],
    ]) {
      expect(arrayLiteral(values)).toBeUndefined();
    }
  });

  describe.skipIf(!process.env.TEST_POSTGRES_URL)('through PostgreSQL (the pool client that sends them)', () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await createTestDatabase('postgres');
    });
    afterAll(() => test.drop());

    it('reads back every array as it was sent, literal or left to pg', async () => {
      const cases: unknown[][] = [...QUOTED_ONLY.slice(0, 4), ['a', null], ['say "hi"', 'back\\slash']];
      for (const values of cases) {
        const { rows } = await sql<{ a: string[] }>`select ${values}::text[] as a`.execute(test.database.db);
        expect(rows[0]?.a).toEqual(values);
      }
      const numbers = [1, 2.5, -3, 0];
      const { rows } = await sql<{ a: number[] }>`select ${numbers}::float8[] as a`.execute(test.database.db);
      expect(rows[0]?.a).toEqual(numbers);
    });
  });
});

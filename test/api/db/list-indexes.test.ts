// D367: the contact list's sorts each have their index, (org_id, sort column, id) over live contacts, carrying the
// contact's `version` that a walk's later pages check. A migration that drops a column an index names drops the
// index with it, silently (0045 did: the list then sorted every live contact of the organization on each page).
// Read from the catalog on both engines (on Citus, the coordinator's table).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

/** The list's sorts (`contact-list.ts` SORTS) by the column each orders by. */
const SORT_COLUMNS = ['updated_at', 'name_sort', 'country', 'city_sort', 'origin'];

describe('the contact list’s indexes (D367)', () => {
  it.each(SORT_COLUMNS)('orders by %s through an index of live contacts carrying their version', async (column) => {
    const { rows } = await sql<{ definition: string }>`select pg_get_indexdef(i.indexrelid) as definition
      from pg_index i where i.indrelid = 'contacts'::regclass`.execute(h.database.db);
    const definitions = rows.map((row) => row.definition.replace(/\s+/g, ' '));
    const matching = definitions.filter(
      (definition) =>
        definition.includes(`(org_id, ${column}, id) INCLUDE (version)`) &&
        definition.includes('WHERE (deleted_at IS NULL)'),
    );
    expect(matching, definitions.join('\n')).toHaveLength(1);
  });
});

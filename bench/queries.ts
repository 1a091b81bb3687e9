// The contact list's two queries measured alone, without HTTP: a page (keyset) and the exact count.
import { sql } from 'kysely';
import type { Database } from '../src/db/database.ts';
import { listConditions, listFingerprint } from '../src/modules/contacts/contact-filters.ts';
import { countContacts, pageOfContacts, planPage } from '../src/modules/contacts/contact-list.ts';
import type { ContactListQuery, ContactSort } from '../src/modules/contacts/contacts.schemas.ts';
import { measure, type Result } from './measure.ts';

export async function measureQueries(
  database: Database,
  orgId: string,
  cursors: Map<string, string>,
  targetPage: number,
  requests: number,
): Promise<Result[]> {
  const { db } = database;
  const results: Result[] = [];
  const filters = listConditions({ limit: 50, sort: 'recent' } as ContactListQuery, 'UTC', new Map());
  for (const [sort, cursor] of cursors) {
    for (const [label, page] of [
      ['page 1', undefined],
      [`page ${targetPage}`, cursor],
    ] as const) {
      const query = { limit: 50, sort: sort as ContactSort, ...(page ? { cursor: page } : {}) } as ContactListQuery;
      results.push(
        await measure(`SQL: ${sort}, ${label}`, requests, 1, async () => {
          await pageOfContacts(db, orgId, planPage(query, listFingerprint(query), new Date()), filters);
        }),
      );
    }
  }
  results.push(
    await measure('SQL: exact count, no filter', requests, 1, () => countContacts(db, orgId, filters).then()),
  );
  const gold = sql`exists (select 1 from contact_property_values pv join crm_properties p on p.org_id = pv.org_id
    and p.id = pv.property_id where pv.org_id = c.org_id and pv.contact_id = c.id and p.key = 'tier'
    and pv.value_text = 'gold')`;
  results.push(
    await measure('SQL: exact count, tier = gold (25%)', Math.min(requests, 20), 1, () =>
      countContacts(db, orgId, gold).then(),
    ),
  );
  return results;
}

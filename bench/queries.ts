// The contact list without HTTP: the same query string turned into the service's query, answered by the same
// service (every SQL statement of a list request and the JSON-ready rows), or by its SQL alone.
import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { systemClock } from '../src/lib/clock.ts';
import { listConditions, listFingerprint } from '../src/modules/contacts/contact-filters.ts';
import { pageAndCount, pageOfContacts, planPage } from '../src/modules/contacts/contact-list.ts';
import type { ContactListQuery, ContactSort } from '../src/modules/contacts/contacts.schemas.ts';
import { createContactsService } from '../src/modules/contacts/contacts.service.ts';
import { listProperties } from '../src/modules/properties/properties.repo.ts';
import type { Definition } from '../src/modules/properties/property-values.ts';

/** `sort=name&q=x&property_filter=a:eq:b` -> the validated query the route hands to the service. */
export function parseListQuery(search: string): ContactListQuery {
  const params = new URLSearchParams(search);
  const query: Record<string, unknown> = { limit: Number(params.get('limit') ?? 50) };
  query.sort = (params.get('sort') ?? 'recent') as ContactSort;
  for (const name of ['sort_dir', 'q', 'cursor']) {
    const value = params.get(name);
    if (value !== null) query[name] = value;
  }
  if (params.get('include_total') === 'true') query.include_total = true;
  // As the route sees it: one entry is a string, repeated keys an array (the cursor's fingerprint tells them apart).
  const filters = params.getAll('property_filter');
  if (filters.length > 0) query.property_filter = filters.length === 1 ? filters[0] : filters;
  return query as ContactListQuery;
}

export function listWithoutHttp(db: Kysely<DB>, orgId: string) {
  const service = createContactsService({ db, clock: systemClock });
  let definitions: Map<string, Definition> | undefined;
  const conditions = async (query: ContactListQuery) => {
    definitions ??= new Map((await listProperties(db, orgId)).map((row) => [row.key, row]));
    return listConditions(query, 'UTC', definitions);
  };
  return {
    /** The whole list request as the route runs it, minus HTTP, auth and serialisation. */
    service: (search: string) => service.list(orgId, 'UTC', parseListQuery(search)),
    /** The list's SQL as the service runs it: the page, its contacts and their values, and the count. */
    pageAndCount: async (search: string) => {
      const query = parseListQuery(search);
      const filters = await conditions(query);
      const plan = planPage(query, listFingerprint(query), new Date());
      return pageAndCount(db, orgId, plan, filters, query.include_total === true);
    },
    /** The cursor of page `page` (1-based) of a list, walked 200 contacts at a time (cursors do not carry a limit). */
    cursorAt: async (search: string, page: number, pageSize: number): Promise<string | null> => {
      let skip = (page - 1) * pageSize;
      let cursor: string | undefined;
      while (skip > 0) {
        const limit = Math.min(200, skip);
        const query = { ...parseListQuery(search), limit, ...(cursor ? { cursor } : {}) };
        const next = await pageOfContacts(
          db,
          orgId,
          planPage(query, listFingerprint(query), new Date()),
          await conditions(query),
        );
        if (!next.nextCursor) return null;
        cursor = next.nextCursor;
        skip -= limit;
      }
      return cursor ?? null;
    },
  };
}

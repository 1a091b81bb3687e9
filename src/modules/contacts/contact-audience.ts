// decisions §16: an audience is the contact list's filters as JSON, read by the list's own code (contact-filters.ts)
// into one SQL condition over `contacts c`. The broadcast checks it before its 202 (errors at ["body","audience",…])
// and the worker reads it again, from the stored JSON, for every chunk of recipients it adds.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { listProperties } from '../properties/properties.repo.ts';
import {
  type FilterLocation,
  filterEntries,
  listConditions,
  parsePropertyFilter,
  propertyFilterIssue,
} from './contact-filters.ts';
import type { ContactFilters } from './contacts.schemas.ts';

const AUDIENCE: FilterLocation = ['body', 'audience'];

/** The organization's timezone and, when the filters name properties, their definitions by key. */
async function filterContext(db: Kysely<DB>, orgId: string, filters: ContactFilters) {
  const [org, definitions] = await Promise.all([
    db.selectFrom('organizations').select('timezone').where('id', '=', orgId).executeTakeFirstOrThrow(),
    filters.property_filter === undefined
      ? new Map()
      : listProperties(db, orgId).then((rows) => new Map(rows.map((row) => [row.key, row]))),
  ]);
  return { timezone: org.timezone, definitions };
}

/** The audience's condition over `contacts c` (in the organization's timezone), or a 422 at `at`. */
export async function audienceCondition(
  db: Kysely<DB>,
  orgId: string,
  filters: ContactFilters,
  at: FilterLocation = AUDIENCE,
): Promise<RawBuilder<unknown>> {
  const { timezone, definitions } = await filterContext(db, orgId, filters);
  return listConditions(filters, timezone, definitions, at).where;
}

/** A stored audience as the worker reads it again: its condition, or the property it names that is gone. */
export type StoredAudience =
  | { kind: 'condition'; where: RawBuilder<unknown> }
  | { kind: 'property_deleted'; key: string };

/**
 * decisions §16: a stored audience (valid at its 202) read again for a chunk. A property it names that was deleted
 * since (or replaced by one of another kind the filter no longer fits) is a typed answer: nobody more matches.
 */
export async function storedAudienceCondition(
  db: Kysely<DB>,
  orgId: string,
  filters: ContactFilters,
): Promise<StoredAudience> {
  const { timezone, definitions } = await filterContext(db, orgId, filters);
  for (const [index, entry] of filterEntries(filters.property_filter, AUDIENCE).entries()) {
    const filter = parsePropertyFilter(entry, index, AUDIENCE);
    if (propertyFilterIssue(filter, definitions.get(filter.key)) !== undefined) {
      return { kind: 'property_deleted', key: filter.key };
    }
  }
  return { kind: 'condition', where: listConditions(filters, timezone, definitions, AUDIENCE).where };
}

/** Recipients of an audience: matching live contacts with a phone that are not `unavailable` (decisions §16). */
export const reachableContact = sql`c.deleted_at is null and c.phone is not null
  and c.messaging_status <> 'unavailable'`;

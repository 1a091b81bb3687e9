// decisions §16: an audience is the contact list's filters as JSON, read by the list's own code (contact-filters.ts)
// into one SQL condition over `contacts c`. The broadcast checks it before its 202 (errors at ["body","audience",…])
// and the worker reads it again, from the stored JSON, for every chunk of recipients it adds.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { listProperties } from '../properties/properties.repo.ts';
import { type FilterLocation, listConditions } from './contact-filters.ts';
import type { ContactFilters } from './contacts.schemas.ts';

/** The audience's condition over `contacts c` (in the organization's timezone), or a 422 at `at`. */
export async function audienceCondition(
  db: Kysely<DB>,
  orgId: string,
  filters: ContactFilters,
  at: FilterLocation = ['body', 'audience'],
): Promise<RawBuilder<unknown>> {
  const [org, definitions] = await Promise.all([
    db.selectFrom('organizations').select('timezone').where('id', '=', orgId).executeTakeFirstOrThrow(),
    filters.property_filter === undefined
      ? new Map()
      : listProperties(db, orgId).then((rows) => new Map(rows.map((row) => [row.key, row]))),
  ]);
  return listConditions(filters, org.timezone, definitions, at).where;
}

/** Recipients of an audience: matching live contacts with a phone that are not `unavailable` (decisions §16). */
export const reachableContact = sql`c.deleted_at is null and c.phone is not null
  and c.messaging_status <> 'unavailable'`;

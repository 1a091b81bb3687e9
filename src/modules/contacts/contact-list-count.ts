// The contact list's count (decisions §2) and how it shapes the page: `total_count` is exact up to 10,000 matches
// and `null` above (counting stops at the 10,001st), and the count read in the page's statement picks how the page
// reads a property condition or a `q` (contact-list.ts gates each way by it).
import { type RawBuilder, sql } from 'kysely';
import type { ListFilter } from './contact-filters.ts';

/** decisions §2: an exact `total_count` up to this many matches, `null` above (unless `include_total=true`). */
export const EXACT_COUNT_LIMIT = 10_000;

export const capped = (count: number | null) => (count === null || count > EXACT_COUNT_LIMIT ? null : count);

/**
 * The statement counting the list's matches (decisions §2): it stops at the 10,001st match, so a list costs the
 * same in a large organization as in a small one; `exact` (include_total=true) counts every match.
 */
export function countOf(orgId: string, filter: ListFilter, exact: boolean): RawBuilder<unknown> {
  // No filter: the organization's live contacts, kept by triggers in contact_counts (migration 0013), exact.
  if (filter.unfiltered) {
    return sql`select coalesce(sum(live), 0)::int as count from contact_counts where org_id = ${orgId}`;
  }
  // One property condition: its rows in the value index are the matches (values exist only for live contacts).
  const matches = filter.rows
    ? valueRows(orgId, filter)
    : sql`select 1 from contacts c where c.org_id = ${orgId} and c.deleted_at is null
        and ${filter.narrow ?? filter.where}`;
  return exact
    ? sql`select count(*)::int as count from (${matches}) m`
    : sql`select count(*)::int as count from (${matches} limit ${EXACT_COUNT_LIMIT + 1}) m`;
}

/** A `q` matched by at most this many contacts pages from its matches, sorted (see pageVariants). */
const FEW_MATCHES = 1_000;

/** One way to read the page's condition, for the lists whose count is at most `upTo` (any count when undefined). */
export interface Variant {
  filters: RawBuilder<unknown>;
  upTo?: number;
}

/**
 * The ways to read the page's condition, by the count. A property condition or a `q` matched by few contacts is
 * read once into a hash (the planner's hashed subplan: an index-only scan of the value index, or the trigram
 * search) that the sort index's walk probes in order; a `q` matched by very few is read from the trigram index and
 * its matches sorted. A condition matched by many is checked per contact in the sort index's order, which finds a
 * page within a few hundred contacts.
 */
export function pageVariants(orgId: string, filter: ListFilter): Variant[] {
  // `is true` keeps the IN a subplan rather than a semi-join, which could not keep the sort index's order.
  if (filter.rows) {
    return [
      { upTo: EXACT_COUNT_LIMIT, filters: sql`(c.id in (${valueRows(orgId, filter)})) is true` },
      { filters: filter.where },
    ];
  }
  if (!filter.narrow) return [{ filters: filter.where }];
  const matches = sql`select c.id from contacts c where c.org_id = ${orgId} and c.deleted_at is null and ${filter.narrow}`;
  return [
    { upTo: FEW_MATCHES, filters: filter.narrow },
    { upTo: EXACT_COUNT_LIMIT, filters: sql`(c.id in (${matches})) is true` },
    { filters: filter.where },
  ];
}

/** The variant for a known count (the last, which suits any count, when it is not known). */
export const variantFor = (variants: Variant[], count: number | null) =>
  variants.find((variant) => count !== null && (variant.upTo === undefined || count <= variant.upTo)) ??
  (variants.at(-1) as Variant);

function valueRows(orgId: string, filter: ListFilter) {
  const rows = filter.rows as NonNullable<ListFilter['rows']>;
  return sql`select pv.contact_id from contact_property_values pv
    where pv.org_id = ${orgId} and pv.property_id = ${rows.propertyId}${rows.condition ? sql` and ${rows.condition}` : sql``}`;
}

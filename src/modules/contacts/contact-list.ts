// The contact list: keyset pagination for every sort over one version of the organization's contacts per walk.
//
// A walk's first page records the organization's contact version it read (D315: `contact_versions`, taken by each
// transaction that moves a contact and held to its commit, so a statement sees exactly the writes numbered up to
// the version it reads); every later page orders the contacts as they stood at that version: a contact's current
// row when its version is not newer, otherwise the version of its sort keys current then (kept by a trigger in
// contact_sort_versions). So a walk visits every contact that existed when it began exactly once, in one consistent
// order, however contacts are created, updated or moved meanwhile, on one node or on many (no transaction ids).
// Contacts created after the walk began are not part of it; deleted ones drop out. Pages show current data; filters
// apply to current data.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { validationError } from '../../http/errors.ts';
import { decodeCursor, encodeCursor } from '../../http/pagination.ts';
import type { StoredValue } from '../properties/property-values.ts';
import type { ListFilter } from './contact-filters.ts';
import { capped, countOf, pageVariants, type Variant, variantFor } from './contact-list-count.ts';
import { CONTACT_COLUMNS, type ContactRecord, valuesOfContact } from './contacts.repo.ts';
import type { ContactListQuery, ContactSort } from './contacts.schemas.ts';

interface SortSpec {
  column: 'updated_at' | 'name_sort' | 'country' | 'city_sort' | 'origin';
  /** Contacts lacking the value come last, in either direction (contract). */
  nullable: boolean;
  time: boolean;
}

const SORTS: Record<ContactSort, SortSpec> = {
  recent: { column: 'updated_at', nullable: false, time: true },
  name: { column: 'name_sort', nullable: true, time: false },
  country: { column: 'country', nullable: true, time: false },
  city: { column: 'city_sort', nullable: true, time: false },
  origin: { column: 'origin', nullable: true, time: false },
};

/** Cursors carry a walk's version, so they live as long as the sort versions are kept. */
export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;
const VERSION = /^\d{1,18}$/;

interface Position {
  snapshot: string;
  startedAt: number;
  segment: number;
  key: string | null;
  id: string;
}

function validSnapshot(text: unknown): text is string {
  return typeof text === 'string' && VERSION.test(text);
}

function readPosition(cursor: string, scope: string, filter: unknown, now: number): Position {
  const [snapshot, startedAt, segment, key, id] = decodeCursor(cursor, scope, filter);
  const invalid = (msg: string) => validationError(['query', 'cursor'], msg, 'value_error', { input: cursor });
  if (
    !validSnapshot(snapshot) ||
    typeof startedAt !== 'number' ||
    (segment !== 0 && segment !== 1) ||
    (key !== null && typeof key !== 'string') ||
    typeof id !== 'string'
  ) {
    throw invalid('Invalid cursor');
  }
  if (now - startedAt > CURSOR_TTL_MS) throw invalid('Cursor expired; start again from the first page');
  return { snapshot, startedAt, segment, key, id };
}

/** A contact of a page as the list shows it: its row and its property values, read by the page's statement. */
export type ListedContact = ContactRecord & { property_values: (StoredValue & { key: string; kind: string })[] };

type PageRow = ListedContact & { k: string | null; segment: number };
type StatementRow = ListedContact & { k: string | null; snapshot: string; total: number | null };

/**
 * One segment (keys present, or keys missing) of one page, as the snapshot ordered it, with the page's contacts
 * and their property values, and (when `count` is given) the list's count: one statement, one round trip.
 */
async function segmentPage(
  db: Kysely<DB>,
  orgId: string,
  spec: SortSpec,
  desc: boolean,
  snapshot: string | undefined,
  segment: number,
  after: { key: string | null; id: string } | undefined,
  limit: number,
  variants: Variant[],
  count: RawBuilder<unknown> | undefined,
): Promise<{ rows: PageRow[]; snapshot: string; total: number | null }> {
  const dir = sql.raw(desc ? 'desc' : 'asc');
  const cmp = sql.raw(desc ? '<' : '>');
  const cast = sql.raw(spec.time ? '::timestamptz' : '::text');
  const part = (alias: 'c' | 'v', idColumn: string) => {
    const key = sql.ref(`${alias}.${spec.column}`);
    const id = sql.ref(`${alias}.${idColumn}`);
    const nulls = segment === 1;
    const present = spec.nullable ? (nulls ? sql`${key} is null` : sql`${key} is not null`) : sql`true`;
    const keyset = !after
      ? sql`true`
      : nulls
        ? sql`${id} ${cmp} ${after.id}`
        : sql`(${key}, ${id}) ${cmp} (${after.key}${cast}, ${after.id})`;
    const order = nulls ? sql`${id} ${dir}` : sql`${key} ${dir}, ${id} ${dir}`;
    const text = spec.time
      ? sql`to_char(${key} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
      : sql`${key}::text`;
    return { present, keyset, order, id, text, key };
  };
  const pageOrder = (alias: string) =>
    segment === 1
      ? sql`${sql.ref(`${alias}.id`)} ${dir}`
      : sql`${sql.ref(`${alias}.sort_key`)} ${dir}, ${sql.ref(`${alias}.id`)} ${dir}`;
  const current = part('c', 'id');
  const live = sql`select ${current.id} as id, ${current.key} as sort_key, ${current.text} as k from contacts c
    where c.org_id = ${orgId} and c.deleted_at is null`;
  const keysetOf = (filters: RawBuilder<unknown>) => {
    if (snapshot === undefined) {
      // A walk's first query reads the current data and records the version it read in the same statement.
      // Every row it sees is at that version or older, and no kept version is current at it (the writes that
      // replaced them are seen), so the version conditions of the general form are all true here.
      return sql`${live} and ${current.present} and ${current.keyset} and ${filters}
        order by ${current.order} limit ${limit}`;
    }
    const at = sql`${snapshot}::bigint`;
    const kept = part('v', 'contact_id');
    return sql`select * from (
        (${live} and c.version <= ${at}
          and ${current.present} and ${current.keyset} and ${filters}
        order by ${current.order} limit ${limit})
        union all
        (select ${kept.id} as id, ${kept.key} as sort_key, ${kept.text} as k
          from contact_sort_versions v join contacts c on c.org_id = v.org_id and c.id = v.contact_id
          where v.org_id = ${orgId} and v.replaced > ${at} and v.version <= ${at}
            and c.deleted_at is null and ${kept.present} and ${kept.keyset} and ${filters}
          order by ${kept.order} limit ${limit})
      ) u order by ${pageOrder('u')} limit ${limit}`;
  };
  // Several ways to read the condition: each gated by the count (a one-time filter: the others never run).
  const keyset =
    variants.length === 1
      ? keysetOf((variants[0] as Variant).filters)
      : sql.join(
          variants.map((variant, i) => {
            const n = sql`(select count from counted)`;
            const above = variants[i - 1]?.upTo;
            const gate = sql.join(
              [
                above === undefined ? sql`true` : sql`${n} > ${above}`,
                variant.upTo === undefined ? sql`true` : sql`${n} <= ${variant.upTo}`,
              ],
              sql` and `,
            );
            return sql`(select * from (${keysetOf(variant.filters)}) g where ${gate})`;
          }),
          sql` union all `,
        );
  // The page's contacts as they stand now (pages show current data), with their values, in the page's order.
  const result = await sql<StatementRow>`with counted as materialized (${count ?? sql`select null::int as count`})
    select s.snapshot, (select count from counted) as total, page.k,
      ${sql.join(CONTACT_COLUMNS.map((column) => sql.ref(`r.${column}`)))},
      ${valuesOfContact(db, orgId, sql.ref<string>('r.id'))} as property_values
    from (select coalesce((select version from contact_versions where org_id = ${orgId}), 0)::text as snapshot) s
    left join lateral (${keyset}) page on true
    left join contacts r on r.org_id = ${orgId} and r.id = page.id
    order by ${pageOrder('page')}`.execute(db);
  const first = result.rows[0];
  // The rows as they came, marked with their segment (no copies: present() reads the contract's fields by name).
  const rows = result.rows.filter((row) => row.id !== null) as unknown as PageRow[];
  for (const row of rows) row.segment = segment;
  return { rows, snapshot: snapshot ?? (first?.snapshot as string), total: first?.total ?? null };
}

export interface PagePlan {
  spec: SortSpec;
  desc: boolean;
  scope: string;
  limit: number;
  fingerprint: unknown;
  /** Where a cursor left off; undefined for a first page. */
  position: Position | undefined;
  now: number;
}

/** Reads the sort and the cursor (422 when it is not valid here) before any query runs. */
export function planPage(query: ContactListQuery, fingerprint: unknown, now: Date): PagePlan {
  const sort = query.sort ?? 'recent';
  const spec = SORTS[sort];
  const desc = (query.sort_dir ?? (spec.time ? 'desc' : 'asc')) === 'desc';
  const scope = `contacts:${sort}:${desc ? 'desc' : 'asc'}`;
  const position =
    query.cursor === undefined ? undefined : readPosition(query.cursor, scope, fingerprint, now.getTime());
  return { spec, desc, scope, limit: query.limit, fingerprint, position, now: now.getTime() };
}

/**
 * A page and its total_count, in one statement. With one property condition (counted from the value index alone)
 * or a `q` (counted through its trigrams) the count also decides how the page reads the condition.
 */
export async function pageAndCount(
  db: Kysely<DB>,
  orgId: string,
  plan: PagePlan,
  filter: ListFilter,
  exact: boolean,
): Promise<{ page: ListPage; total: number | null }> {
  const page = await pageOfContacts(db, orgId, plan, filter, { exact });
  return { page, total: exact ? page.total : capped(page.total) };
}

export interface ListPage {
  contacts: ListedContact[];
  nextCursor: string | null;
  /** The count when `count` was asked for, as its statement answered it (at most 10,001 unless exact). */
  total: number | null;
}

export async function pageOfContacts(
  db: Kysely<DB>,
  orgId: string,
  plan: PagePlan,
  filter: ListFilter,
  /** Count the list in the page's statement (decisions §2). */
  count?: { exact: boolean },
): Promise<ListPage> {
  const { spec, desc, position } = plan;
  let snapshot = position?.snapshot;
  const startedAt = position?.startedAt ?? plan.now;
  const segments = spec.nullable ? 2 : 1;
  const wanted = plan.limit + 1;
  const found: PageRow[] = [];
  let total: number | null = null;
  let segment = position?.segment ?? 0;
  let after: { key: string | null; id: string } | undefined = position;
  const all = pageVariants(orgId, filter);
  // The first statement counts and picks the variant by its count; a second segment knows the count.
  let variants = count ? all : [variantFor(all, null)];
  let counting = count ? countOf(orgId, filter, count.exact) : undefined;
  while (found.length < wanted && segment < segments) {
    const read = await segmentPage(
      db,
      orgId,
      spec,
      desc,
      snapshot,
      segment,
      after,
      wanted - found.length,
      variants,
      counting,
    );
    if (counting !== undefined) {
      total = read.total;
      variants = [variantFor(all, total)];
    }
    counting = undefined;
    snapshot = read.snapshot;
    found.push(...read.rows);
    segment++;
    after = undefined;
  }
  const page = found.slice(0, plan.limit);
  const last = page.at(-1);
  const nextCursor =
    found.length > plan.limit && last
      ? encodeCursor(plan.scope, plan.fingerprint, [snapshot, startedAt, last.segment, last.k, last.id])
      : null;
  return { contacts: page, nextCursor, total };
}

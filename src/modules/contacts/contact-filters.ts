// The contact list's filters as SQL over `contacts c`: the contract's query filters and `property_filter`
// entries `KEY:OP:VALUE` (decisions §2). Every property condition is an EXISTS on the value table's indexes.
import { type RawBuilder, sql } from 'kysely';
import { validationError } from '../../http/errors.ts';
import { withArticle } from '../../lib/article.ts';
import type { PropertyKind } from '../properties/properties.schemas.ts';
import { type Definition, SLOT } from '../properties/property-values.ts';
import type { ContactFilters, ContactListQuery } from './contacts.schemas.ts';

export const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists'] as const;
type Op = (typeof FILTER_OPS)[number];

export interface PropertyFilter {
  key: string;
  op: Op;
  value: string;
}

// A comma starts a new entry only when `KEY:OP:` follows it; other commas belong to a value.
const NEXT_ENTRY = new RegExp(`,(?=[a-z][a-z0-9_]{0,63}:(?:${FILTER_OPS.join('|')}):)`);
export const MAX_FILTERS = 20;

/** Where a filter's errors point: the list's query, or a body field that holds the same filters (decisions §16). */
export type FilterLocation = readonly (string | number)[];
const QUERY: FilterLocation = ['query'];

/** property_filter as given (one string or repeated keys) -> its entries, at most 20. */
export function filterEntries(raw: string | string[] | undefined, at: FilterLocation = QUERY): string[] {
  const entries = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]).flatMap((entry) =>
    entry.split(NEXT_ENTRY),
  );
  if (entries.length > MAX_FILTERS) {
    throw validationError([...at, 'property_filter'], `List should have at most ${MAX_FILTERS} items`, 'too_long', {
      ctx: { field_type: 'List', max_length: MAX_FILTERS },
    });
  }
  return entries;
}

export function parsePropertyFilter(entry: string, index: number, at: FilterLocation = QUERY): PropertyFilter {
  const first = entry.indexOf(':');
  const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
  const op = second < 0 ? '' : entry.slice(first + 1, second);
  if (first <= 0 || second < 0 || !(FILTER_OPS as readonly string[]).includes(op)) {
    throw validationError(
      [...at, 'property_filter', index],
      `Expected KEY:OP:VALUE with OP one of ${FILTER_OPS.join(', ')}`,
      'value_error',
      { input: entry },
    );
  }
  return { key: entry.slice(0, first), op: op as Op, value: entry.slice(second + 1) };
}

const TEXT_KINDS: PropertyKind[] = ['TEXT', 'TEXTAREA', 'EMAIL', 'URL', 'RADIO', 'DROPDOWN'];
const ORDERED_KINDS: PropertyKind[] = ['NUMBER', 'MONEY', 'DATE'];

function allowedOps(kind: PropertyKind): Op[] {
  if (TEXT_KINDS.includes(kind)) return ['eq', 'neq', 'contains', 'in', 'exists'];
  if (ORDERED_KINDS.includes(kind)) return ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'exists'];
  if (kind === 'BOOLEAN') return ['eq', 'neq', 'exists'];
  if (kind === 'MULTI_SELECT') return ['eq', 'neq', 'contains', 'in', 'exists'];
  return ['exists'];
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

const COMPARE: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** A positive property condition as rows of `contact_property_values pv`: the contacts holding such a value. */
export interface ValueRows {
  propertyId: string;
  /** Over `pv`; undefined when holding any value of the property matches (`exists:true`). */
  condition: RawBuilder<unknown> | undefined;
}

export interface Condition {
  /** Over `contacts c`. */
  sql: RawBuilder<unknown>;
  /** Set when the condition is positive: a contact matches exactly when it holds one of these rows. */
  rows?: ValueRows;
}

/** Why an entry does not apply to its property as defined now (unknown key, operator, value); undefined: it does. */
export function propertyFilterIssue(filter: PropertyFilter, definition: Definition | undefined): string | undefined {
  if (!definition) return `Unknown property key '${filter.key}'`;
  const kind = definition.kind as PropertyKind;
  if (!allowedOps(kind).includes(filter.op)) {
    return `Operator '${filter.op}' does not apply to ${withArticle(kind)} property (use ${allowedOps(kind).join(', ')})`;
  }
  if (filter.op === 'exists') {
    return filter.value !== 'true' && filter.value !== 'false' ? 'exists takes true or false' : undefined;
  }
  const values = filter.op === 'in' ? filter.value.split('|') : [filter.value];
  for (const value of values) {
    const issue = valueIssue(kind, value);
    if (issue !== undefined) return issue;
  }
  return undefined;
}

/** The SQL condition of one entry, or a 422 at ["query","property_filter",index]. */
export function propertyCondition(
  filter: PropertyFilter,
  definition: Definition | undefined,
  index: number,
  at: FilterLocation = QUERY,
): Condition {
  const issue = propertyFilterIssue(filter, definition);
  if (issue !== undefined || !definition) {
    throw validationError([...at, 'property_filter', index], issue ?? '', 'value_error', {
      input: `${filter.key}:${filter.op}:${filter.value}`,
    });
  }
  const kind = definition.kind as PropertyKind;
  const slot = SLOT[kind];
  const exists = (condition: RawBuilder<unknown> | undefined) =>
    sql`exists (select 1 from contact_property_values pv where pv.org_id = c.org_id and pv.contact_id = c.id
      and pv.property_id = ${definition.id}${condition ? sql` and ${condition}` : sql``})`;

  if (filter.op === 'exists') {
    return filter.value === 'true'
      ? { sql: exists(undefined), rows: { propertyId: definition.id, condition: undefined } }
      : { sql: sql`not ${exists(undefined)}` };
  }
  const values = filter.op === 'in' ? filter.value.split('|') : [filter.value];
  const typed = values.map((value) => typedValue(kind, value));
  let condition: RawBuilder<unknown>;
  if (slot === 'value_json') {
    // MULTI_SELECT: eq and contains mean "has this option"; in means "has any of these".
    condition = sql`(${sql.join(
      typed.map((value) => sql`pv.value_json @> ${JSON.stringify([value])}::jsonb`),
      sql` or `,
    )})`;
  } else if (filter.op === 'contains') {
    condition = sql`pv.value_text ilike ${`%${escapeLike(filter.value)}%`}`;
  } else if (slot === 'value_text') {
    // The index holds value_key, the value's first 200 characters. A value shorter than that equals a stored value
    // exactly when it equals its key, so only a longer one needs the whole stored value re-checked (which the
    // index cannot answer alone).
    const prefixes = sql`pv.value_key in (${sql.join(typed.map((value) => sql`left(${value}, 200)`))})`;
    condition = typed.every((value) => value.length < 200)
      ? prefixes
      : sql`${prefixes} and pv.value_text in (${sql.join(typed)})`;
  } else {
    const column = sql.ref(`pv.${slot}`);
    const cast = slot === 'value_date' ? sql`::date` : slot === 'value_number' ? sql`::numeric` : sql`::boolean`;
    const operator = COMPARE[filter.op];
    condition = operator
      ? sql`${column} ${sql.raw(operator)} ${typed[0]}${cast}`
      : sql`${column} in (${sql.join(typed.map((value) => sql`${value}${cast}`))})`;
  }
  // neq: every contact that does not hold the value, including those with no value at all.
  return filter.op === 'neq'
    ? { sql: sql`not ${exists(condition)}` }
    : { sql: exists(condition), rows: { propertyId: definition.id, condition } };
}

function valueIssue(kind: PropertyKind, value: string): string | undefined {
  if (kind === 'NUMBER' || kind === 'MONEY') {
    if (value.trim() === '' || !Number.isFinite(Number(value))) return `'${value}' is not a number`;
  }
  if (kind === 'DATE') {
    const date = new Date(`${value}T00:00:00Z`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(date.getTime()) || !date.toISOString().startsWith(value)) {
      return `'${value}' is not a date (YYYY-MM-DD)`;
    }
  }
  if (kind === 'BOOLEAN' && value !== 'true' && value !== 'false') return `'${value}' is not true or false`;
  return undefined;
}

/** A value valueIssue accepted, as the condition compares it (numbers in their plain form). */
const typedValue = (kind: PropertyKind, value: string): string =>
  kind === 'NUMBER' || kind === 'MONEY' ? String(Number(value)) : value;

export interface ListFilter {
  /** Everything in the query that narrows the list, as one condition over `contacts c`. */
  where: RawBuilder<unknown>;
  /**
   * Set when the filter is one positive property condition and nothing else: the list is then the contacts
   * holding these rows (a value only exists for a live contact: deleting a contact deletes its values).
   */
  rows?: ValueRows;
  /**
   * Set when `q` has trigrams: `where` with q matched through its trigrams one by one (see trigramSearch). The
   * planner thinks it rare, so it suits a q matched by few contacts: the list counts with it, then pages with it
   * when the count is small.
   */
  narrow?: RawBuilder<unknown>;
  /** Set when nothing narrows the list: every live contact of the organization (counted in contact_counts). */
  unfiltered?: true;
}

/** Everything in the query that narrows the list. */
export function listConditions(
  query: ContactFilters,
  timezone: string,
  definitions: Map<string, Definition>,
  at: FilterLocation = QUERY,
): ListFilter {
  const conditions: RawBuilder<unknown>[] = [];
  const properties: Condition[] = [];
  const anyOf = (column: string, values: string[] | undefined) => {
    if (values && values.length > 0) conditions.push(sql`${sql.ref(`c.${column}`)} in (${sql.join(values)})`);
  };
  anyOf('country', query.country);
  anyOf('origin', query.origin);
  anyOf('funnel_stage_id', query.funnel_stage_ids);
  anyOf('owner_id', query.owner_id);
  // contract: inclusive calendar dates in the organization's timezone.
  if (query.created_from) {
    conditions.push(sql`c.created_at >= (${query.created_from}::date)::timestamp at time zone ${timezone}`);
  }
  if (query.created_to) {
    conditions.push(sql`c.created_at < (${query.created_to}::date + 1)::timestamp at time zone ${timezone}`);
  }
  // decisions §14
  if (query.opted_out !== undefined) conditions.push(sql`c.opted_out = ${query.opted_out}`);
  // q: the LIKE, and its trigram form for the narrow variant (see ListFilter.narrow).
  const searchAt = conditions.length;
  const search = query.q === undefined ? undefined : trigramSearch(query.q);
  if (query.q !== undefined) conditions.push(sql`c.search_text like lower(${`%${escapeLike(query.q)}%`})`);
  const entries = filterEntries(query.property_filter, at);
  for (const [index, entry] of entries.entries()) {
    const filter = parsePropertyFilter(entry, index, at);
    properties.push(propertyCondition(filter, definitions.get(filter.key), index, at));
  }
  const only = conditions.length === 0 && properties.length === 1 ? properties[0]?.rows : undefined;
  conditions.push(...properties.map((condition) => condition.sql));
  const narrow = search && conditions.map((condition, i) => (i === searchAt ? search : condition));
  return {
    where: conditions.length === 0 ? sql`true` : sql.join(conditions, sql` and `),
    ...(conditions.length === 0 ? { unfiltered: true } : {}),
    ...(only ? { rows: only } : {}),
    ...(narrow ? { narrow: sql.join(narrow, sql` and `) } : {}),
  };
}

/** At most this many of q's trigrams go to the index (each is one more key for the GIN scan to intersect). */
const MAX_TRIGRAMS = 12;

/**
 * `q` as the trigram index reads a selective search fastest: each of its trigrams a condition of its own, so that
 * the GIN scan intersects one key per trigram and skips through the long posting lists of common trigrams
 * (`use`, `000`…) from one entry of the rarest to the next, instead of reading them in full as it does for the
 * trigrams of one LIKE. Only windows of three ASCII letters or digits are used (each is a trigram of
 * pg_trgm whatever the locale); `strpos` then checks the substring itself, exactly as the LIKE does. Undefined
 * when q has no such window (the LIKE stays).
 */
function trigramSearch(q: string): RawBuilder<unknown> | undefined {
  const windows = new Set<string>();
  for (let i = 0; i + 3 <= q.length; i++) {
    const window = q.slice(i, i + 3);
    if (/^[A-Za-z0-9]{3}$/.test(window)) windows.add(window);
  }
  if (windows.size === 0) return undefined;
  const all = [...windows];
  // Spread over q when it is long: its rare trigrams can be anywhere.
  const chosen =
    all.length <= MAX_TRIGRAMS
      ? all
      : Array.from({ length: MAX_TRIGRAMS }, (_, i) => all[Math.floor((i * all.length) / MAX_TRIGRAMS)] as string);
  const trigrams = chosen.map((window) => sql`c.search_text like lower(${`%${window}%`})`);
  return sql.join([...trigrams, sql`strpos(c.search_text, lower(${q})) > 0`], sql` and `);
}

/** A cursor belongs to its filter: the fields that shape the result set (sort and direction are its scope). */
export function listFingerprint(query: ContactListQuery): unknown {
  return [
    query.q,
    query.country,
    query.origin,
    query.funnel_stage_ids,
    query.owner_id,
    query.created_from,
    query.created_to,
    query.property_filter,
    // Added last and only when given, so that cursors of lists without it keep their fingerprint.
    ...(query.opted_out === undefined ? [] : [query.opted_out]),
  ];
}

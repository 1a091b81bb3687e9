// The contact-list benchmark's rows (every sort both ways on page 1 and page 1,000, a selective and a
// common `q`, two property filters) and its report: each row through HTTP one at a time and N in flight, the same
// list without HTTP, the ratio to the bare server measured in the same run, and the process's peak RSS.
import { mb, type Result } from './measure.ts';
import type { SummaryRow } from './summary.ts';

export interface RowSpec {
  name: string;
  /** The query string of the list (without cursor). */
  search: string;
  /** 1 for the first page; later pages are reached by a cursor. */
  page: number;
  /** Rows the issue sets a target for: p99 <= 10 ms one at a time, <= 50 ms in flight. */
  target: boolean;
}

export interface Pair {
  one: Result;
  many: Result;
}

export interface Row extends RowSpec {
  api: Pair;
  /** The bare server, measured right before the row. */
  bare: Pair;
  service: Pair;
  sql: Result;
}

const SORTS = ['recent', 'name', 'country', 'city', 'origin'] as const;

export function rows(contacts: number, pageSize: number): RowSpec[] {
  // Page 1,000, or the deepest full page of a smaller organization (or filter).
  const deep = (matches: number) => Math.max(2, Math.min(1000, Math.floor(matches / pageSize)));
  const list: RowSpec[] = [];
  for (const sort of SORTS) {
    const natural = sort === 'recent' ? 'desc' : 'asc';
    for (const dir of [natural, natural === 'desc' ? 'asc' : 'desc']) {
      const search = `sort=${sort}${dir === natural ? '' : `&sort_dir=${dir}`}`;
      for (const page of [1, deep(contacts)]) {
        list.push({ name: `${sort} ${dir}, page ${page}`, search, page, target: true });
      }
    }
  }
  // The seed gives contact i the email user<i>@example<i % 97>.com: one match.
  const one = Math.floor(contacts / 2) + 7;
  list.push({ name: `q=user${one}@ (one email)`, search: `q=user${one}%40`, page: 1, target: true });
  list.push({ name: 'q=garcia (common name, ~5%)', search: 'q=garcia', page: 1, target: false });
  const gold = 'property_filter=tier:eq:gold';
  list.push({ name: 'tier:eq:gold (25%), page 1', search: gold, page: 1, target: true });
  list.push({
    name: `tier:eq:gold (25%), page ${deep(contacts / 4)}`,
    search: gold,
    page: deep(contacts / 4),
    target: true,
  });
  const score = 'sort=name&property_filter=score:gte:990';
  list.push({ name: 'score:gte:990 (1%) & sort=name, page 1', search: score, page: 1, target: true });
  list.push({
    name: `score:gte:990 (1%) & sort=name, page ${deep(contacts / 100)}`,
    search: score,
    page: deep(contacts / 100),
    target: true,
  });
  list.push({ name: 'recent, include_total=true (exact count)', search: 'include_total=true', page: 1, target: false });
  return list;
}

const ms = (value: number) => value.toFixed(1);
const pair = (result: Result) => `${ms(result.p50)} / ${ms(result.p99)}`;

export function report(input: {
  contacts: number;
  pageSize: number;
  requests: number;
  concurrency: number;
  host: string;
  bare: { http: Pair; sql: Pair }[];
  rows: Row[];
  peakRss: number;
  apiPeakRss: number;
}): string {
  const n = input.concurrency;
  const lines = [
    `Contacts: ${input.contacts.toLocaleString('en')} in one organization; page size ${input.pageSize}; ` +
      `PostgreSQL at ${input.host}; ${input.requests} requests per measurement, after 3 untimed.`,
    '',
    'Bare baselines (p50 / p99 ms), at the start and at the end of the run:',
    '',
    `| Baseline | 1 at a time | ${n} in flight | req/s at ${n} |`,
    '|---|---:|---:|---:|',
    ...input.bare.flatMap(({ http, sql }) =>
      [http, sql].map((p) => `| ${p.one.name} | ${pair(p.one)} | ${pair(p.many)} | ${p.many.throughput.toFixed(0)} |`),
    ),
    '',
    `The list rows (p50 / p99 ms). "API" is through HTTP; "no HTTP" is the same list from the service; ` +
      `"SQL" is the list's SQL alone (page, contacts, property values, count); "bare" is the bare server measured right before the row; ` +
      `"× bare" is the API's p50 over the bare server's p50 at the same concurrency; the target is p99 <= 10 ms ` +
      `one at a time and <= 50 ms at ${n} in flight.`,
    '',
    `| Row | API, 1 | API, ${n} | API req/s at ${n} | no HTTP, 1 | no HTTP, ${n} | SQL, 1 | bare, 1 | bare, ${n} | × bare, 1 | × bare, ${n} | target |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...input.rows.map((row) => {
      const met = row.api.one.p99 <= 10 && row.api.many.p99 <= 50;
      return (
        `| ${row.name} | ${pair(row.api.one)} | ${pair(row.api.many)} | ${row.api.many.throughput.toFixed(0)} | ` +
        `${pair(row.service.one)} | ${pair(row.service.many)} | ${pair(row.sql)} | ` +
        `${pair(row.bare.one)} | ${pair(row.bare.many)} | ` +
        `${(row.api.one.p50 / row.bare.one.p50).toFixed(1)} | ${(row.api.many.p50 / row.bare.many.p50).toFixed(1)} | ` +
        `${row.target ? (met ? 'met' : 'missed') : '-'} |`
      );
    }),
    '',
    `Peak RSS of the API (its own process) during the list rows: ${mb(input.apiPeakRss)} (target <= 200 MB)  ` +
      `${input.apiPeakRss <= 200 * 1024 * 1024 ? 'MET' : 'NOT MET'}; of the bench process (bare server, service ` +
      `without HTTP, load generator): ${mb(input.peakRss)}.`,
    '',
  ];
  return lines.join('\n');
}

/**
 * The rows for `npm run bench`'s summary table: each list row one at a time and N in flight, its p50 and p99
 * through HTTP, the bare server's p50 measured right before it at the same concurrency, the ratio of the two
 * p50s (how many bare requests one list request costs), and the issue's target.
 */
export function summaryRows(input: {
  contacts: number;
  concurrency: number;
  rows: Row[];
  rssMb: number;
}): SummaryRow[] {
  const path = `contact list, ${input.contacts.toLocaleString('en')} contacts`;
  return input.rows.flatMap((row) =>
    (
      [
        ['1 at a time', row.api.one, row.bare.one, 10],
        [`${input.concurrency} in flight`, row.api.many, row.bare.many, 50],
      ] as const
    ).map(([load, api, bare, limit]) => ({
      path,
      row: `${row.name}, ${load}`,
      baseline: `bare Fastify + pg page of 50: p50 ${ms(bare.p50)} ms`,
      value: `p50 ${ms(api.p50)} ms, ${api.throughput.toFixed(0)} req/s`,
      ratio: api.p50 / bare.p50,
      p50Ms: api.p50,
      p99Ms: api.p99,
      rssMb: input.rssMb,
      target: row.target ? `p99 <= ${limit} ms` : 'none (reported)',
      met: row.target ? api.p99 <= limit : null,
    })),
  );
}

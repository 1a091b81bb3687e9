// The one table `npm run bench` ends with (D67): every benchmark appends its headline rows here, each
// beside the baseline it was measured against in the same run, and `bench/all.ts` prints them together at the end.
// Rows are JSON lines in BENCH_SUMMARY (default bench/results/summary.jsonl), so each benchmark can also run alone.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SummaryRow {
  /** The path measured, as docs/benchmarks.md's table names it (e.g. "GET /v1/contacts/{id}"). */
  path: string;
  /** The variant of the row (e.g. "recent desc, page 1000, 8 in flight"). */
  row: string;
  /** What it was measured against in the same run, and that baseline's figure (e.g. "bare Fastify + pg: 5,200 req/s"). */
  baseline: string;
  /** The row's own headline figure (e.g. "3,900 req/s" or "2,800 msg/s"). */
  value: string;
  /** value / baseline where a ratio means something (throughput), else null. */
  ratio: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Peak RSS of the process the row is about (the API, the worker), in MB, when measured. */
  rssMb: number | null;
  /** The target, in words (e.g. ">= 0.7x bare", "p99 <= 10 ms"). */
  target: string;
  /** Whether the run met the target; null when the row has none. */
  met: boolean | null;
}

const root = fileURLToPath(new URL('..', import.meta.url));

export function summaryFile(): string {
  return resolve(root, process.env.BENCH_SUMMARY ?? 'bench/results/summary.jsonl');
}

/** Appends rows to the run's summary. */
export function recordSummary(rows: SummaryRow[]): void {
  const file = summaryFile();
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
}

export function resetSummary(): void {
  const file = summaryFile();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '');
}

export function readSummary(): SummaryRow[] {
  const file = summaryFile();
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SummaryRow);
}

const figure = (value: number | null, digits = 1) => (value === null ? '—' : value.toFixed(digits));

/** The summary as a Markdown table. */
export function summaryTable(rows: SummaryRow[]): string {
  return [
    '| Path | Row | Baseline (same run) | Value | Ratio | p50 ms | p99 ms | RSS MB | Target | Met |',
    '|---|---|---|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.path} | ${r.row} | ${r.baseline} | ${r.value} | ${r.ratio === null ? '—' : `${r.ratio.toFixed(2)}×`} | ` +
        `${figure(r.p50Ms)} | ${figure(r.p99Ms)} | ${figure(r.rssMb, 0)} | ${r.target} | ` +
        `${r.met === null ? '—' : r.met ? 'met' : 'missed'} |`,
    ),
  ].join('\n');
}

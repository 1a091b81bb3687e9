// `crm contacts import FILE.csv --match-on email|phone` (decisions §12): loads a CSV through the public API in
// batches of 100. Refused rows go with their reasons to FILE.rejected.csv and the rest still loads; the rows done
// are recorded in FILE.import-state.json after each batch, so a run that was interrupted resumes where it stopped
// (batch upsert matches on email or phone, so a batch sent twice updates rather than duplicates).
import { createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { ApiError, type CrmClient } from '../sdk/src/index.ts';

export const IMPORT_BATCH = 100;

type Row = Record<string, string>;
interface Item {
  line: number;
  row: Row;
  body: Record<string, unknown>;
}

/** A CSV row -> a batch item: contact fields as given (empty cells left out), `properties.<key>` as TEXT values. */
export function itemOf(row: Row): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  const properties: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(row)) {
    const value = raw.trim();
    if (value === '') continue;
    if (column.startsWith('properties.')) {
      // The kind is the property's: a JSON cell ({"kind":"NUMBER","value_number":3}) is taken as is.
      properties[column.slice('properties.'.length)] = value.startsWith('{')
        ? JSON.parse(value)
        : { kind: 'TEXT', value_text: value };
    } else if (column === 'opted_out') item.opted_out = value.toLowerCase() === 'true';
    else item[column] = value;
  }
  if (Object.keys(properties).length > 0) item.properties = properties;
  return item;
}

/** Where an API refusal points: the item's index, from `loc` or `detail.index`. */
function refusedIndex(error: ApiError): number | undefined {
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    const loc = (detail[0] as { loc?: unknown[] } | undefined)?.loc;
    return loc?.[0] === 'body' && loc[1] === 'items' && typeof loc[2] === 'number' ? loc[2] : undefined;
  }
  const index = (detail as { index?: unknown } | null)?.index;
  return typeof index === 'number' ? index : undefined;
}

function reasonOf(error: ApiError): string {
  const detail = error.detail as unknown;
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown[]; msg?: string }) => `${issue.loc?.slice(3).join('.')}: ${issue.msg}`)
      .join('; ');
  }
  return JSON.stringify(detail);
}

export interface ImportResult {
  rows: number;
  imported: number;
  rejected: number;
  skipped: number;
}

export async function importContacts(
  client: CrmClient,
  file: string,
  matchOn: 'email' | 'phone',
  output: { tty: boolean; write(line: string): void } = {
    tty: Boolean(process.stderr.isTTY),
    write: (line) => void process.stderr.write(`${line}\n`),
  },
): Promise<ImportResult> {
  const rejectedFile = `${file.replace(/\.csv$/i, '')}.rejected.csv`;
  const stateFile = `${file}.import-state.json`;
  const done = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { rows: number }).rows : 0;
  if (done === 0) await writeFile(rejectedFile, '');
  const result: ImportResult = { rows: 0, imported: 0, rejected: 0, skipped: done };
  let header: string[] | undefined;
  const bar = output.tty
    ? new cliProgress.SingleBar(
        { format: 'import [{bar}] {value} rows | {speed} rows/s' },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const started = Date.now();
  bar?.start(0, done, { speed: 0 });

  const reject = async (items: Item[], reason: string) => {
    if (!header) return;
    const columns = [...header, 'reason'];
    const lines = items.map((item) => [...header!.map((column) => item.row[column] ?? ''), reason]);
    const existing = existsSync(rejectedFile) && readFileSync(rejectedFile, 'utf8').length > 0;
    await appendFile(rejectedFile, stringify(existing ? lines : [columns, ...lines]));
    result.rejected += items.length;
  };

  const flush = async (batch: Item[]) => {
    let pending = batch.filter((item) => item.body[matchOn] !== undefined);
    const missing = batch.filter((item) => item.body[matchOn] === undefined);
    if (missing.length > 0) await reject(missing, `${matchOn}: required (--match-on ${matchOn})`);
    // All or nothing per call: a refused item is set aside and the rest of the batch is sent again.
    while (pending.length > 0) {
      try {
        await client.request('POST', '/v1/contacts/batch-upsert', {
          body: { match_on: matchOn, items: pending.map((item) => item.body) },
        });
        result.imported += pending.length;
        break;
      } catch (error) {
        const index = error instanceof ApiError ? refusedIndex(error) : undefined;
        if (index === undefined || !pending[index]) throw error;
        await reject([pending[index]], reasonOf(error as ApiError));
        pending = pending.filter((_, position) => position !== index);
      }
    }
    const rows = batch.at(-1)?.line ?? 0;
    writeFileSync(stateFile, JSON.stringify({ rows }));
    const speed = Math.round((result.imported / Math.max(1, Date.now() - started)) * 1000);
    if (bar) bar.update(rows, { speed });
    else output.write(`${rows} rows, ${result.imported} imported, ${result.rejected} rejected, ${speed} rows/s`);
  };

  let batch: Item[] = [];
  const parser = createReadStream(file).pipe(
    parse({ columns: (names: string[]) => (header = names), bom: true, trim: true }),
  );
  for await (const row of parser as AsyncIterable<Row>) {
    result.rows += 1;
    if (result.rows <= done) continue;
    batch.push({ line: result.rows, row, body: itemOf(row) });
    if (batch.length === IMPORT_BATCH) {
      await flush(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await flush(batch);
  bar?.stop();
  writeFileSync(stateFile, JSON.stringify({ rows: result.rows, finished: true }));
  return result;
}

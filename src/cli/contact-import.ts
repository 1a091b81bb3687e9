// `crm contacts import FILE.csv --match-on email|phone` (decisions §12): loads a CSV through the public API in
// batches of 100. Refused rows go with their reasons to FILE.rejected.csv and the rest still loads; the rows done
// are recorded in FILE.csv.import-state.json after each batch, so a run that was interrupted resumes where it stopped
// (batch upsert matches on email or phone, so a batch sent twice updates rather than duplicates). As many batches
// are in flight as the organization's rate budget allows (rate-budget.ts): one call counts once, so at 20 requests a
// second an import loads about 2,000 contacts a second. A progress bar on a terminal, plain lines otherwise.
import { createReadStream, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { appendFile, writeFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import {
  ApiError,
  CrmClient,
  contactItemOf,
  RateLimitError,
  refusalReason,
  refusedItemIndex,
} from '../../sdk/src/index.ts';
import { RateBudget } from './rate-budget.ts';

export const IMPORT_BATCH = 100;

type Row = Record<string, string>;
interface Item {
  line: number;
  row: Row;
  body: Record<string, unknown>;
}

export interface ImportResult {
  rows: number;
  imported: number;
  rejected: number;
  skipped: number;
}

export interface ImportOutput {
  /** A progress bar (a terminal) or one plain line per batch (a pipe, a file). */
  tty: boolean;
  write(line: string): void;
}

/** The progress bar goes to stderr when stderr or stdout is a terminal (stdout keeps the final JSON). */
export const processOutput = (): ImportOutput => ({
  tty: Boolean(process.stderr.isTTY || process.stdout.isTTY),
  write: (line) => void process.stderr.write(`${line}\n`),
});

/** A client whose every answer tells `budget` the organization's rate budget; 429s are the importer's to wait out. */
export function importClient(apiKey: string, baseUrl: string, budget: RateBudget = new RateBudget()) {
  return { client: new CrmClient({ apiKey, baseUrl, maxRetries: 0, fetch: budget.fetch }), budget };
}

/** How the file's rows stand: the first `rows` are done, and so are the batches starting at the lines in `ahead`. */
interface ImportState {
  rows: number;
  ahead?: number[];
  finished?: boolean;
}

function readState(stateFile: string): ImportState {
  return existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as ImportState) : { rows: 0 };
}

/** Written whole or not at all (a rename), so an interruption never leaves a state the next run cannot read. */
function writeState(stateFile: string, state: ImportState): void {
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
  renameSync(`${stateFile}.tmp`, stateFile);
}

/** The rows of a CSV file (a second pass, for the progress bar's total). */
async function countRows(file: string): Promise<number> {
  let rows = 0;
  for await (const _ of createReadStream(file).pipe(parse({ bom: true, from_line: 2 }))) rows += 1;
  return rows;
}

/** Up to this many 429s or 503s in a row for one batch before the import gives up. */
const MAX_WAITS = 30;

/** Refused before anything ran, with a Retry-After: over the budget (429), or the database unreachable (503). */
const isTransient = (error: unknown): error is ApiError =>
  error instanceof RateLimitError || (error instanceof ApiError && error.status === 503);

export async function importContacts(
  client: CrmClient,
  file: string,
  matchOn: 'email' | 'phone',
  output: ImportOutput = processOutput(),
  budget: RateBudget = new RateBudget(),
): Promise<ImportResult> {
  const rejectedFile = `${file.replace(/\.csv$/i, '')}.rejected.csv`;
  const stateFile = `${file}.import-state.json`;
  const state = readState(stateFile);
  const done = state.rows;
  const ahead = new Set(state.ahead ?? []);
  if (done === 0 && ahead.size === 0) await writeFile(rejectedFile, '');
  const result: ImportResult = { rows: 0, imported: 0, rejected: 0, skipped: done };
  let header: string[] | undefined;
  const bar = output.tty
    ? new cliProgress.SingleBar(
        {
          format: 'import [{bar}] {percentage}% | {value}/{total} rows | {speed} rows/s | ETA {eta_formatted}',
          // On the terminal: stderr, or stdout when only stdout is one (stderr sent to a file).
          stream: process.stderr.isTTY || !process.stdout.isTTY ? process.stderr : process.stdout,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const started = Date.now();
  bar?.start(bar ? await countRows(file) : 0, done, { speed: 0 });
  let processed = done;

  // Rejected rows are appended one batch at a time, in the order their answers come.
  let rejecting = Promise.resolve();
  const reject = (items: Item[], reason: string) => {
    result.rejected += items.length;
    rejecting = rejecting.then(async () => {
      if (!header) return;
      const columns = [...header, 'reason'];
      const lines = items.map((item) => [...(header ?? []).map((column) => item.row[column] ?? ''), reason]);
      const existing = existsSync(rejectedFile) && statSync(rejectedFile).size > 0;
      await appendFile(rejectedFile, stringify(existing ? lines : [columns, ...lines]));
    });
    return rejecting;
  };

  /** One call within the budget (`held`: its first try already holds a start); a 429 or 503 waits, tries again. */
  const send = async (items: Item[], held: boolean) => {
    for (let limited = 0; ; limited++) {
      if (!held) await budget.acquire();
      held = false;
      try {
        await client.request('POST', '/v1/contacts/batch-upsert', {
          body: { match_on: matchOn, items: items.map((item) => item.body) },
        });
        return;
      } catch (error) {
        if (!isTransient(error) || limited >= MAX_WAITS) throw error;
        // The budget learned the wait from the answer's Retry-After (its fetch saw it): acquire() honours it.
        budget.observe(error.status, error.headers);
      } finally {
        budget.release();
      }
    }
  };

  // Batches finish in any order: the state keeps the rows done from the top, and the batches done beyond them.
  const inFlight = new Set<number>();
  const completed = new Set<number>(ahead);
  let dispatched = done;
  const settle = (first: number, size: number) => {
    inFlight.delete(first);
    completed.add(first);
    processed += size;
    const rows = inFlight.size > 0 ? Math.min(...inFlight) - 1 : dispatched;
    for (const start of completed) if (start <= rows) completed.delete(start);
    writeState(stateFile, { rows, ahead: [...completed].sort((x, y) => x - y) });
  };

  const flush = async (batch: Item[], held: boolean) => {
    let pending = batch.filter((item) => item.body[matchOn] !== undefined);
    const missing = batch.filter((item) => item.body[matchOn] === undefined);
    if (missing.length > 0) await reject(missing, `${matchOn}: required (--match-on ${matchOn})`);
    if (pending.length === 0 && held) budget.release();
    // All or nothing per call: a refused item is set aside and the rest of the batch is sent again.
    while (pending.length > 0) {
      try {
        await send(pending, held);
        result.imported += pending.length;
        break;
      } catch (error) {
        const index = refusedItemIndex(error);
        if (index === undefined || !pending[index]) throw error;
        await reject([pending[index]], refusalReason(error as ApiError));
        pending = pending.filter((_, position) => position !== index);
      } finally {
        held = false;
      }
    }
    await rejecting;
    settle((batch[0] as Item).line, batch.length);
    const speed = Math.round((result.imported / Math.max(1, Date.now() - started)) * 1000);
    if (bar) bar.update(processed, { speed });
    else output.write(`${processed} rows, ${result.imported} imported, ${result.rejected} rejected, ${speed} rows/s`);
  };

  // As many batches in flight as the budget allows; the first failure stops new ones and is thrown once the others
  // have settled (and recorded themselves in the state).
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  const dispatch = async (batch: Item[]) => {
    const first = (batch[0] as Item).line;
    if (ahead.has(first)) {
      result.skipped += batch.length;
      processed += batch.length;
      dispatched = (batch.at(-1) as Item).line;
      return;
    }
    await budget.acquire();
    inFlight.add(first);
    dispatched = (batch.at(-1) as Item).line;
    const task: Promise<void> = flush(batch, true)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(task));
    running.add(task);
  };

  let batch: Item[] = [];
  const parser = createReadStream(file).pipe(
    parse({ columns: (names: string[]) => (header = names), bom: true, trim: true }),
  );
  for await (const row of parser as AsyncIterable<Row>) {
    result.rows += 1;
    if (result.rows <= done) continue;
    batch.push({ line: result.rows, row, body: contactItemOf(row) });
    if (batch.length === IMPORT_BATCH) {
      await dispatch(batch);
      batch = [];
      if (failure) break;
    }
  }
  if (batch.length > 0 && !failure) await dispatch(batch);
  await Promise.all(running);
  bar?.stop();
  if (failure) throw failure.error;
  writeState(stateFile, { rows: result.rows, finished: true });
  return result;
}

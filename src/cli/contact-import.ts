// `crm contacts import FILE.csv --match-on email|phone` (decisions §12): loads a CSV through the public API in
// batches of 100. Refused rows go with their CSV line and their own reasons to FILE.rejected.csv (in line order) and
// the rest still loads. The rows done are recorded after each batch in FILE.csv.import-state.json, with the size
// and SHA-256 of the file (import-state.ts): a run that was interrupted resumes where it stopped, and a different
// file under the same name is refused instead of being skipped. As many batches are in flight as the organization's
// rate budget allows (rate-budget.ts): one call counts once, so at 20 requests a second an import loads about 2,000
// contacts a second. A progress bar on a terminal, plain lines otherwise. One duplicate rule (docs/decisions.md
// D65): the first row of the file with a match value is the one sent; a later row with the same value is refused.
// Each cell is converted by the SDK's contact-csv.ts (D232); Ctrl-C aborts what is in flight (D233).
import { createReadStream, existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import { type Info, parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import {
  ApiError,
  CrmClient,
  type CsvColumns,
  contactItemOf,
  csvColumns,
  type PropertyDefinition,
  RateLimitError,
  refusedItems,
} from '../../sdk/src/index.ts';
import { fileFingerprint, readRejected, readState, rejectedFileOf, stateFileOf, writeState } from './import-state.ts';
import { CommandRefused } from './output.ts';
import { RateBudget } from './rate-budget.ts';

export { fileFingerprint, stateFileOf } from './import-state.ts';

export const IMPORT_BATCH = 100;

type Row = Record<string, string>;
interface Item {
  /** The row's position among the file's rows (1 = the first after the header). */
  row: number;
  /** The CSV line the row is on (the header is line 1). */
  line: number;
  values: Row;
  body: Record<string, unknown>;
  /** Why the row cannot be sent as it is (cells that do not convert, contact-csv.ts): refused without a call. */
  problems: string[];
}

export interface ImportResult {
  rows: number;
  imported: number;
  rejected: number;
  skipped: number;
  /** Present when the run was stopped (Ctrl-C) before the end of the file; running it again resumes. */
  interrupted?: true;
}

export interface ImportOutput {
  /** A progress bar (a terminal) or one plain line per batch (a pipe, a file). */
  tty: boolean;
  write(line: string): void;
}

export interface ImportOptions {
  output?: ImportOutput;
  budget?: RateBudget;
  /**
   * Aborted (Ctrl-C): no new batch starts, the requests in flight are aborted and their batches left for the next run,
   * the state is recorded, and the import returns `interrupted` (D233).
   */
  signal?: AbortSignal;
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

/** The duplicate rule's key of a match value: emails compare case-insensitively (as the server does), phones exactly. */
const matchKey = (matchOn: 'email' | 'phone', value: unknown) =>
  matchOn === 'email' ? String(value).toLowerCase() : String(value);

/** `GET /v1/properties` within the budget (a 429 or 503 waited out as a batch's); stopped with the import. */
async function propertiesOf(
  client: CrmClient,
  acquire: () => Promise<boolean>,
  release: () => void,
  signal: AbortSignal,
): Promise<PropertyDefinition[]> {
  for (let limited = 0; ; limited++) {
    if (!(await acquire())) throw signal.reason;
    try {
      return (await client.properties.list({ signal })).items;
    } catch (error) {
      if (signal.aborted || !isTransient(error) || limited >= MAX_WAITS) throw error;
    } finally {
      release();
    }
  }
}

/** The header's columns, or the refusal of the whole file when a column cannot be filled (nothing is sent). */
function checkedColumns(file: string, header: string[], properties: PropertyDefinition[]): CsvColumns {
  const { columns, problems } = csvColumns(header, properties);
  if (problems.length > 0) {
    throw new CommandRefused(
      `${file} cannot be imported: ${problems.length === 1 ? 'a column' : `${problems.length} columns`} of its header ` +
        `cannot be filled. ${problems.join('; ')}. Nothing was sent: rename or remove ${problems.length === 1 ? 'it' : 'them'}.`,
    );
  }
  return columns;
}

export async function importContacts(
  client: CrmClient,
  file: string,
  matchOn: 'email' | 'phone',
  options: ImportOptions = {},
): Promise<ImportResult> {
  const output = options.output ?? processOutput();
  const budget = options.budget ?? new RateBudget();
  const rejectedFile = rejectedFileOf(file);
  const fingerprint = await fileFingerprint(file);
  const state = readState(file, fingerprint, matchOn);
  const done = state.rows;
  const ahead = new Set(state.ahead ?? []);
  if (state.finished) output.write(`${file} was imported already (${stateFileOf(file)}): nothing to send`);
  // Rows an earlier run refused are not written twice (a batch in flight at an interruption is sent again).
  const earlier = done === 0 && ahead.size === 0 ? [] : readRejected(rejectedFile);
  if (earlier.length === 0) writeFileSync(rejectedFile, '');
  const lineColumn = (earlier[0] ?? []).length - 2;
  const rejectedLines = new Set(earlier.slice(1).map((record) => Number(record[lineColumn])));
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
  const signal = options.signal ?? new AbortController().signal;
  // Ctrl-C (decisions §12: it can be interrupted and run again) stops at once: waits end, requests in flight are
  // aborted (D233). A batch whose answer was not read is not recorded, so the next run sends it again, which changes
  // nothing twice: a batch upsert finds the contacts it wrote by their match values.
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  /** Acquires a start within the budget, or false when the import was stopped first. */
  const acquire = async () => {
    const acquired = budget.acquire().then(() => true);
    const won = await Promise.race([acquired, stopped.then(() => false)]);
    // A start acquired after the stop is given back (nothing will run in it).
    if (!won) void acquired.then(() => budget.release());
    return won;
  };
  // Always a state to resume from, even before the first batch is recorded.
  writeState(file, { ...state, file: fingerprint, match_on: matchOn });
  // The organization's properties, once: each `properties.<key>` cell is converted by its property's kind.
  const total = await countRows(file);
  let properties: PropertyDefinition[];
  try {
    properties = await propertiesOf(client, acquire, () => budget.release(), signal);
  } catch (error) {
    if (signal.aborted) return { ...result, rows: total, interrupted: true };
    throw error;
  }
  const started = Date.now();
  bar?.start(total, done, { speed: 0 });

  // A batch's rejected rows are written when its answers are all in, with the batch recorded as done: an interrupted
  // batch writes none, and is sent again. The finished file is rewritten in CSV line order.
  let rejecting = Promise.resolve();
  const reject = (refused: { item: Item; reason: string }[]) => {
    result.rejected += refused.length;
    const fresh = refused.filter(({ item }) => !rejectedLines.has(item.line));
    for (const { item } of fresh) rejectedLines.add(item.line);
    if (fresh.length === 0) return rejecting;
    rejecting = rejecting.then(async () => {
      const columns = [...(header ?? []), 'line', 'reason'];
      const lines = fresh.map(({ item, reason }) => [
        ...(header ?? []).map((column) => item.values[column] ?? ''),
        String(item.line),
        reason,
      ]);
      const existing = existsSync(rejectedFile) && statSync(rejectedFile).size > 0;
      await appendFile(rejectedFile, stringify(existing ? lines : [columns, ...lines]));
    });
    return rejecting;
  };

  /** One call within the budget (`held`: its first try already holds a start); a 429 or 503 waits, tries again. */
  const send = async (items: Item[], held: boolean) => {
    for (let limited = 0; ; limited++) {
      if (!held && !(await acquire())) throw signal.reason;
      held = false;
      try {
        await client.request('POST', '/v1/contacts/batch-upsert', {
          body: { match_on: matchOn, items: items.map((item) => item.body) },
          signal,
        });
        return;
      } catch (error) {
        if (signal.aborted || !isTransient(error) || limited >= MAX_WAITS) throw error;
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
  const record = (finished = false) => {
    const rows = inFlight.size > 0 ? Math.min(...inFlight) - 1 : dispatched;
    for (const start of completed) if (start <= rows) completed.delete(start);
    writeState(file, {
      file: fingerprint,
      match_on: matchOn,
      rows,
      ...(completed.size > 0 ? { ahead: [...completed].sort((x, y) => x - y) } : {}),
      ...(finished ? { finished: true } : {}),
    });
  };
  /** The line for a pipe: rows done of the file's, and how (done = skipped + imported + rejected). */
  const progress = () => {
    const doneRows = result.skipped + result.imported + result.rejected;
    const speed = Math.round(((doneRows - done) / Math.max(1, Date.now() - started)) * 1000);
    if (bar) bar.update(doneRows, { speed });
    else
      output.write(
        `${doneRows} of ${total} rows done: ${result.imported} imported, ${result.rejected} rejected` +
          `${result.skipped > 0 ? `, ${result.skipped} done before` : ''} (${speed} rows/s)`,
      );
  };

  /** A refused item's reasons name other items by their place in the batch: name their CSV lines instead. */
  const inLines = (reason: string, pending: Item[]) =>
    reason.replace(/\bitem (\d+)\b/g, (whole, index) => {
      const other = pending[Number(index)];
      return other ? `line ${other.line}` : whole;
    });

  /** Sends a batch until every item is in or set aside; undefined when the import was stopped before its answer. */
  const flush = async (first: number, batch: Item[], refusedHere: { item: Item; reason: string }[], held: boolean) => {
    let pending = batch;
    const refused: { item: Item; reason: string }[] = [...refusedHere];
    if (pending.length === 0 && held) budget.release();
    // All or nothing per call: every item the refusal names is set aside with its own reasons, in one pass, and
    // the rest of the batch is sent again.
    while (pending.length > 0) {
      try {
        await send(pending, held);
        break;
      } catch (error) {
        if (signal.aborted) return; // not recorded: the next run sends this batch again
        const named = refusedItems(error);
        if (!named || [...named.keys()].some((index) => !pending[index])) throw error;
        const current = pending;
        for (const [index, reasons] of named)
          refused.push({ item: current[index] as Item, reason: inLines(reasons.join('; '), current) });
        pending = current.filter((_, position) => !named.has(position));
      } finally {
        held = false;
      }
    }
    result.imported += pending.length;
    await reject(refused);
    inFlight.delete(first);
    completed.add(first);
    record();
    progress();
  };

  // As many batches in flight as the budget allows; the first failure stops new ones and is thrown once the others
  // have settled (and recorded themselves in the state).
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  const dispatch = async (group: Item[]) => {
    const first = (group[0] as Item).row;
    const last = (group.at(-1) as Item).row;
    if (ahead.has(first)) {
      result.skipped += group.length;
      dispatched = last;
      return;
    }
    // Every reason of a row at once (its cells', then the match value's): a row with any is refused without a call.
    const batch: Item[] = [];
    const refusedHere: { item: Item; reason: string }[] = [];
    for (const item of group) {
      const reasons = [...item.problems];
      const value = item.body[matchOn];
      if (value === undefined) reasons.push(`${matchOn}: required (--match-on ${matchOn})`);
      else {
        const firstLine = firstLineOf.get(matchKey(matchOn, value));
        if (firstLine !== item.line)
          reasons.push(`${matchOn}: same ${matchOn} as line ${firstLine} (the first row wins)`);
      }
      if (reasons.length > 0) refusedHere.push({ item, reason: reasons.join('; ') });
      else batch.push(item);
    }
    if (!(await acquire())) return;
    inFlight.add(first);
    dispatched = last;
    const task: Promise<void> = flush(first, batch, refusedHere, true)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(task));
    running.add(task);
  };

  // The first line of each match value in the file, rows already done included (they decide later duplicates).
  const firstLineOf = new Map<string, number>();
  let group: Item[] = [];
  const parser = createReadStream(file).pipe(
    parse({ columns: (names: string[]) => (header = names), bom: true, trim: true, info: true }),
  );
  let columns: CsvColumns | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: Row; info: Info }>) {
    if (signal.aborted) break;
    columns ??= checkedColumns(file, header ?? [], properties);
    result.rows += 1;
    const { item: body, problems } = contactItemOf(record, columns);
    const item = { row: result.rows, line: info.lines, values: record, body, problems };
    const value = item.body[matchOn];
    if (value !== undefined && !firstLineOf.has(matchKey(matchOn, value)))
      firstLineOf.set(matchKey(matchOn, value), item.line);
    if (result.rows <= done) continue;
    group.push(item);
    if (group.length === IMPORT_BATCH) {
      await dispatch(group);
      group = [];
      if (failure || signal.aborted) break;
    }
  }
  if (group.length > 0 && !failure && !signal.aborted) await dispatch(group);
  await Promise.all(running);
  bar?.stop();
  if (failure && !signal.aborted) throw failure.error;
  // Stopped before the end: rows not read, or batches whose answers were not read.
  if (signal.aborted && (inFlight.size > 0 || dispatched < total)) {
    await rejecting;
    record();
    return { ...result, rows: total, interrupted: true };
  }
  record(true);
  // The finished file in CSV line order, each rejected line once.
  const rows = readRejected(rejectedFile);
  if (rows.length > 1) {
    const column = (rows[0] as string[]).length - 2;
    const byLine = new Map(rows.slice(1).map((row) => [Number(row[column]), row]));
    const sorted = [...byLine.keys()].sort((a, b) => a - b).map((line) => byLine.get(line) as string[]);
    writeFileSync(`${rejectedFile}.tmp`, stringify([rows[0] as string[], ...sorted]));
    renameSync(`${rejectedFile}.tmp`, rejectedFile);
  }
  return result;
}

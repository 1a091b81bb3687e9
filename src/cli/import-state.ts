// The state of a `crm contacts import` run (decisions §12: it can be interrupted and run again), kept beside the
// file: the rows done, tied to the file's size and SHA-256 so that another file under the same name is refused, and
// the rejected rows an earlier run wrote.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { parse as parseSync } from 'csv-parse/sync';
import { CommandRefused } from './output.ts';

/** The file an import state belongs to: its size and the SHA-256 of its bytes. */
export interface FileFingerprint {
  size: number;
  sha256: string;
}

/** How the file's rows stand: the first `rows` are done, and so are the batches starting at the rows in `ahead`. */
export interface ImportState {
  file: FileFingerprint;
  match_on: 'email' | 'phone';
  rows: number;
  ahead?: number[];
  finished?: boolean;
}

export async function fileFingerprint(file: string): Promise<FileFingerprint> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest('hex') };
}

export const stateFileOf = (file: string) => `${file}.import-state.json`;
export const rejectedFileOf = (file: string) => `${file.replace(/\.csv$/i, '')}.rejected.csv`;

/**
 * The state of an earlier run on this file, or a fresh one. A state recorded for other bytes (the file was edited or
 * replaced) or another --match-on is refused: resuming it would skip rows of a file that never loaded.
 */
export function readState(file: string, fingerprint: FileFingerprint, matchOn: 'email' | 'phone'): ImportState {
  const stateFile = stateFileOf(file);
  const fresh: ImportState = { file: fingerprint, match_on: matchOn, rows: 0 };
  if (!existsSync(stateFile)) return fresh;
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as Partial<ImportState>;
  const recorded = state.file;
  const startOver = `Nothing was sent. To import this file from its first row, delete ${stateFile} (and ${rejectedFileOf(file)}) and run the command again.`;
  if (!recorded || recorded.size !== fingerprint.size || recorded.sha256 !== fingerprint.sha256) {
    throw new CommandRefused(
      `${file} is not the file that ${stateFile} records: ${
        recorded
          ? `it recorded ${recorded.size} bytes (sha256 ${recorded.sha256.slice(0, 12)}…), this file has ${fingerprint.size} bytes (sha256 ${fingerprint.sha256.slice(0, 12)}…)`
          : 'it records no size or hash (an older import)'
      }, ${state.rows ?? 0} rows done. ${startOver}`,
    );
  }
  if (state.match_on !== matchOn) {
    throw new CommandRefused(
      `${stateFile} records an import with --match-on ${state.match_on}, not ${matchOn}. ${startOver}`,
    );
  }
  return {
    ...fresh,
    rows: state.rows ?? 0,
    ...(state.ahead ? { ahead: state.ahead } : {}),
    ...(state.finished ? { finished: true } : {}),
  };
}

/** Written whole or not at all (a rename), so an interruption never leaves a state the next run cannot read. */
export function writeState(file: string, state: ImportState): void {
  const stateFile = stateFileOf(file);
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
  renameSync(`${stateFile}.tmp`, stateFile);
}

/** The rejected rows an earlier run wrote, as CSV records (header first), or none. */
export function readRejected(rejectedFile: string): string[][] {
  if (!existsSync(rejectedFile) || statSync(rejectedFile).size === 0) return [];
  return parseSync(readFileSync(rejectedFile), { relax_column_count: true }) as string[][];
}

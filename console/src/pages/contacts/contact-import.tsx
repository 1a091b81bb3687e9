// CSV import (decisions §12, §17): the file is read in the browser and loaded through the batch upsert, 100 rows a
// call, with a progress bar. Every row a refusal names is set aside with its own reasons and its CSV line, in one
// pass, and the rest of its batch is sent again, as the CLI does (the row rules live in the SDK); the rejected rows
// are listed and download as a CSV.
import {
  CSV_LIST_SEPARATOR,
  type CsvColumns,
  type CsvRow,
  contactItemOf,
  csvColumns,
  refusedItems,
} from '@crm-messaging/sdk';
import { useQueryClient } from '@tanstack/react-query';
import Papa from 'papaparse';
import { useMemo, useState } from 'react';
import { Button, FileTrigger, Form, Label, ProgressBar, Radio, RadioGroup } from 'react-aria-components';
import { after429, api, statusOf } from '../../api/client.ts';
import { keys } from '../../api/keys.ts';
import { showError } from '../../ui/errors.ts';
import { FormError } from '../../ui/form.tsx';
import { Page } from '../../ui/page.tsx';

const BATCH = 100;
type MatchOn = 'email' | 'phone';
/** A row of the file with its line (the header is line 1). */
interface Line {
  row: CsvRow;
  line: number;
}
interface Rejected extends Line {
  reason: string;
}

/**
 * An import is a long job of the person's own budget (decisions §17): a call answered 429 after the client's own
 * quiet retries is asked again after its Retry-After, however long another tab of the same person keeps the budget
 * spent; nothing ran on a 429, so asking again writes nothing twice (D239).
 */
async function admitted<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (statusOf(error) !== 429) throw error;
      await new Promise((resolve) => setTimeout(resolve, after429(error)));
    }
  }
}

/** A refused item's reasons name other items by their place in the batch: name their CSV lines instead. */
const inLines = (reason: string, pending: Line[]) =>
  reason.replace(/\bitem (\d+)\b/g, (whole, index) => {
    const other = pending[Number(index)];
    return other ? `line ${other.line}` : whole;
  });

async function loadBatch(
  matchOn: MatchOn,
  columns: CsvColumns,
  rows: Line[],
  reject: (r: Rejected[]) => void,
): Promise<number> {
  // Every reason of a row at once (cells that do not convert by their property's kind, a missing match value):
  // such a row is refused here, without a call (D232).
  const converted = rows.map((line) => {
    const { item, problems } = contactItemOf(line.row, columns);
    if (item[matchOn] === undefined) problems.push(`${matchOn}: required (matching on ${matchOn})`);
    return { line, item, problems };
  });
  const refusedHere = converted.filter(({ problems }) => problems.length > 0);
  if (refusedHere.length > 0)
    reject(refusedHere.map(({ line, problems }) => ({ ...line, reason: problems.join('; ') })));
  let pending = converted.filter(({ problems }) => problems.length === 0).map(({ line, item }) => ({ ...line, item }));
  while (pending.length > 0) {
    try {
      await admitted(() =>
        api.contacts.batchUpsert({
          match_on: matchOn,
          items: pending.map(({ item }) => item) as never,
        }),
      );
      return pending.length;
    } catch (error) {
      const refused = refusedItems(error);
      if (!refused || [...refused.keys()].some((index) => !pending[index])) throw error;
      const current = pending;
      reject(
        [...refused].map(([index, reasons]) => {
          const { row, line } = current[index] as Line;
          return { row, line, reason: inLines(reasons.join('; '), current) };
        }),
      );
      pending = current.filter((_, position) => !refused.has(position));
    }
  }
  return 0;
}

export function ImportContactsPage() {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [matchOn, setMatchOn] = useState<MatchOn>('email');
  const [progress, setProgress] = useState<{ done: number; total: number; imported: number } | null>(null);
  const [rejected, setRejected] = useState<Rejected[]>([]);
  const [failure, setFailure] = useState<unknown>(null);
  const [headerProblems, setHeaderProblems] = useState<string[]>([]);
  const [running, setRunning] = useState(false);

  const run = async () => {
    if (!file) return;
    setRunning(true);
    setFailure(null);
    setHeaderProblems([]);
    setRejected([]);
    setProgress(null);
    try {
      // The organization's properties, once: each properties.KEY cell is converted by its property's kind.
      // Blank lines are kept while parsing so that a row's place gives its line, then dropped.
      const { items: properties } = await admitted(() => api.properties.list());
      const parsed = Papa.parse<CsvRow>(await file.text(), { header: true, skipEmptyLines: false });
      const { columns, problems } = csvColumns(parsed.meta.fields ?? [], properties);
      // A column that cannot be filled would refuse every row: the file is refused whole, nothing is sent.
      if (problems.length > 0) {
        setHeaderProblems(problems);
        return;
      }
      const rows = parsed.data
        .map((row, index) => ({ row, line: index + 2 }))
        .filter(({ row }) => Object.values(row).some((value) => String(value ?? '').trim() !== ''));
      let imported = 0;
      setProgress({ done: 0, total: rows.length, imported });
      for (let start = 0; start < rows.length; start += BATCH) {
        imported += await loadBatch(matchOn, columns, rows.slice(start, start + BATCH), (r) =>
          setRejected((all) => [...all, ...r]),
        );
        setProgress({ done: Math.min(rows.length, start + BATCH), total: rows.length, imported });
      }
    } catch (error) {
      setFailure(error);
    } finally {
      setRunning(false);
      void queryClient.invalidateQueries({ queryKey: keys.contacts.all });
    }
  };

  const rejectedUrl = useMemo(() => {
    if (rejected.length === 0) return null;
    const csv = Papa.unparse(rejected.map(({ row, line, reason }) => ({ ...row, line, reason })));
    return URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
  }, [rejected]);

  return (
    <Page title="Import contacts">
      <Form
        validationBehavior="aria"
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <p>
          A CSV with a header row naming contact fields (<code>first_name</code>, <code>email</code>, <code>phone</code>
          , …) and <code>properties.KEY</code> columns. Existing contacts are updated by their email or phone; new ones
          get the origin <code>IMPORT</code> unless an <code>origin</code> column says another.
        </p>
        <details className="field">
          <summary>How to write custom property cells</summary>
          <ul aria-label="Cell formats">
            <li>Dropdown and radio: an option's label or key, in any case (Gold or gold).</li>
            <li>
              Multiple select: options separated by <code>{CSV_LIST_SEPARATOR}</code> (Gold{CSV_LIST_SEPARATOR}Silver).
            </li>
            <li>Date: YYYY-MM-DD (2026-03-31).</li>
            <li>Number: 42 or 3.5, no thousands separators.</li>
            <li>Money: the amount, alone or with the property's currency (12.50 or 12.50 USD).</li>
            <li>Yes or no: true, false, yes, no, 1 or 0.</li>
            <li>
              Files: web addresses (https://…), several separated by <code>{CSV_LIST_SEPARATOR}</code>.
            </li>
            <li>Text, email and web address: as they are. An empty cell leaves the value alone.</li>
          </ul>
          <p>A row with a cell that does not fit is not sent: every such cell is named with the row.</p>
        </details>
        <FormError message={failure ? showError(failure).message : undefined} />
        {headerProblems.length > 0 ? (
          <div role="alert" className="form-error">
            <p>This file cannot be imported: nothing was sent. Rename or remove these columns:</p>
            <ul aria-label="Columns that cannot be imported">
              {headerProblems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          </div>
        ) : null}
        <div className="field">
          <FileTrigger acceptedFileTypes={['.csv', 'text/csv']} onSelect={(files) => setFile(files?.[0] ?? null)}>
            <Button>Choose a CSV file</Button>
          </FileTrigger>
          <span aria-live="polite">{file ? `Chosen: ${file.name}` : 'No file chosen'}</span>
        </div>
        <RadioGroup className="field" value={matchOn} onChange={(value) => setMatchOn(value as MatchOn)}>
          <Label>Match existing contacts on</Label>
          <Radio value="email">Email</Radio>
          <Radio value="phone">Phone</Radio>
        </RadioGroup>
        <Button type="submit" className="primary" isDisabled={!file || running}>
          {running ? 'Importing…' : 'Import'}
        </Button>
      </Form>
      {progress ? (
        <div className="card">
          <ProgressBar value={progress.done} maxValue={Math.max(1, progress.total)} className="field">
            {({ percentage }) => (
              <>
                <Label>Import progress</Label>
                <progress
                  className="progress"
                  value={progress.done}
                  max={Math.max(1, progress.total)}
                  aria-hidden="true"
                />
                <span>
                  {progress.done} of {progress.total} rows ({Math.round(percentage ?? 0)}%)
                </span>
              </>
            )}
          </ProgressBar>
          <p role="status">
            {progress.imported} imported, {rejected.length} rejected
            {!running && progress.done === progress.total ? '. Done.' : ''}
          </p>
          {rejected.length > 0 ? (
            <ul aria-label="Rejected rows">
              {rejected.map(({ line, reason }) => (
                <li key={line}>
                  Line {line}: {reason}
                </li>
              ))}
            </ul>
          ) : null}
          {rejectedUrl ? (
            <a
              className="button"
              href={rejectedUrl}
              download={`${file?.name.replace(/\.csv$/i, '') ?? 'contacts'}.rejected.csv`}
            >
              Download the rejected rows
            </a>
          ) : null}
        </div>
      ) : null}
    </Page>
  );
}

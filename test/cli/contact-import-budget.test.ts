// `crm contacts import` within the organization's rate budget (decisions §4, §12): several batches in flight when
// the server is slow to answer, never more starts in one second than the budget, 429s waited out (Retry-After);
// and, as a real process, a progress bar with rows per second on a terminal and plain lines in a pipe.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fileFingerprint, importClient, importContacts } from '../../src/cli/contact-import.ts';
import type { RateLimitStore } from '../../src/http/rate-limit.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { delay } from '../helpers/wait.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

async function serve(rateLimitStore?: RateLimitStore) {
  const h = await startHarness(rateLimitStore ? { rateLimitStore } : { unlimited: true });
  harnesses.push(h);
  const baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { org, key } = await h.createOrg();
  const countContacts = async () =>
    (await h.database.db.selectFrom('contacts').select('id').where('org_id', '=', org.id).execute()).length;
  return { h, org, baseUrl, key, countContacts };
}

function csvOf(rows: number, prefix = 'b'): string {
  const file = join(mkdtempSync(join(tmpdir(), 'import-budget-')), 'people.csv');
  const lines = ['email,first_name'];
  for (let index = 0; index < rows; index++) lines.push(`${prefix}${index}@example.com,Person ${index}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const quiet = { tty: false, write: () => {} };

describe('contacts import within the rate budget', () => {
  it('keeps several batches in flight when answers are slow, never more starts in a second than the budget', async () => {
    let inFlight = 0;
    let most = 0;
    const perWindow = new Map<number, number>();
    // Every request of the organization waits 300 ms in the budget check: more than one in flight is the importer's.
    const slow: RateLimitStore = {
      hit: async (_key, windowStart) => {
        perWindow.set(windowStart, (perWindow.get(windowStart) ?? 0) + 1);
        inFlight += 1;
        most = Math.max(most, inFlight);
        await delay(300);
        inFlight -= 1;
        return 1;
      },
      close: async () => {},
    };
    const { baseUrl, key, countContacts } = await serve(slow);
    perWindow.clear();
    const { client, budget } = importClient(key, baseUrl);
    const result = await importContacts(client, csvOf(2000), 'email', { output: quiet, budget });
    expect(result).toEqual({ rows: 2000, imported: 2000, rejected: 0, skipped: 0 });
    expect(await countContacts()).toBe(2000);
    expect(most).toBeGreaterThanOrEqual(3);
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(20);
  });

  it('waits out 429s (Retry-After) and loads every row', async () => {
    let refused = 0;
    // The organization's first three requests find the window spent.
    const spent: RateLimitStore = {
      hit: async (key) => {
        if (key.startsWith('ip:') || refused >= 3) return 1;
        refused += 1;
        return 1000;
      },
      close: async () => {},
    };
    const { baseUrl, key, countContacts } = await serve(spent);
    refused = 0;
    const { client, budget } = importClient(key, baseUrl);
    const result = await importContacts(client, csvOf(300), 'email', { output: quiet, budget });
    expect(refused).toBe(3);
    expect(result).toEqual({ rows: 300, imported: 300, rejected: 0, skipped: 0 });
    expect(await countContacts()).toBe(300);
  });
});

describe('resuming with batches finished out of order', () => {
  it('skips the rows done from the top and the batches done beyond them, and sends only the others', async () => {
    const { h, org, baseUrl, key, countContacts } = await serve();
    const file = csvOf(350, 'o');
    // An interrupted run: rows 1–100 done, and the batch of rows 201–300 finished before the one of 101–200.
    writeFileSync(
      `${file}.import-state.json`,
      JSON.stringify({ file: await fileFingerprint(file), match_on: 'email', rows: 100, ahead: [201] }),
    );
    const { client, budget } = importClient(key, baseUrl);
    const lines: string[] = [];
    const result = await importContacts(client, file, 'email', {
      output: { tty: false, write: (line) => lines.push(line) },
      budget,
    });
    expect(result).toEqual({ rows: 350, imported: 150, rejected: 0, skipped: 200 });
    expect(await countContacts()).toBe(150);
    const rows = await h.database.db.selectFrom('contacts').select('email').where('org_id', '=', org.id).execute();
    const emails = rows.map((row) => row.email);
    expect(emails).toContain('o100@example.com');
    expect(emails).toContain('o349@example.com');
    expect(emails).not.toContain('o0@example.com');
    expect(emails).not.toContain('o250@example.com');
    expect(JSON.parse(readFileSync(`${file}.import-state.json`, 'utf8'))).toEqual({
      file: await fileFingerprint(file),
      match_on: 'email',
      rows: 350,
      finished: true,
    });
  });
});

function run(command: string, args: string[], env: Record<string, string>) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('the import as a process', { timeout: 120_000 }, () => {
  it('draws a progress bar with rows per second on a terminal (stderr, or stdout alone), and plain lines into a pipe', async () => {
    const { baseUrl, key, countContacts } = await serve();
    const env = { CRM_API_KEY: key, CRM_BASE_URL: baseUrl };
    const cli = [process.execPath, join(root, 'src/cli/main.ts'), 'contacts', 'import'];

    const piped = await run(cli[0] as string, [...cli.slice(1), csvOf(250), '--match-on', 'email'], env);
    expect(piped.status, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toEqual({ rows: 250, imported: 250, rejected: 0, skipped: 0 });
    const lines = piped.stderr.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.at(-1)).toMatch(/^250 of 250 rows done: 250 imported, 0 rejected \(\d+ rows\/s\)$/);
    expect(piped.stderr).not.toContain('import [');

    // A pseudo-terminal (script(1)): stdout and stderr are the terminal.
    const command = [...cli, `'${csvOf(300, 't')}'`, '--match-on', 'email'].join(' ');
    const terminal = await run('script', ['-qec', command, '/dev/null'], env);
    expect(terminal.status, terminal.stdout).toBe(0);
    expect(terminal.stdout).toMatch(/import \[[^\]]*\] 100% \| 300\/300 rows \| \d+ rows\/s/);
    expect(terminal.stdout).not.toMatch(/^\d+ of \d+ rows done/m);
    expect(terminal.stdout).toContain('"imported": 300');

    // Only stdout on the terminal (stderr sent to a file): the bar is drawn there.
    const errors = join(mkdtempSync(join(tmpdir(), 'import-stderr-')), 'stderr.txt');
    const onlyStdout = [...cli, `'${csvOf(100, 's')}'`, '--match-on', 'email', `2>'${errors}'`].join(' ');
    const half = await run('script', ['-qec', onlyStdout, '/dev/null'], env);
    expect(half.status, half.stdout).toBe(0);
    expect(half.stdout).toMatch(/import \[[^\]]*\] 100% \| 100\/100 rows/);
    expect(readFileSync(errors, 'utf8')).toBe('');
    expect(await countContacts()).toBe(650);
  });
});

// `crm contacts import` as a real process against a real server (D65, D233): each refused row with its
// own reasons and its CSV line, every bad item of a 422 dropped in one pass (requests counted at the server), one
// duplicate rule for the whole file, the import state tied to the file's bytes, and Ctrl-C that stops while batches
// hang at the server (their requests aborted, D233), exits 130 with a state, a summary and how to resume — the
// resumed run loads every row once and writes no rejected row twice.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import type { RateLimitStore } from '../../src/http/rate-limit.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';
import { waitUntil } from '../helpers/wait.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

/**
 * A server whose organizations are never limited, counting each organization's requests. With `holdAfter`, every
 * request of an organization after that many waits until `release()` — so a test can interrupt the import while
 * batches are surely in flight, however fast the machine.
 */
async function serve(holdAfter = Number.POSITIVE_INFINITY) {
  const requests = new Map<string, number>();
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const counting: RateLimitStore = {
    hit: async (key) => {
      const count = (requests.get(key) ?? 0) + 1;
      requests.set(key, count);
      if (key.startsWith('org:') && count > holdAfter) await released;
      return 1;
    },
    close: async () => {},
  };
  const h = await startHarness({ rateLimitStore: counting });
  harnesses.push(h);
  const baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
  const { org, key } = await h.createOrg();
  const contacts = async () =>
    (await h.database.db.selectFrom('contacts').select('id').where('org_id', '=', org.id).execute()).length;
  return { h, org, key, baseUrl, contacts, release, requests: () => requests.get(`org:${org.id}`) ?? 0 };
}

function importProcess(file: string, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    [join(root, 'src/cli/main.ts'), 'contacts', 'import', file, '--match-on', 'email'],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
  return { child, done, stderr: () => stderr };
}

const run = (file: string, env: Record<string, string>) => importProcess(file, env).done;
const rejectedOf = (file: string) =>
  parse(readFileSync(file.replace(/\.csv$/, '.rejected.csv')), { columns: true }) as Record<string, string>[];
const csv = (header: string, rows: string[]) => `${[header, ...rows].join('\n')}\n`;

describe('the import as a process', { timeout: 240_000 }, () => {
  it('gives each refused row its own reasons and line, drops every bad item of a 422 in one pass', async () => {
    const { key, baseUrl, contacts, requests } = await serve();
    const dir = mkdtempSync(join(tmpdir(), 'import-reasons-'));
    const file = join(dir, 'people.csv');
    const rows = Array.from({ length: 150 }, (_, index) => {
      // Row n of the file is on line n + 2 (line 1 is the header).
      const email =
        index === 16
          ? 'not-an-email'
          : index === 59
            ? 'R2@Example.com'
            : index === 129
              ? 'r20@example.com'
              : `r${index}@example.com`;
      const phone = index === 39 ? '12' : `+1555${2_000_000 + index}`;
      const country = index === 4 ? 'mexico' : 'MX';
      return `${email},${phone},${country},Row ${index}`;
    });
    writeFileSync(file, csv('email,phone,country,first_name', rows));
    const before = requests();
    const result = await run(file, { CRM_API_KEY: key, CRM_BASE_URL: baseUrl });
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ rows: 150, imported: 145, rejected: 5, skipped: 0 });
    expect(await contacts()).toBe(145);
    // The properties once (D232); the first batch: one 422 naming three items, then the other 97 in one call; the
    // second batch: one call.
    expect(requests() - before).toBe(4);

    const rejected = rejectedOf(file);
    expect(rejected.map((row) => [row.line, row.email])).toEqual([
      ['6', 'r4@example.com'],
      ['18', 'not-an-email'],
      ['41', 'r39@example.com'],
      ['61', 'R2@Example.com'],
      ['131', 'r20@example.com'],
    ]);
    const reasons = rejected.map((row) => (row.reason as string).split('; '));
    expect(reasons[0]?.every((part) => part.startsWith('country: '))).toBe(true);
    expect(reasons[1]?.every((part) => part.startsWith('email: '))).toBe(true);
    expect(reasons[2]?.every((part) => part.startsWith('phone: '))).toBe(true);
    // One duplicate rule, in the same batch as in a later one: the first row of the file with the value wins.
    expect(reasons[3]).toEqual(['email: same email as line 4 (the first row wins)']);
    expect(reasons[4]).toEqual(['email: same email as line 22 (the first row wins)']);
  });

  it('ties the import state to the file: another file under the same name is refused, and says so', async () => {
    const { key, baseUrl, contacts, requests } = await serve();
    const dir = mkdtempSync(join(tmpdir(), 'import-state-'));
    const file = join(dir, 'people.csv');
    const env = { CRM_API_KEY: key, CRM_BASE_URL: baseUrl };
    const people = (prefix: string) =>
      csv(
        'email,first_name',
        Array.from({ length: 120 }, (_, index) => `${prefix}${index}@example.com,${prefix} ${index}`),
      );
    writeFileSync(file, people('a'));
    const first = await run(file, env);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ imported: 120 });

    // The same name, other rows: nothing is sent, nothing is skipped in silence.
    writeFileSync(file, people('b'));
    const sent = requests();
    const other = await run(file, env);
    expect(other.status).toBe(1);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain(`${file} is not the file that ${file}.import-state.json records`);
    expect(other.stderr).toContain('Nothing was sent');
    expect(requests()).toBe(sent);
    expect(await contacts()).toBe(120);

    rmSync(`${file}.import-state.json`);
    const fresh = await run(file, env);
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(JSON.parse(fresh.stdout)).toEqual({ rows: 120, imported: 120, rejected: 0, skipped: 0 });
    expect(await contacts()).toBe(240);
  });

  it('on Ctrl-C stops while batches hang at the server, exits 130 with a state and a summary; the resume is exact', async () => {
    // Through: the webhook endpoint below, the properties and 8 batch calls; every later request hangs until release.
    const { h, org, key, baseUrl, contacts, requests, release } = await serve(10);
    const endpoint = await h.api('POST', '/v1/webhook-endpoints', {
      key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(endpoint.status).toBe(201);
    const dir = mkdtempSync(join(tmpdir(), 'import-sigint-'));
    const file = join(dir, 'people.csv');
    // 2,000 rows, two bad ones in each batch of 100 (a country that is not ISO 3166-1 alpha-2).
    const rows = Array.from(
      { length: 2000 },
      (_, index) => `i${index}@example.com,${index % 50 === 25 ? 'mexico' : 'MX'},Person ${index}`,
    );
    writeFileSync(file, csv('email,country,first_name', rows));
    const env = { CRM_API_KEY: key, CRM_BASE_URL: baseUrl };

    const first = importProcess(file, env);
    // Batches hang at the server (as on a slow one): Ctrl-C, twice, stops the import all the same.
    await waitUntil(() => requests() > 10, { timeoutMs: 60_000, message: 'a batch hanging at the server' });
    first.child.kill('SIGINT');
    first.child.kill('SIGINT');
    const stopped = await first.done;
    // Exited while the server still holds its requests: they were aborted, not waited for.
    expect(stopped.status, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain(
      `run the same command again to resume: crm contacts import ${file} --match-on email`,
    );
    const partial = JSON.parse(stopped.stdout);
    expect(partial).toMatchObject({ rows: 2000, skipped: 0, interrupted: true });
    expect(partial.imported + partial.rejected).toBeLessThan(2000);
    const state = JSON.parse(readFileSync(`${file}.import-state.json`, 'utf8'));
    expect(state.rows + 100 * (state.ahead?.length ?? 0)).toBe(partial.imported + partial.rejected);
    // The rows refused so far are written, and only those of batches recorded as done.
    expect(rejectedOf(file)).toHaveLength(partial.rejected);
    // Each plain progress line adds up: rows done = imported + rejected, of the file's 2,000.
    for (const line of stopped.stderr.split('\n').filter((text) => text.includes('rows done'))) {
      const [, doneRows, total, imported, rejected] = /^(\d+) of (\d+) rows done: (\d+) imported, (\d+) rejected/.exec(
        line,
      ) ?? [line];
      expect(Number(imported) + Number(rejected), line).toBe(Number(doneRows));
      expect(Number(total), line).toBe(2000);
    }

    // The aborted requests reach the server now; the resume sends their batches again, which changes nothing twice.
    release();
    const resumed = await run(file, env);
    expect(resumed.status, resumed.stderr).toBe(0);
    const rest = JSON.parse(resumed.stdout);
    expect(rest.skipped).toBe(partial.imported + partial.rejected);
    expect(rest.skipped + rest.imported + rest.rejected).toBe(2000);
    expect(partial.imported + rest.imported).toBe(1960);
    expect(await contacts()).toBe(1960);
    const rejected = rejectedOf(file).map((row) => Number(row.line));
    expect(rejected).toEqual(Array.from({ length: 40 }, (_, index) => 27 + 50 * index));
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select(['type'])
      .where('org_id', '=', org.id)
      .where('type', '!=', 'ping')
      .execute();
    expect(events.filter((event) => event.type === 'contact.created')).toHaveLength(1960);
    expect(events.filter((event) => event.type === 'contact.updated')).toHaveLength(0);
  });
});

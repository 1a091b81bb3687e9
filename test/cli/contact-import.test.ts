// `crm contacts import` (decisions §12) against a live server through the SDK: batches of 100, refused rows with
// their CSV line and their own reasons in FILE.rejected.csv (in line order) while the rest loads, and a second run
// that resumes instead of starting over, without writing a refused row twice.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../sdk/src/index.ts';
import { fileFingerprint, importContacts } from '../../src/cli/contact-import.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

let h: Harness;
let baseUrl: string;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  baseUrl = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

const quiet = () => {
  const lines: string[] = [];
  return { tty: false, write: (line: string) => void lines.push(line), lines };
};
const countContacts = async (orgId: string) =>
  (await h.database.db.selectFrom('contacts').select('id').where('org_id', '=', orgId).execute()).length;

describe('contacts import', () => {
  it('loads 250 rows in batches, writes refused rows with reasons, and resumes after an interruption', async () => {
    const { org, key } = await h.createOrg();
    await h.api('POST', '/v1/properties', { key, body: { key: 'plan', label: 'Plan', kind: 'TEXT' } });
    const dir = mkdtempSync(join(tmpdir(), 'import-'));
    const file = join(dir, 'people.csv');
    const lines = ['email,first_name,country,properties.plan'];
    for (let index = 0; index < 250; index++) {
      // Row 10 (line 12) has a bad country, row 120 (line 122) no email: both refused, the rest loads.
      const country = index === 10 ? 'mexico' : 'MX';
      lines.push(`${index === 120 ? '' : `p${index}@example.com`},"Person, ${index}",${country},gold`);
    }
    writeFileSync(file, `${lines.join('\n')}\n`);
    const client = new CrmClient({ apiKey: key, baseUrl });

    const first = await importContacts(client, file, 'email', { output: quiet() });
    expect(first).toEqual({ rows: 250, imported: 248, rejected: 2, skipped: 0 });
    expect(await countContacts(org.id)).toBe(248);
    const rejectedFile = join(dir, 'people.rejected.csv');
    const rejected = () => parse(readFileSync(rejectedFile), { columns: true }) as Record<string, string>[];
    // In CSV line order, whichever batch answered first; each with its own line and only its own reasons.
    expect(rejected().map((row) => [row.line, row.email, row.country])).toEqual([
      ['12', 'p10@example.com', 'mexico'],
      ['122', '', 'MX'],
    ]);
    expect(rejected()[0]?.reason).toMatch(/^country: /);
    expect(rejected()[0]?.reason).not.toContain(';');
    expect(rejected()[1]?.reason).toBe('email: required (--match-on email)');
    expect(readFileSync(rejectedFile, 'utf8').split('\n')[0]).toBe(
      'email,first_name,country,properties.plan,line,reason',
    );
    const contact = (await h.api('GET', '/v1/contacts?q=p42%40example.com', { key })).body.items[0];
    expect(contact).toMatchObject({ first_name: 'Person, 42', properties: { plan: { value_text: 'gold' } } });

    // An interruption after the first batch: the state says 100 rows of this very file are done.
    writeFileSync(
      `${file}.import-state.json`,
      JSON.stringify({ file: await fileFingerprint(file), match_on: 'email', rows: 100 }),
    );
    const output = quiet();
    const resumed = await importContacts(client, file, 'email', { output });
    expect(resumed).toEqual({ rows: 250, skipped: 100, imported: 149, rejected: 1 });
    expect(output.lines).toHaveLength(2);
    expect(await countContacts(org.id)).toBe(248);
    // Line 122 was refused again, and is written once.
    expect(rejected().map((row) => row.line)).toEqual(['12', '122']);
  });

  it('creates IMPORT contacts unless the row names an origin, and an update keeps the contact origin', async () => {
    const { key } = await h.createOrg();
    const existing = await h.api('POST', '/v1/contacts', { key, body: { email: 'old@example.com' } });
    expect(existing.body.origin).toBe('API');
    const dir = mkdtempSync(join(tmpdir(), 'import-origin-'));
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'email,origin\nnew@example.com,\nevent@example.com,event\nold@example.com,\n');
    const result = await importContacts(new CrmClient({ apiKey: key, baseUrl }), file, 'email', { output: quiet() });
    expect(result).toMatchObject({ imported: 3, rejected: 0 });
    const originOf = async (email: string) =>
      (await h.api('GET', `/v1/contacts?q=${encodeURIComponent(email)}`, { key })).body.items[0]?.origin;
    expect(await originOf('new@example.com')).toBe('IMPORT');
    expect(await originOf('event@example.com')).toBe('EVENT');
    // Public API: the origin is set once at first touch and never overwritten.
    expect(await originOf('old@example.com')).toBe('API');
  });
});

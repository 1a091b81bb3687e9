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

  it('converts typed property cells by kind, refuses a row naming every bad cell without a call', async () => {
    const { key } = await h.createOrg();
    const options = [
      { key: 'gold', label: 'Gold' },
      { key: 'silver', label: 'Silver' },
    ];
    for (const body of [
      { key: 'tier', label: 'Tier', kind: 'DROPDOWN', options },
      { key: 'tags', label: 'Tags', kind: 'MULTI_SELECT', options },
      { key: 'born', label: 'Born', kind: 'DATE' },
      { key: 'spent', label: 'Spent', kind: 'MONEY', currency: 'USD' },
      { key: 'vip', label: 'VIP', kind: 'BOOLEAN' },
      { key: 'visits', label: 'Visits', kind: 'NUMBER' },
    ]) {
      expect((await h.api('POST', '/v1/properties', { key, body })).status).toBe(201);
    }
    const dir = mkdtempSync(join(tmpdir(), 'import-typed-'));
    const file = join(dir, 'people.csv');
    writeFileSync(
      file,
      [
        'email,properties.tier,properties.tags,properties.born,properties.spent,properties.vip,properties.visits',
        'a@example.com,GOLD,gold|Silver,1990-04-01,12.50 USD,yes,3',
        'b@example.com,Platinum,gold|tin,01/04/1990,12.50,maybe,3',
        'c@example.com,silver,,,,no,',
      ].join('\n'),
    );
    const calls: string[] = [];
    const client = new CrmClient({
      apiKey: key,
      baseUrl,
      fetch: (input, init) => {
        calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
        return fetch(input, init);
      },
    });
    const result = await importContacts(client, file, 'email', { output: quiet() });
    expect(result).toEqual({ rows: 3, imported: 2, rejected: 1, skipped: 0 });
    // The properties once, then one batch: the bad row was refused here, with each of its bad cells.
    expect(calls).toEqual(['GET /v1/properties', 'POST /v1/contacts/batch-upsert']);
    const [rejected] = parse(readFileSync(join(dir, 'people.rejected.csv')), { columns: true }) as Record<
      string,
      string
    >[];
    expect(rejected?.line).toBe('3');
    expect(rejected?.reason?.split('; ')).toEqual([
      'properties.tier: "Platinum" is not an option of "Tier" (Gold or Silver)',
      'properties.tags: "tin" is not an option of "Tags" (Gold or Silver, several separated by |)',
      'properties.born: "01/04/1990" is not a date written YYYY-MM-DD (such as 2026-03-31)',
      'properties.vip: "maybe" is not yes or no (true, false, yes, no, 1 or 0)',
    ]);
    const a = (await h.api('GET', '/v1/contacts?q=a%40example.com', { key })).body.items[0];
    expect(a.properties).toMatchObject({
      tier: { kind: 'DROPDOWN', value_text: 'gold' },
      tags: { kind: 'MULTI_SELECT', value_json: ['gold', 'silver'] },
      born: { kind: 'DATE', value_date: '1990-04-01' },
      spent: { kind: 'MONEY', value_number: 12.5 },
      vip: { kind: 'BOOLEAN', value_bool: true },
      visits: { kind: 'NUMBER', value_number: 3 },
    });
    const c = (await h.api('GET', '/v1/contacts?q=c%40example.com', { key })).body.items[0];
    expect(c.properties).toMatchObject({ tier: { value_text: 'silver' }, vip: { value_bool: false } });
  });

  it('refuses a file whose header has a column it cannot fill, naming each, and sends nothing', async () => {
    const { org, key } = await h.createOrg();
    const dir = mkdtempSync(join(tmpdir(), 'import-header-'));
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'email,nickname,properties.ghost\na@example.com,Al,boo\n');
    const refusal = await importContacts(new CrmClient({ apiKey: key, baseUrl }), file, 'email', {
      output: quiet(),
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(Error);
    expect((refusal as Error).message).toContain('nickname: not a contact field');
    expect((refusal as Error).message).toContain(
      'properties.ghost: the organization has no custom property with the key "ghost"',
    );
    expect((refusal as Error).message).toContain('Nothing was sent');
    expect(await countContacts(org.id)).toBe(0);
  });

  it('writes the reasons the server gives as sentences, not schema wording', async () => {
    const { key } = await h.createOrg();
    const dir = mkdtempSync(join(tmpdir(), 'import-sentences-'));
    const file = join(dir, 'people.csv');
    writeFileSync(file, 'email,phone,country,social_handle\nnot-an-email,12,mexico,a b\n');
    const result = await importContacts(new CrmClient({ apiKey: key, baseUrl }), file, 'email', { output: quiet() });
    expect(result).toMatchObject({ imported: 0, rejected: 1 });
    const [rejected] = parse(readFileSync(join(dir, 'people.rejected.csv')), { columns: true }) as Record<
      string,
      string
    >[];
    const reasons = rejected?.reason?.split('; ') ?? [];
    expect(reasons).toContain('email: "not-an-email" is not an email address');
    expect(reasons).toContain('country: "mexico" is not a two-letter country code (ISO 3166-1, such as MX or US)');
    expect(reasons.join('; ')).not.toMatch(/should|pattern|\^/i);
  });
});

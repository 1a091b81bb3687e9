// The console's CSV import with typed custom properties (decisions §12, D232), as a person uses it in Chromium: the
// page says how to write each kind of cell; a DROPDOWN cell by its label and a DATE cell load; a row with bad cells is
// refused in the page with every bad cell named in a sentence, without a call; a refusal of the server reads as a
// sentence too; a file with a column that cannot be filled is refused whole; imported contacts are `IMPORT`.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openDesktopPage } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let data: Seeded;

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
  data = await seed(server);
  ({ page } = await openDesktopPage(browser));
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().includes('/v1/contacts/batch-upsert')) batches.push(request.url());
  });
  await signInNewAdmin(server, page, data.orgId, 'ivy@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The batch-upsert calls the page made since the last import started. */
let batches: string[] = [];

/** Opens the import page and imports `csv` (the caller waits for the outcome it expects). */
async function importFile(name: string, csv: string): Promise<void> {
  const file = join(tmpdir(), `${name}-${Date.now()}.csv`);
  writeFileSync(file, csv);
  await page.goto(`${server.baseUrl}/app/contacts/import`);
  await page.getByRole('heading', { level: 1, name: 'Import contacts' }).waitFor();
  batches = [];
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose a CSV file' }).click();
  await (await chooser).setFiles(file);
  await page.getByText(`Chosen: ${name}`).waitFor();
  await page.getByRole('button', { name: 'Import', exact: true }).click();
}

const contact = async (email: string) =>
  (await server.api(data.key, 'GET', `/v1/contacts?q=${encodeURIComponent(email)}`)).body.items[0];

describe('the import page', { timeout: 60_000 }, () => {
  it('converts typed cells, names every bad cell of a row in sentences, and creates IMPORT contacts', async () => {
    const since = await server.api(data.key, 'POST', '/v1/properties', { key: 'since', label: 'Since', kind: 'DATE' });
    expect(since.status).toBe(201);
    await page.goto(`${server.baseUrl}/app/contacts/import`);
    await page.getByText('How to write custom property cells').click();
    await page.getByRole('list', { name: 'Cell formats' }).getByText('Date: YYYY-MM-DD (2026-03-31).').waitFor();

    await importFile(
      'typed',
      'first_name,email,country,properties.plan,properties.since\n' +
        'Ivy,ivy@example.com,MX,gold,2024-05-01\n' +
        'Jon,jon@example.com,MX,Platinum,05/01/2024\n' +
        'Kim,kim@example.com,not-a-country,Silver,\n' +
        'Lea,lea@example.com,US,SILVER,2023-12-31\n',
    );
    await page.getByText('2 imported, 2 rejected. Done.').waitFor();
    // Jon's row never left the page; Kim's was refused by the server (one 422, then the rest in one call).
    expect(batches).toHaveLength(2);
    const rows = await page.getByRole('list', { name: 'Rejected rows' }).getByRole('listitem').allTextContents();
    expect(rows).toEqual([
      'Line 3: properties.plan: "Platinum" is not an option of "Plan" (Gold or Silver); ' +
        'properties.since: "05/01/2024" is not a date written YYYY-MM-DD (such as 2026-03-31)',
      'Line 4: country: "not-a-country" is not a two-letter country code (ISO 3166-1, such as MX or US)',
    ]);
    expect(await contact('ivy@example.com')).toMatchObject({
      origin: 'IMPORT',
      properties: { plan: { value_text: 'gold' }, since: { value_date: '2024-05-01' } },
    });
    expect((await contact('lea@example.com')).properties.plan.value_text).toBe('silver');
  });

  it('refuses a file with a column that cannot be filled, sending nothing', async () => {
    await importFile('unknown-column', 'email,nickname,properties.ghost\nmo@example.com,Mo,boo\n');
    const columns = page.getByRole('list', { name: 'Columns that cannot be imported' });
    await columns.getByText(/^nickname: not a contact field/).waitFor();
    await columns.getByText('properties.ghost: the organization has no custom property with the key "ghost"').waitFor();
    expect(batches).toHaveLength(0);
    expect(await contact('mo@example.com')).toBeUndefined();
  });
});

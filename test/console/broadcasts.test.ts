// Broadcasts to an audience in the console (decisions §16, §17 flow 4), as a person does it in Chromium: the new
// broadcast page (template, audience with its live count, the template's variables by name, a schedule in the
// organization's timezone while the browser is in another, the API's refusals at their fields or as sentences, one
// Idempotency-Key per body), then the broadcast's page with only the actions its status allows (pause, resume,
// cancel after a confirmation) and its progress moving live to the end.
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, openDesktopPage, screenshot, VIEWPORTS } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let data: Seeded;
let csp: string[];
const creations: Request[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
  data = await seed(server);
  // The browser is in Berlin, the organization in Mexico City: every time shown and entered is Mexico City's.
  ({ page, csp } = await openDesktopPage(browser));
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/app/api/v1/broadcasts')
      creations.push(request);
  });
  await signInNewAdmin(server, page, data.orgId, 'ada@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function choose(button: string | RegExp, option: string) {
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('option', { name: option }).click();
}

async function broadcastsOf(): Promise<{ id: string; status: string; send_at: string | null }[]> {
  return (await server.api(data.key, 'GET', '/v1/broadcasts?limit=100')).body.items;
}

/** Tomorrow's date in Mexico City (`YYYY-MM-DD`), and the instant its 09:30 is (Mexico City is UTC−6 all year). */
function tomorrowInMexicoCity(): { date: string; nineThirtyUtc: string; label: string } {
  const date = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(
    new Date(Date.now() + 86_400_000),
  );
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const nineThirtyUtc = new Date(Date.UTC(y, m - 1, d, 15, 30)).toISOString();
  const label = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', dateStyle: 'medium' }).format(
    new Date(Date.UTC(y, m - 1, d)),
  );
  return { date, nineThirtyUtc, label: `${label}, 09:30` };
}

describe('broadcasts to an audience', { timeout: 60_000 }, () => {
  it('the new broadcast page: template, audience with its live count, refusals at their fields and as sentences', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Broadcasts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Broadcasts' }).waitFor();
    await page.getByRole('link', { name: 'New broadcast' }).click();
    await checkPage(page, csp, 'New broadcast', 'broadcast-new');

    // The live count: every contact, then only those the filters keep (the seed has one contact in MX, one in BR).
    const every = (await server.api(data.key, 'GET', '/v1/contacts?limit=1')).body.total_count as number;
    const count = page.getByRole('status').filter({ hasText: /match/ });
    await count.filter({ hasText: `${every} contacts match` }).waitFor();
    await page.getByRole('textbox', { name: 'Countries' }).fill('MX, BR');
    await count.filter({ hasText: '2 contacts match' }).waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('bruno');
    await count.filter({ hasText: '1 contact matches' }).waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await count.filter({ hasText: '2 contacts match' }).waitFor();
    // A property filter built from the organization's properties: nobody has a plan yet.
    await page.getByRole('button', { name: 'Add a property filter' }).click();
    await choose(/Property 1/, 'Plan');
    await page.getByRole('textbox', { name: 'Value 1' }).fill('gold');
    await count.filter({ hasText: '0 contacts match' }).waitFor();
    await page.getByRole('button', { name: 'Remove property filter 1' }).click();
    await count.filter({ hasText: '2 contacts match' }).waitFor();

    // The template's placeholders, named as the template shows them, and a preview filled with their values.
    await choose(/Template/, 'order_update (en_US, UTILITY)');
    const variable = page.getByRole('textbox', { name: 'Body {{1}}' });
    await variable.waitFor();
    await page.getByRole('region', { name: 'Preview' }).getByText('Hello {{1}}, your order is on its way.').waitFor();

    // Sent without the variable: the API's missing_variables marks that field and says it as a sentence.
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => variable.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').filter({ hasText: 'Some variables of the template are missing.' }).waitFor();

    await variable.fill('amigo');
    await page.getByRole('region', { name: 'Preview' }).getByText('Hello amigo, your order is on its way.').waitFor();
    // A country the API refuses: its 422 at ["body","audience","country",…] shows at the Countries field.
    await page.getByRole('textbox', { name: 'Countries' }).fill('Mexico');
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => page.getByRole('textbox', { name: 'Countries' }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('textbox', { name: 'Countries' }).fill('MX, BR');

    // No balance: the 402 as a sentence, and nothing is created.
    const account = await server.admin('GET', `/messaging-accounts/${data.accountId}`);
    await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, { balance: 0 });
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await page.getByRole('alert').filter({ hasText: 'The messaging balance is too low for this send.' }).waitFor();
    // Pressed again with the same body: the same Idempotency-Key (a refusal releases it for a corrected retry).
    const refused = creations.length;
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => creations.length).toBe(refused + 1);
    await page.getByRole('alert').filter({ hasText: 'The messaging balance is too low for this send.' }).waitFor();
    const [first, second] = creations.slice(-2).map((request) => request.headers()['idempotency-key']);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toBe(first);
    await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, { balance: account.body.balance });
    expect(await broadcastsOf()).toHaveLength(1);
    await checkPage(page, csp, 'New broadcast', 'broadcast-new');
    await screenshot(page, 'broadcast-new', { fullPage: true });
  });

  it('schedules one at a time entered in the organization’s timezone, shown there on its page, with one Idempotency-Key per body', async () => {
    const { date, nineThirtyUtc, label } = tomorrowInMexicoCity();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Spring sale');
    await page.getByText('At a time', { exact: true }).click();
    const sendAt = page.getByLabel('Send at (America/Mexico_City time)');
    // A time in the past: the API's 422 at ["body","send_at"] shows at the field.
    await sendAt.fill('2026-01-01T09:30');
    await page.getByRole('button', { name: 'Schedule broadcast' }).click();
    await expect.poll(() => sendAt.getAttribute('aria-invalid')).toBe('true');
    await page.getByText('Must be from now to 30 days ahead').waitFor();
    await sendAt.fill(`${date}T09:30`);
    await page.getByText(`Starts ${label} (America/Mexico_City).`).waitFor();
    const before = creations.length;
    await page.getByRole('button', { name: 'Schedule broadcast' }).click();
    await page.getByRole('heading', { level: 1, name: 'Broadcast Spring sale' }).waitFor();

    const scheduled = (await broadcastsOf()).find((b) => b.status === 'scheduled');
    expect(scheduled?.send_at).toBe(nineThirtyUtc);
    expect(new URL(page.url()).pathname).toBe(`/app/broadcasts/${scheduled?.id}`);
    // One request, with a key of its own (its body differs from the refused ones).
    expect(creations.length - before).toBe(1);
    const keys = creations.map((request) => request.headers()['idempotency-key']);
    expect(keys.at(-1)).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, -1)).not.toContain(keys.at(-1));

    await page.getByText(`Starts ${label} (America/Mexico_City).`, { exact: false }).waitFor();
    await page.getByText('country: MX, BR').waitFor();
    await checkPage(page, csp, 'Broadcast Spring sale', 'broadcast-actions');
  });

  it('a scheduled broadcast: pause, resume and cancel (after a confirmation), only the actions its status allows', async () => {
    const badge = page.locator('.card .badge').first();
    const button = (name: string) => page.getByRole('button', { name });
    await expect.poll(() => badge.textContent()).toBe('scheduled');
    expect(await button('Pause broadcast').isVisible()).toBe(true);
    expect(await button('Cancel broadcast').isVisible()).toBe(true);
    expect(await button('Resume broadcast').count()).toBe(0);
    expect(await button('Retry failures').count()).toBe(0);

    await button('Pause broadcast').click();
    await expect.poll(() => badge.textContent()).toBe('paused');
    await page.getByText('Paused by a person.').waitFor();
    expect(await button('Pause broadcast').count()).toBe(0);
    await button('Resume broadcast').click();
    await expect.poll(() => badge.textContent()).toBe('scheduled');

    // Cancel asks first; "Keep it" keeps it.
    await button('Cancel broadcast').click();
    const dialog = page.getByRole('alertdialog', { name: 'Cancel this broadcast?' });
    await dialog.getByText('It will not start').waitFor();
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await badge.textContent()).toBe('scheduled');
    await button('Cancel broadcast').click();
    await dialog.getByRole('button', { name: 'Cancel broadcast' }).click();
    await expect.poll(() => badge.textContent()).toBe('cancelled');
    for (const action of ['Pause broadcast', 'Resume broadcast', 'Cancel broadcast'])
      expect(await button(action).count(), action).toBe(0);
    const stored = (await broadcastsOf()).find((b) => b.status === 'cancelled');
    expect(stored).toBeDefined();
  });

  it('sends one now and its page moves to the end live, without reloading', async () => {
    await page.goto(`${server.baseUrl}/app/broadcasts/new`);
    await page.getByRole('heading', { level: 1, name: 'New broadcast' }).waitFor();
    await choose(/Template/, 'order_update (en_US, UTILITY)');
    await page.getByRole('textbox', { name: 'Body {{1}}' }).fill('amigo');
    await page.getByRole('textbox', { name: 'Countries' }).fill('MX, BR, FR');
    await page.getByRole('status').filter({ hasText: '3 contacts match' }).waitFor();
    const origin = await page.evaluate(() => performance.timeOrigin);
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await page.getByRole('heading', { level: 1, name: 'Broadcast order_update' }).waitFor();
    const badge = page.locator('.card .badge').first();
    await expect.poll(() => badge.textContent(), { timeout: 20_000 }).toBe('completed');
    await page.getByText('3 recipients').waitFor();
    const progress = page.getByRole('progressbar', { name: 'Progress' });
    expect(await progress.getAttribute('aria-valuenow')).toBe('3');
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(origin);
    await screenshot(page, 'broadcast-completed');
  });

  it('an organization without an approved template or a broadcast: the empty states, and a missing broadcast’s error', async () => {
    const org = await server.admin('POST', '/organizations', { name: 'Empty Co', timezone: 'Asia/Tokyo' });
    expect(org.status).toBe(201);
    const fresh = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const other = await fresh.newPage();
    other.setDefaultTimeout(10_000);
    await signInNewAdmin(server, other, org.body.id, 'eve@empty.example');
    await other.goto(`${server.baseUrl}/app/broadcasts`);
    await other.getByText('No broadcasts yet', { exact: false }).waitFor();
    await other.getByRole('link', { name: 'New broadcast' }).click();
    await other.getByRole('heading', { level: 1, name: 'New broadcast' }).waitFor();
    await other.getByText('No template is approved yet', { exact: false }).waitFor();
    expect(await other.getByRole('link', { name: 'Create a template' }).isVisible()).toBe(true);
    expect(await other.getByRole('button', { name: 'Send broadcast' }).count()).toBe(0);
    await other.goto(`${server.baseUrl}/app/broadcasts/bc_missing`);
    await other.getByRole('alert').filter({ hasText: 'It no longer exists' }).waitFor();
    await fresh.close();
  });
});

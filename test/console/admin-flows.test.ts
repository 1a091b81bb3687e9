// The admin flows of decisions §17 that the other browser files do not drive, as a person does them in Chromium:
// a template's review status arriving live; settings (users invited, given a role and removed after a confirmation;
// an agent's console without the admin areas; a funnel stage added and reordered; a sub-origin; a property with
// options, archived and restored); a webhook endpoint (a 410 disables it, the switch enables it again, a failed
// delivery retried, the secret rotated after a confirmation and the next delivery signed with the new one); the
// messaging balance in settings; a contact's properties by kind, stage and opt-out, and the table's filters and pages;
// and every page's error state when the API fails (500s, retried twice by the query cache), with "Try again".
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signature } from '../../src/modules/webhook-endpoints/delivery-http.ts';
import { launchChromium, openDesktopPage, screenshot, seriousViolations, VIEWPORTS } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { PASSWORD, signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let data: Seeded;
let csp: string[];
let receiver: Server;
let receiverUrl: string;
/** What the webhook receiver answers next, and what it was sent. */
let answer = 410;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(answer);
      response.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  // Reviews take 2 s here, so that a new template is seen PENDING first and then APPROVED without a reload.
  [server, browser] = await Promise.all([
    startConsoleServer({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1', SANDBOX_AUTO_REVIEW_MS: '2000' }),
    launchChromium(),
  ]);
  data = await seed(server);
  ({ page, csp } = await openDesktopPage(browser));
  await signInNewAdmin(server, page, data.orgId, 'ada@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

async function nav(area: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: area }).click();
  await page.getByRole('heading', { level: 1, name: area }).waitFor();
}

/** A read of the console's API with the page's session (as the page itself reads). */
async function consoleGet(path: string): Promise<{ status: number; body: any }> {
  const response = await page.request.get(`${server.baseUrl}/app/api${path}`);
  return { status: response.status(), body: await response.json() };
}

describe('admin flows', { timeout: 60_000 }, () => {
  it('templates: a new template is PENDING, then APPROVED live, without a reload', async () => {
    await nav('Templates');
    await page.getByRole('link', { name: 'New template' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('spring_news');
    await page.getByLabel('Body').fill('Hello {{1}}, spring is here.');
    await page.getByLabel('Examples of the variables').fill('Ana');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    const origin = await page.evaluate(() => performance.timeOrigin);
    const row = page.getByRole('row', { name: /spring_news/ });
    await row.getByRole('gridcell', { name: 'PENDING' }).waitFor();
    await row.getByRole('gridcell', { name: 'APPROVED' }).waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(origin);
  });

  it('settings: a user invited with a one-time link, given a role, removed after a confirmation', async () => {
    await nav('Settings');
    const users = page.getByRole('region', { name: 'Users' });
    const invite = users.getByRole('form', { name: 'Invite a user' });
    await invite.getByRole('textbox', { name: 'Email of the new user' }).fill('ben@acme.example');
    await invite.getByRole('button', { name: 'Invite user' }).click();
    const link = (await users.locator('.secret').textContent())?.trim() ?? '';
    expect(link).toMatch(new RegExp(`^${server.baseUrl}/app/set-password#token=`));
    const ben = async () =>
      ((await consoleGet('/users')).body.items as { email: string; role: string }[]).find(
        (user) => user.email === 'ben@acme.example',
      );
    expect((await ben())?.role).toBe('agent');

    await users.getByRole('button', { name: /Role of ben@acme\.example/ }).click();
    await page.getByRole('option', { name: 'Admin' }).click();
    await expect.poll(async () => (await ben())?.role).toBe('admin');

    await users.getByRole('button', { name: 'Remove ben@acme.example' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Remove this user?' });
    await dialog.getByRole('button', { name: 'Remove user' }).click();
    await users.getByText('ben@acme.example').first().waitFor({ state: 'detached' });
    expect(await ben()).toBeUndefined();
    // The removed user's link no longer signs anyone in.
    const other = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const theirs = await other.newPage();
    await theirs.goto(link);
    await theirs.getByRole('heading', { level: 1, name: 'Choose a password' }).waitFor();
    await theirs.getByRole('alert').waitFor();
    expect(await theirs.getByLabel('New password').count()).toBe(0);
    await other.close();
  });

  it('an agent sees the inbox and contacts only; an admin area says so, and the server answers 403', async () => {
    const users = page.getByRole('region', { name: 'Users' });
    await users.getByRole('textbox', { name: 'Email of the new user' }).fill('cleo@acme.example');
    const previous = (await users.locator('.secret').textContent())?.trim();
    await users.getByRole('button', { name: 'Invite user' }).click();
    await expect.poll(async () => (await users.locator('.secret').textContent())?.trim()).not.toBe(previous);
    const link = (await users.locator('.secret').textContent())?.trim() ?? '';
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, timezoneId: 'Europe/Berlin' });
    const agent = await context.newPage();
    agent.setDefaultTimeout(10_000);
    await agent.goto(link);
    await agent.getByLabel('New password').fill(PASSWORD);
    await agent.getByRole('button', { name: 'Save and sign in' }).click();
    await agent.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    const nav = agent.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Inbox', 'Contacts']);
    await agent.goto(`${server.baseUrl}/app/settings`);
    await agent.getByRole('heading', { level: 1, name: 'Not available' }).waitFor();
    await screenshot(agent, 'not-available');
    await agent.goto(`${server.baseUrl}/app/no-such-page`);
    await agent.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    await screenshot(agent, 'not-found');
    const refused = await agent.request.get(`${server.baseUrl}/app/api/v1/broadcasts`);
    expect(refused.status()).toBe(403);
    expect((await refused.json()).detail.code).toBe('forbidden_for_role');
    await agent.goto(`${server.baseUrl}/app/contacts`);
    await agent.getByRole('grid', { name: 'Contacts' }).waitFor();
    await context.close();
  });

  it('settings: the messaging balance, prices and limit the operator set; a funnel stage added and moved up, a sub-origin, a property with options archived and restored', async () => {
    expect(
      (
        await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, {
          balance: 1234.5,
          messaging_limit_24h: 750,
        })
      ).status,
    ).toBe(200);
    await page.reload();
    const organization = page.getByRole('region', { name: 'Organization' });
    await organization.getByRole('definition').filter({ hasText: '1,234.5' }).waitFor();
    await organization.getByRole('definition').filter({ hasText: '750 phones' }).waitFor();
    await organization.getByRole('definition').filter({ hasText: 'Acme support +15550001000' }).waitFor();
    const stages = page.getByRole('region', { name: 'Funnel stages' });
    for (const name of ['New lead', 'Qualified']) {
      await stages.getByRole('textbox', { name: 'Stage name' }).fill(name);
      await stages.getByRole('button', { name: 'Add stage' }).click();
      await stages.getByRole('button', { name: `Move ${name} up` }).waitFor();
    }
    const order = async () =>
      ((await server.api(data.key, 'GET', '/v1/funnel-stages')).body.items as { name: string }[]).map((s) => s.name);
    expect((await order()).slice(-2)).toEqual(['New lead', 'Qualified']);
    await stages.getByRole('button', { name: 'Move Qualified up' }).click();
    await expect.poll(async () => (await order()).slice(-2)).toEqual(['Qualified', 'New lead']);
    await expect.poll(() => stages.getByRole('button', { name: 'Move Qualified up' }).isDisabled()).toBe(true);

    const subOrigins = page.getByRole('region', { name: 'Sub-origins' });
    await subOrigins.getByRole('textbox', { name: 'Sub-origin label' }).fill('Spring fair');
    await subOrigins.getByRole('textbox', { name: 'Sub-origin key' }).fill('spring_fair');
    await subOrigins.getByRole('button', { name: /Origin/ }).click();
    await page.getByRole('option', { name: 'EVENT' }).click();
    await subOrigins.getByRole('button', { name: 'Add sub-origin' }).click();
    await subOrigins.getByText('Spring fair').waitFor();
    const stored = (await server.api(data.key, 'GET', '/v1/sub-origins')).body.items as any[];
    expect(stored.find((s) => s.key === 'spring_fair')).toMatchObject({ label: 'Spring fair', origin: 'EVENT' });

    const properties = page.getByRole('region', { name: 'Custom properties' });
    await properties.getByLabel('Label', { exact: true }).fill('Colour');
    await properties.getByLabel('Key', { exact: true }).fill('colour');
    await properties.getByRole('button', { name: /Kind/ }).click();
    await page.getByRole('option', { name: 'DROPDOWN' }).click();
    await properties.getByLabel('Options').fill('Red, Blue');
    await properties.getByRole('button', { name: 'Create property' }).click();
    await properties.getByText('Red, Blue').waitFor();
    await properties.getByRole('button', { name: 'Archive Colour' }).click();
    await properties.getByRole('button', { name: 'Restore Colour' }).waitFor();
    const colour = async () =>
      ((await server.api(data.key, 'GET', '/v1/properties')).body.items as any[]).find((p) => p.key === 'colour');
    expect((await colour())?.options.map((o: { label: string }) => o.label)).toEqual(['Red', 'Blue']);
    expect((await colour())?.archived_at).toBeTruthy();
    await properties.getByRole('button', { name: 'Restore Colour' }).click();
    await properties.getByRole('button', { name: 'Archive Colour' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(csp).toEqual([]);
  });

  it('a webhook endpoint: a 410 disables it, the switch enables it, the failed delivery is retried, the secret rotated', async () => {
    await nav('Developers');
    await page.getByLabel('Endpoint URL').fill(receiverUrl);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const first = (await page.locator('.secret').textContent())?.trim() ?? '';
    expect(first).toMatch(/^whsec_/);
    await page.getByRole('row', { name: /127\.0\.0\.1/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    const endpointId = new URL(page.url()).pathname.split('/').at(-1)!;
    const endpoint = async () => (await server.api(data.key, 'GET', `/v1/webhook-endpoints/${endpointId}`)).body;

    // The receiver answers 410 Gone: the delivery fails at once and the endpoint is disabled.
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await expect.poll(async () => (await endpoint()).enabled, { timeout: 15_000 }).toBe(false);
    const toggle = page.getByRole('switch', { name: 'Enabled' });
    await page.reload();
    await expect.poll(() => toggle.isChecked()).toBe(false);
    const ping = page.getByRole('row', { name: /ping/ });
    await ping.getByText('failed').waitFor();

    // Enabled again from the keyboard; the receiver now answers 200; the failed delivery is retried.
    answer = 200;
    await toggle.focus();
    await page.keyboard.press('Space');
    await expect.poll(async () => (await endpoint()).enabled).toBe(true);
    await page.getByRole('button', { name: 'Retry delivery ping' }).click();
    await page.getByText('Delivery queued again.').waitFor();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(2);
    await page.reload();
    await ping.getByText('succeeded').waitFor({ timeout: 15_000 });

    // Rotated after a confirmation: a new secret, shown once; the next delivery is signed with it.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page
      .getByRole('alertdialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    await page.getByText(/Signing secret.*shown once/).waitFor();
    const second = (await page.locator('.secret').textContent())?.trim() ?? '';
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(3);
    const last = received.at(-1)!;
    const id = String(last.headers['webhook-id']);
    const timestamp = Number(last.headers['webhook-timestamp']);
    const signatures = String(last.headers['webhook-signature']).split(' ');
    expect(signatures).toContain(signature(second, id, timestamp, last.body));
  });

  it('contacts: properties edited by kind (date, options, money, files), the stage and opt-out; the table filtered by them', async () => {
    for (const property of [
      { key: 'renewal', label: 'Renewal', kind: 'DATE' },
      {
        key: 'interests',
        label: 'Interests',
        kind: 'MULTI_SELECT',
        options: [
          { key: 'shoes', label: 'Shoes' },
          { key: 'boots', label: 'Boots' },
        ],
      },
      { key: 'budget', label: 'Budget', kind: 'MONEY', currency: 'USD' },
      { key: 'contract', label: 'Contract', kind: 'FILE' },
      { key: 'photos', label: 'Photos', kind: 'MULTI_FILE' },
    ])
      expect((await server.api(data.key, 'POST', '/v1/properties', property)).status).toBe(201);
    const ana = (await server.api(data.key, 'GET', '/v1/contacts?q=ana@example.com')).body.items[0];
    // A photo stored through the API with its name: kept as it is when its URL stays in the list.
    const front = { url: 'https://files.example.com/front.jpg', name: 'Front', mime_type: 'image/jpeg' };
    const patched = await server.api(data.key, 'PATCH', `/v1/contacts/${ana.id}`, {
      properties: { photos: { kind: 'MULTI_FILE', value_json: [front] } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await page.goto(`${server.baseUrl}/app/contacts/${ana.id}/edit`);
    await page.getByRole('heading', { level: 1, name: 'Edit contact' }).waitFor();
    await page.getByLabel('Renewal').fill('2027-03-01');
    await page.getByRole('group', { name: 'Interests' }).getByText('Boots').click();
    await page.getByLabel('Budget (USD)').fill('120.5');
    await page.getByLabel('Contract').fill('https://files.example.com/contract.pdf');
    const photos = page.getByLabel('Photos');
    expect(await photos.inputValue()).toBe(front.url);
    await photos.fill(`${front.url}, https://files.example.com/back.jpg`);
    await page.getByRole('button', { name: /Funnel stage/ }).click();
    await page.getByRole('option', { name: 'Qualified' }).click();
    await page.getByRole('button', { name: 'Save contact' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ana García' }).waitFor();
    const stored = (await server.api(data.key, 'GET', `/v1/contacts/${ana.id}`)).body;
    expect(stored.properties.renewal).toMatchObject({ value_date: '2027-03-01' });
    expect(stored.properties.interests.value_json).toEqual(['boots']);
    expect(stored.properties.budget.value_number).toBe(120.5);
    expect(stored.properties.contract.value_json).toEqual([{ url: 'https://files.example.com/contract.pdf' }]);
    expect(stored.properties.photos.value_json).toEqual([front, { url: 'https://files.example.com/back.jpg' }]);
    await page.getByRole('definition').filter({ hasText: 'Front, https://files.example.com/back.jpg' }).waitFor();
    const qualified = ((await server.api(data.key, 'GET', '/v1/funnel-stages')).body.items as any[]).find(
      (s) => s.name === 'Qualified',
    );
    expect(stored.funnel_stage_id).toBe(qualified.id);
    await page.getByRole('definition').filter({ hasText: 'Boots' }).waitFor();

    const optOut = page.getByRole('switch', { name: /Opted out of marketing/ });
    await optOut.focus();
    await page.keyboard.press('Space');
    await expect
      .poll(async () => (await server.api(data.key, 'GET', `/v1/contacts/${ana.id}`)).body.opted_out)
      .toBe(true);

    // The table: a property filter built from the organization's properties, kept in the address.
    await page.goto(`${server.baseUrl}/app/contacts`);
    const table = page.getByRole('grid', { name: 'Contacts' });
    await table.getByRole('rowheader', { name: 'Bruno Souza' }).waitFor();
    await page.getByRole('button', { name: 'Add a property filter' }).click();
    await page.getByRole('button', { name: /Property 1/ }).click();
    await page.getByRole('option', { name: 'Budget' }).click();
    await page.getByRole('button', { name: /Condition 1/ }).click();
    await page.getByRole('option', { name: 'greater than' }).click();
    await page.getByRole('textbox', { name: 'Value 1' }).fill('100');
    await page.waitForURL(/property_filter=budget%3Agt%3A100/);
    await expect.poll(() => table.getByRole('rowheader').allTextContents()).toEqual(['Ana García']);
    // Reloaded, the same filter and the same list.
    await page.reload();
    await expect.poll(() => table.getByRole('rowheader').allTextContents()).toEqual(['Ana García']);
    expect(await page.getByRole('textbox', { name: 'Value 1' }).inputValue()).toBe('100');
    await page.getByRole('button', { name: 'Remove property filter 1' }).click();
    await table.getByRole('rowheader', { name: 'Bruno Souza' }).waitFor();
    // Opted out, then the stage.
    await page.getByRole('button', { name: /Opted out/ }).click();
    await page.getByRole('option', { name: 'Opted out', exact: true }).click();
    await expect.poll(() => table.getByRole('rowheader').allTextContents()).toEqual(['Ana García']);
    await page.getByRole('button', { name: /Opted out/ }).click();
    await page.getByRole('option', { name: 'Either' }).click();
    await page.getByRole('button', { name: /Stage/ }).click();
    await page.getByRole('option', { name: 'Qualified' }).click();
    await expect.poll(() => table.getByRole('rowheader').allTextContents()).toEqual(['Ana García']);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('contacts: the table pages through more than one page by the keyboard, with the total', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({
      first_name: `Pager ${String(i + 1).padStart(2, '0')}`,
      email: `pager${i + 1}@example.com`,
    }));
    const batch = await server.api(data.key, 'POST', '/v1/contacts/batch-upsert', { match_on: 'email', items });
    expect(batch.status, JSON.stringify(batch.body)).toBeLessThan(300);
    const total = (await server.api(data.key, 'GET', '/v1/contacts?limit=1')).body.total_count as number;
    expect(total).toBeGreaterThan(30);
    await page.goto(`${server.baseUrl}/app/contacts?sort=name&dir=asc`);
    const table = page.getByRole('grid', { name: 'Contacts' });
    await page.getByText(`${total} contacts`, { exact: true }).waitFor();
    const names = () => table.getByRole('rowheader').allTextContents();
    await expect.poll(async () => (await names()).length).toBe(25);
    const first = await names();
    const pages = page.getByRole('navigation', { name: 'Pages' });
    expect(await pages.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Next page' }).focus();
    await page.keyboard.press('Enter');
    await pages.getByText('Page 2').waitFor();
    await expect.poll(async () => (await names()).length).toBe(total - 25);
    const second = await names();
    expect(second.filter((name) => first.includes(name))).toEqual([]);
    expect(await pages.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Previous page' }).click();
    await pages.getByText('Page 1').waitFor();
    await expect.poll(names).toEqual(first);
  });

  it('every page that reads shows its error state when the API fails, with a way to try again that works', {
    timeout: 180_000,
  }, async () => {
    const ana = (await server.api(data.key, 'GET', '/v1/contacts?q=ana@example.com')).body.items[0];
    const endpoint = (
      await server.api(data.key, 'POST', '/v1/webhook-endpoints', {
        url: 'https://hooks.example.com/errors',
        events: ['contact.created'],
      })
    ).body;
    const paths = [
      ['/inbox', 'Inbox'],
      [`/inbox/${data.conversationId}`, 'Inbox'],
      ['/contacts', 'Contacts'],
      ['/contacts/new', 'New contact'],
      [`/contacts/${ana.id}`, /./],
      [`/contacts/${ana.id}/edit`, 'Edit contact'],
      ['/broadcasts', 'Broadcasts'],
      ['/broadcasts/new', 'New broadcast'],
      [`/broadcasts/${data.broadcastId}`, /./],
      ['/templates', 'Templates'],
      ['/developers', 'Developers'],
      [`/developers/webhooks/${endpoint.id}`, 'Webhook endpoint'],
      ['/settings', 'Settings'],
    ] as const;
    // Every read of the public operations answers 500 (the session and the console's own reads still work).
    let failing = true;
    await page.route('**/app/api/v1/**', (route) =>
      failing && route.request().method() === 'GET'
        ? route.fulfill({ status: 500, contentType: 'application/json', body: '{"detail":"internal_error"}' })
        : route.continue(),
    );
    try {
      for (const [path, heading] of paths) {
        await page.goto(`${server.baseUrl}/app${path}`);
        await page.getByRole('heading', { level: 1, name: heading }).first().waitFor();
        await page
          .getByRole('alert')
          .filter({ hasText: 'Something went wrong on our side. Try again.' })
          .first()
          .waitFor({ timeout: 15_000 });
        expect(await page.getByRole('button', { name: 'Try again' }).count(), path).toBeGreaterThan(0);
      }
      // The API answers again: each section's "Try again" shows it.
      failing = false;
      const again = page.getByRole('button', { name: 'Try again' });
      for (let left = await again.count(); left > 0; left--) {
        await again.first().click();
        await expect.poll(() => again.count()).toBe(left - 1);
      }
      await page.getByText('America/Mexico_City').waitFor();
      await page.getByRole('button', { name: 'Create property' }).waitFor();
    } finally {
      await page.unroute('**/app/api/v1/**');
    }
  });
});

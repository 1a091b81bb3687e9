// Settings for a team at work (decisions §19, D275–D278), as a person does it in Chromium: an admin creates a team
// with members, edits it, meets a duplicate name and a bad limit at their fields, and deletes it; creates, finds,
// edits and deletes canned responses (a duplicate short code at its field); marks themselves away and available
// again from the frame; an agent cannot reach these pages nor change teams, and changes their own availability. Every page axe-clean at 1280×800 and
// 390×844.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, openDesktopPage, VIEWPORTS } from './browser.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInFromLink, signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let csp: string[];
let orgId: string;
let key: string;
let agentLink: string;
let agentId: string;

const ok = <T>(response: { status: number; body: T }, what: string): T => {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
};

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
  orgId = ok(
    await server.admin('POST', '/organizations', { name: 'Acme Shoes', timezone: 'America/Mexico_City' }),
    'organization',
  ).id;
  key = ok(await server.admin('POST', `/organizations/${orgId}/api-keys`, { name: 'suite' }), 'key').key;
  const agent = ok(
    await server.admin('POST', `/organizations/${orgId}/users`, {
      email: 'ben@acme.example',
      name: 'Ben Agent',
      role: 'agent',
    }),
    'agent',
  );
  agentLink = agent.sign_in_url;
  agentId = agent.id;
  ({ page, csp } = await openDesktopPage(browser));
  await signInNewAdmin(server, page, orgId, 'ada@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function settingsSection(name: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/** A checkbox or switch turned from the keyboard, as a person without a mouse does (decisions §17). */
async function press(control: Locator) {
  await control.focus();
  await control.press('Space');
}

/** The field (label, input, description and the API's message) of the control named `name` inside `within`. */
const fieldOf = (within: Locator, role: 'textbox' | 'spinbutton', name: string) =>
  within.locator('.field').filter({ has: page.getByRole(role, { name, exact: true }) });

const teamsByName = async () => {
  const { items } = ok(await server.api(key, 'GET', '/v1/teams'), 'teams');
  return new Map<string, any>(items.map((team: any) => [team.name, team]));
};

describe('team settings', { timeout: 90_000 }, () => {
  it('teams: an admin creates one with members, meets a duplicate name and a bad limit at their fields, edits and deletes', async () => {
    await settingsSection('Teams');
    await checkPage(page, csp, 'Teams', 'settings-teams-empty');
    const form = page.getByRole('region', { name: 'New team' });
    await form.getByRole('textbox', { name: 'Name' }).fill('Support');
    await press(form.getByRole('checkbox', { name: 'Ada Admin' }));
    await press(form.getByRole('checkbox', { name: 'Ben Agent' }));
    await press(form.getByRole('switch', { name: 'Assign conversations automatically' }));
    await form.getByRole('spinbutton', { name: 'Open conversations per member' }).fill('5');
    await form.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('status').filter({ hasText: 'Team Support created.' }).waitFor();
    const table = page.getByRole('grid', { name: 'Teams' });
    const support = table.getByRole('row').filter({ hasText: 'Support' });
    await expect.poll(() => support.textContent()).toContain('Ada Admin, Ben Agent');
    expect(await support.textContent()).toContain('On');
    const created = (await teamsByName()).get('Support');
    expect(created).toMatchObject({ auto_assign: true, max_open_per_member: 5 });
    expect(created.member_ids).toHaveLength(2);
    expect(created.member_ids).toContain(agentId);
    // The form is empty again for the next team.
    expect(await form.getByRole('textbox', { name: 'Name' }).inputValue()).toBe('');
    expect(await form.getByRole('checkbox', { name: 'Ada Admin' }).isChecked()).toBe(false);

    // decisions §19: a name is unique ignoring case (409 duplicate at `name`); the limit is 1–1,000 (422 at its field).
    await form.getByRole('textbox', { name: 'Name' }).fill('support');
    await form.getByRole('button', { name: 'Create team' }).click();
    const name = form.getByRole('textbox', { name: 'Name' });
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => fieldOf(form, 'textbox', 'Name').textContent()).toContain('already taken');
    await form.getByRole('textbox', { name: 'Name' }).fill('Sales');
    await form.getByRole('spinbutton', { name: 'Open conversations per member' }).fill('0');
    await form.getByRole('button', { name: 'Create team' }).click();
    const limit = form.getByRole('spinbutton', { name: 'Open conversations per member' });
    await expect.poll(() => limit.getAttribute('aria-invalid')).toBe('true');
    expect(
      await fieldOf(form, 'spinbutton', 'Open conversations per member')
        .locator('.react-aria-FieldError')
        .textContent(),
    ).not.toBe('');
    expect(await name.getAttribute('aria-invalid')).not.toBe('true');
    // The form kept what was typed after the refusals; Sales is Ben's alone.
    await press(form.getByRole('checkbox', { name: 'Ben Agent' }));
    await limit.fill('1000');
    await form.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('status').filter({ hasText: 'Team Sales created.' }).waitFor();
    expect((await teamsByName()).get('Sales')).toMatchObject({ member_ids: [agentId], max_open_per_member: 1000 });
    await checkPage(page, csp, 'Teams', 'settings-teams');

    await table.getByRole('button', { name: 'Edit Support' }).click();
    const edit = page.getByRole('region', { name: 'Edit Support' });
    await expect.poll(() => edit.getByRole('textbox', { name: 'Name' }).inputValue()).toBe('Support');
    await edit.getByRole('textbox', { name: 'Name' }).fill('Customer care');
    await press(edit.getByRole('checkbox', { name: 'Ben Agent' }));
    await press(edit.getByRole('switch', { name: 'Assign conversations automatically' }));
    await edit.getByRole('button', { name: 'Save team' }).click();
    await page.getByRole('status').filter({ hasText: 'Team Customer care saved.' }).waitFor();
    const saved = (await teamsByName()).get('Customer care');
    expect(saved).toMatchObject({ id: created.id, auto_assign: false, max_open_per_member: 5 });
    expect(saved.member_ids).toHaveLength(1);
    expect(saved.member_ids).not.toContain(agentId);

    await table.getByRole('button', { name: 'Delete Sales' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete team' }).click();
    await page.getByRole('status').filter({ hasText: 'Team Sales deleted.' }).waitFor();
    await expect.poll(() => table.getByRole('row').filter({ hasText: 'Sales' }).count()).toBe(0);
    expect([...(await teamsByName()).keys()]).toEqual(['Customer care']);
  });

  it('canned responses: created with placeholders, found by search, a duplicate short code at its field, edited and deleted', async () => {
    await settingsSection('Canned responses');
    await checkPage(page, csp, 'Canned responses', 'settings-canned-responses-empty');
    const form = page.getByRole('region', { name: 'New canned response' });
    const create = async (shortCode: string, text: string) => {
      await form.getByRole('textbox', { name: 'Short code' }).fill(shortCode);
      await form.getByRole('textbox', { name: 'Text' }).fill(text);
      await form.getByRole('button', { name: 'Create canned response' }).click();
    };
    await create('greet', 'Hi {{contact.first_name}}! How can we help?');
    await page.getByRole('status').filter({ hasText: '/greet created.' }).waitFor();
    await create('shipping', 'Your order ships in {{contact.properties.days}} days.');
    await page.getByRole('status').filter({ hasText: '/shipping created.' }).waitFor();
    const table = page.getByRole('grid', { name: 'Canned responses' });
    await expect.poll(() => table.getByRole('row').count()).toBe(3);

    // decisions §19: a short code is unique (409 duplicate at `short_code`) and matches ^[a-z0-9_-]{1,30}$ (422).
    await create('greet', 'Hello again');
    const shortCode = form.getByRole('textbox', { name: 'Short code' });
    await expect.poll(() => shortCode.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => fieldOf(form, 'textbox', 'Short code').textContent()).toContain('already taken');
    await create('Not Valid', 'Hello');
    await expect.poll(() => shortCode.getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByRole('textbox', { name: 'Text' }).getAttribute('aria-invalid')).not.toBe('true');
    await checkPage(page, csp, 'Canned responses', 'settings-canned-responses');

    // `q` matches the short code's start or the text, ignoring case.
    const search = page.getByRole('searchbox', { name: 'Search' });
    await search.fill('ORDER');
    await search.press('Enter');
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    expect(await table.textContent()).toContain('/shipping');
    await search.fill('gr');
    await search.press('Enter');
    await expect.poll(() => table.textContent()).not.toContain('/shipping');
    expect(await table.textContent()).toContain('/greet');
    expect(page.url()).toContain('q=gr');
    await search.fill('');
    await search.press('Enter');
    await expect.poll(() => table.getByRole('row').count()).toBe(3);

    await table.getByRole('button', { name: 'Edit /greet' }).click();
    const edit = page.getByRole('region', { name: 'Edit /greet' });
    await edit.getByRole('textbox', { name: 'Text' }).fill('Hello {{contact.first_name}} {{contact.last_name}}!');
    await edit.getByRole('button', { name: 'Save canned response' }).click();
    await page.getByRole('status').filter({ hasText: '/greet saved.' }).waitFor();
    const { items } = ok(await server.api(key, 'GET', '/v1/canned-responses'), 'canned responses');
    expect(items.find((item: any) => item.short_code === 'greet')?.text).toBe(
      'Hello {{contact.first_name}} {{contact.last_name}}!',
    );

    await table.getByRole('button', { name: 'Delete /shipping' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete canned response' }).click();
    await page.getByRole('status').filter({ hasText: '/shipping deleted.' }).waitFor();
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    const after = ok(await server.api(key, 'GET', '/v1/canned-responses'), 'canned responses');
    expect(after.items.map((item: any) => item.short_code)).toEqual(['greet']);
  });

  it('availability: a person marks themselves away and available again from the frame', async () => {
    const availability = async () => {
      const { items } = ok(await server.api(key, 'GET', '/v1/users'), 'users');
      return items.find((user: any) => user.email === 'ada@acme.example')?.available;
    };
    expect(await availability()).toBe(true);
    const available = page.getByRole('switch', { name: 'Available' });
    expect(await available.isChecked()).toBe(true);
    await press(available);
    await expect.poll(availability).toBe(false);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Canned responses' }).waitFor();
    expect(await page.getByRole('switch', { name: 'Available' }).isChecked()).toBe(false);
    // A team's form marks the people who are away.
    await settingsSection('Teams');
    await page.getByRole('region', { name: 'New team' }).getByRole('checkbox', { name: 'Ada Admin (away)' }).waitFor();
    // The phone's frame keeps the switch within 390 px.
    await page.setViewportSize(VIEWPORTS.phone);
    await press(page.getByRole('switch', { name: 'Available' }));
    await expect.poll(availability).toBe(true);
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('an agent cannot reach teams or canned responses, and the server refuses their changes', async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, timezoneId: 'Europe/Berlin' });
    const agent = await context.newPage();
    agent.setDefaultTimeout(10_000);
    await signInFromLink(agent, agentLink);
    for (const path of ['/app/settings/teams', '/app/settings/canned-responses']) {
      await agent.goto(`${server.baseUrl}${path}`);
      await agent.getByRole('heading', { level: 1, name: 'Not available' }).waitFor();
      expect(await agent.getByRole('grid').count()).toBe(0);
    }
    const csrf = (await context.cookies()).find((cookie) => cookie.name === 'crm_csrf')?.value ?? '';
    // decisions §19: teams need `teams:write`, which an agent's role does not grant (decisions §17).
    const refused = await agent.request.post(`${server.baseUrl}/app/api/v1/teams`, {
      data: { name: 'Agents only' },
      headers: { 'x-csrf-token': csrf, origin: server.baseUrl },
    });
    expect(refused.status()).toBe(403);
    expect((await refused.json()).detail.code).toBe('forbidden_for_role');
    // Their own availability is theirs to change.
    await press(agent.getByRole('switch', { name: 'Available' }));
    await expect
      .poll(async () => {
        const { items } = ok(await server.api(key, 'GET', '/v1/users'), 'users');
        return items.find((user: any) => user.id === agentId)?.available;
      })
      .toBe(false);
    await context.close();
  });
});

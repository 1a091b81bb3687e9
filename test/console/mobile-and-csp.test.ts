// Every page of the console at 390×844 (decisions §17): nothing wider than the screen, the main navigation behind a
// "Menu" button that the keyboard reaches and opens, no serious axe violation. And the Content-Security-Policy: the
// headers of /app (no inline scripts, no framing, a referrer policy), and no page refused anything by it — with a
// control proving that an inline script is in fact refused and that the listener sees it.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizontalOverflow, launchChromium, screenshot, seriousViolations, VIEWPORTS } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let data: Seeded;
/** What the page reports on its console as an error, and uncaught exceptions. */
const errors: string[] = [];

const AREAS = ['Inbox', 'Contacts', 'Broadcasts', 'Templates', 'Developers', 'Settings'];

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
  data = await seed(server);
  context = await browser.newContext({ viewport: VIEWPORTS.phone, timezoneId: 'Europe/Berlin' });
  // Runs before the page's own scripts in every document (through the debugger, so the policy does not apply to it).
  await context.addInitScript(() => {
    type Violation = { effectiveDirective: string; blockedURI: string };
    const w = globalThis as unknown as {
      cspViolations: string[];
      document: { addEventListener(type: string, listener: (event: Violation) => void): void };
    };
    w.cspViolations = [];
    w.document.addEventListener('securitypolicyviolation', (event) =>
      w.cspViolations.push(`${event.effectiveDirective} ${event.blockedURI}`),
    );
  });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  await signInNewAdmin(server, page, data.orgId, 'ada@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const violationsOf = (p: Page) =>
  p.evaluate(() => (globalThis as unknown as { cspViolations: string[] }).cspViolations);

/** Every page of the app, by path (ids from the seeded organization). */
async function everyPage(): Promise<string[]> {
  const contact = (await server.api(data.key, 'GET', '/v1/contacts?limit=1')).body.items[0].id;
  const endpoint = await server.api(data.key, 'POST', '/v1/webhook-endpoints', {
    url: 'https://hooks.example.com/x',
    events: ['contact.created'],
  });
  expect(endpoint.status).toBe(201);
  return [
    '/inbox',
    `/inbox/${data.conversationId}`,
    '/contacts',
    '/contacts/new',
    '/contacts/import',
    `/contacts/${contact}`,
    `/contacts/${contact}/edit`,
    '/broadcasts',
    '/broadcasts/new',
    `/broadcasts/${data.broadcastId}`,
    '/templates',
    '/templates/new',
    '/developers',
    `/developers/webhooks/${endpoint.body.id}`,
    '/settings',
  ];
}

async function settled(p: Page): Promise<void> {
  await p.getByRole('heading', { level: 1 }).first().waitFor();
  await expect
    .poll(() =>
      p
        .getByRole('status')
        .filter({ hasText: /Loading|Opening|Reading/ })
        .count(),
    )
    .toBe(0);
}

describe('the console at 390×844', { timeout: 120_000 }, () => {
  it('every page fits the screen, passes axe, and reaches the main navigation through the Menu button', async () => {
    const nav = page.getByRole('navigation', { name: 'Main' });
    const menu = page.getByRole('button', { name: 'Menu' });
    for (const path of await everyPage()) {
      await page.goto(`${server.baseUrl}/app${path}`);
      await settled(page);
      expect(await page.title(), path).toMatch(/ · CRM$/);
      expect(await page.title(), path).not.toBe('Not found · CRM');
      // Polled: a page still laying out what it just loaded may be wider for a moment.
      await expect.poll(() => horizontalOverflow(page), { message: `${path} is wider than 390 px` }).toBe(0);
      expect(await seriousViolations(page), path).toEqual([]);
      // Folded: the links are hidden until the menu opens, then every area is a link away.
      expect(await nav.getByRole('link', { name: 'Contacts' }).isVisible(), path).toBe(false);
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      for (const area of AREAS) expect(await nav.getByRole('link', { name: area }).isVisible(), area).toBe(true);
      await expect.poll(() => horizontalOverflow(page), { message: `${path} with the menu open` }).toBe(0);
      expect(await seriousViolations(page), `${path} with the menu open`).toEqual([]);
      if (path === '/broadcasts/new') await screenshot(page, 'mobile-menu');
      expect(await violationsOf(page), path).toEqual([]);
    }
    expect(errors).toEqual([]);
  });

  it('the keyboard opens the menu and follows a link; the menu closes on the new page', async () => {
    await page.goto(`${server.baseUrl}/app/broadcasts/${data.broadcastId}`);
    await settled(page);
    const menu = page.getByRole('button', { name: 'Menu' });
    // Tab from the top of the page: the skip link, the menu button.
    for (let i = 0; i < 5 && !(await menu.evaluate((el) => el === el.ownerDocument.activeElement)); i++)
      await page.keyboard.press('Tab');
    expect(await menu.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    const contacts = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Contacts' });
    for (let i = 0; i < 10 && !(await contacts.evaluate((el) => el === el.ownerDocument.activeElement)); i++)
      await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await contacts.isVisible()).toBe(false);
    await page.getByRole('grid', { name: 'Contacts' }).waitFor();
  });
});

describe('the Content-Security-Policy', () => {
  it('/app answers with a policy that allows no inline script or framing, and a referrer policy', async () => {
    const response = await fetch(`${server.baseUrl}/app/broadcasts/new`);
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    const directives = new Map(
      policy.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    // Images only from this origin, data: and blob: (a conversation's images, fetched with the session).
    expect(directives.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin']).toContain(
      response.headers.get('referrer-policy'),
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    // The page's scripts are files of this origin, never inline.
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('an inline script is refused in the page, and the violation is seen (the check above can fail)', async () => {
    await page.goto(`${server.baseUrl}/app/inbox`);
    await settled(page);
    expect(await violationsOf(page)).toEqual([]);
    const ran = await page.evaluate(async () => {
      type Element = { textContent: string };
      const w = globalThis as unknown as {
        document: { createElement(tag: string): Element; head: { append(node: Element): void } };
        inlineRan?: boolean;
      };
      const script = w.document.createElement('script');
      script.textContent = 'globalThis.inlineRan = true';
      w.document.head.append(script);
      await new Promise((resolve) => setTimeout(resolve, 0));
      return w.inlineRan === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => violationsOf(page)).toEqual([expect.stringMatching(/^script-src-elem inline$/)]);
  });
});

// The console signed out (decisions §17): /app and every deep link show the sign-in page, with its title, no
// serious accessibility violation at both sizes, and nothing refused by the Content-Security-Policy.

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, recordCspViolations, screenshot, seriousViolations, VIEWPORTS } from './browser.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';

let server: ConsoleServer;
let browser: Browser;
beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('signed out', () => {
  it('shows the sign-in page at /app and at a deep link, which it returns to after signing in', async () => {
    for (const viewport of Object.values(VIEWPORTS)) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      const csp = recordCspViolations(page);
      await page.goto(`${server.baseUrl}/app/`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(await page.title()).toBe('Sign in · CRM');
      expect(await page.getByRole('textbox', { name: 'Email' }).isVisible()).toBe(true);
      expect(await page.getByLabel('Password').isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
      if (viewport === VIEWPORTS.desktop) await screenshot(page, 'sign-in');

      await page.goto(`${server.baseUrl}/app/contacts?q=ana`);
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).searchParams.get('next')).toBe('/contacts?q=ana');
      expect(csp).toEqual([]);
      await context.close();
    }
  });
});

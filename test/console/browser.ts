// The console's browser suite helpers (decisions §17): Debian's Chromium driven by playwright-core (never a browser
// download), axe-core run in the page, the JavaScript a page loads measured gzipped, and screenshots.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

const axeSource: string = createRequire(import.meta.url)('axe-core').source;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (run through the debugger, not a script tag). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<any> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    });
    return result.violations as AxeViolation[];
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map(({ target }) => ({ target })) }));
}

/** Records every JavaScript file the page loads, with its gzipped size. */
export function recordScripts(page: Page): { total(): number; files(): { url: string; gzipped: number }[] } {
  const files: { url: string; gzipped: number }[] = [];
  const pending: Promise<void>[] = [];
  page.on('response', (response) => {
    const type = response.headers()['content-type'] ?? '';
    if (!type.includes('javascript')) return;
    pending.push(
      response.body().then(
        (body) => void files.push({ url: response.url(), gzipped: gzipSync(body, { level: 9 }).length }),
        () => undefined,
      ),
    );
  });
  return {
    total: () => files.reduce((sum, file) => sum + file.gzipped, 0),
    files: () => files,
  };
}

/** Content-Security-Policy violations the page reports on its console. */
export function recordCspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to (load|execute|apply)/i.test(message.text()))
      violations.push(message.text());
  });
  return violations;
}

// Screenshots go to docs/console/ with SCREENSHOTS=1 (the README shows them), elsewhere to a scratch folder.
const screenshotDir =
  process.env.SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/console/', import.meta.url))
    : fileURLToPath(new URL('../../node_modules/.cache/console-screenshots/', import.meta.url));
mkdirSync(screenshotDir, { recursive: true });

export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await page.screenshot({ path: `${screenshotDir}${name}.png`, fullPage: options.fullPage ?? false });
}

/** The document's width beyond the viewport's, in CSS pixels (0 when nothing overflows sideways). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return Math.max(0, root.scrollWidth - root.clientWidth);
  });
}

/**
 * The page is `title`: its h1 and `<title>`, nothing loading, no serious axe violation at 1280×800 and at 390×844,
 * nothing wider than 390 px, and nothing refused by the Content-Security-Policy; photographed as `name`.
 */
export async function checkPage(
  page: Page,
  csp: string[],
  title: string,
  name: string,
  heading: string | RegExp = title,
): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading' }).count()).toBe(0);
  expect(await page.title()).toBe(`${title} · CRM`);
  expect(await seriousViolations(page), `${name} at 1280×800`).toEqual([]);
  await screenshot(page, name);
  await page.setViewportSize(VIEWPORTS.phone);
  expect(await seriousViolations(page), `${name} at 390×844`).toEqual([]);
  await expect.poll(() => horizontalOverflow(page), { message: `${name} fits 390 px wide` }).toBe(0);
  await page.setViewportSize(VIEWPORTS.desktop);
  expect(csp).toEqual([]);
}

/**
 * A desktop page in a browser set in Berlin (the seeded organization is in Mexico City, so every time shown must be
 * the organization's), with a 10 s default wait and its CSP violations recorded.
 */
export async function openDesktopPage(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; csp: string[] }> {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop, timezoneId: 'Europe/Berlin' });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page, csp: recordCspViolations(page) };
}

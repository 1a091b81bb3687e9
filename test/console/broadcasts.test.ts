// Broadcasts to an audience in the console (decisions §16, §17 flow 4), as a person does it in Chromium: the new
// broadcast page (template, audience with its live count, the template's variables by name, a schedule in the
// organization's timezone while the browser is in another, the API's refusals at their fields or as sentences, one
// Idempotency-Key per body), then the broadcast's page with only the actions its status allows (pause, resume,
// cancel after a confirmation) and its progress moving live to the end.
import pg from 'pg';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, openDesktopPage, screenshot, VIEWPORTS } from './browser.ts';
import { type FileHost, startFileHost } from './files.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let data: Seeded;
let csp: string[];
let files: FileHost;
let filesUrl: string;
const creations: Request[] = [];

beforeAll(async () => {
  // The media a template's header and a carousel's cards show: the server fetches each URL once when it checks a send.
  files = await startFileHost((path) => {
    if (path.endsWith('.png')) return { type: 'image/png', body: PNG };
    if (path.endsWith('.mp4')) return { type: 'video/mp4', body: MP4 };
    return undefined;
  });
  filesUrl = files.url;
  [server, browser] = await Promise.all([
    startConsoleServer({ MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1' }),
    launchChromium(),
  ]);
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
  await files?.close();
});

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(64, 2)]);

/** A template created through the API and approved by the sandbox platform. */
async function approvedTemplate(name: string, category: string, components: unknown[]): Promise<string> {
  const created = await server.api(data.key, 'POST', '/v1/templates', {
    name,
    language: 'en_US',
    category,
    components,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await expect
    .poll(async () => (await server.api(data.key, 'GET', `/v1/templates/${created.body.id}`)).body.status, {
      timeout: 20_000,
    })
    .toBe('APPROVED');
  return created.body.id;
}

/** What the server stored for a broadcast: the shared fields it was given and the components it sends. */
async function storedBroadcast(id: string): Promise<{ audience_input: any; base_components: any }> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query('select audience_input, base_components from broadcasts where id = $1', [id]);
    return rows[0];
  } finally {
    await client.end();
  }
}

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
    // Its answer is awaited before the balance comes back: the alert on the page is still the first press's, and a
    // request still on its way when the balance is restored would be accepted.
    const answered = page.waitForResponse((response) => response.request() === creations[refused]);
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => creations.length).toBe(refused + 1);
    expect((await answered).status()).toBe(402);
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

  it('a limited-time offer: its header image, coupon, link suffix and the offer’s end in the organization’s timezone', async () => {
    await approvedTemplate('caribbean_offer', 'MARKETING', [
      { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2UvcG5n'] } },
      { type: 'LIMITED_TIME_OFFER', limited_time_offer: { text: 'Expiring offer!', has_expiration: true } },
      {
        type: 'BODY',
        text: 'Good news, {{1}}! Use code {{2}} to get 25% off all Caribbean packages!',
        example: { body_text: [['Pablo', 'CARIBE25']] },
      },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'COPY_CODE', example: 'CARIBE25' },
          {
            type: 'URL',
            text: 'Book now!',
            url: 'https://travel.example.com/offers?code={{1}}',
            example: ['https://travel.example.com/offers?code=n3mtql'],
          },
        ],
      },
    ]);
    await page.goto(`${server.baseUrl}/app/broadcasts/new`);
    await page.getByRole('heading', { level: 1, name: 'New broadcast' }).waitFor();
    await choose(/Template/, 'caribbean_offer (en_US, MARKETING)');
    const ends = page.getByLabel('Offer ends (America/Mexico_City time)');
    await ends.waitFor();
    await page.getByRole('textbox', { name: 'Countries' }).fill('MX');
    await page.getByRole('status').filter({ hasText: '1 contact matches' }).waitFor();
    await page.getByRole('textbox', { name: 'Header image URL' }).fill(`${filesUrl}/offer.png`);
    await page.getByRole('textbox', { name: 'Body {{1}}' }).fill('Ana');
    await page.getByRole('textbox', { name: 'Body {{2}}' }).fill('CARIBE25');
    await page.getByRole('textbox', { name: 'Link suffix of button 2' }).fill('mx-25');
    await page.getByRole('textbox', { name: 'Coupon code' }).fill('CARIBE25');

    // Without the offer's end: the API's missing_variables names `lto_expiration`, shown at that field.
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => ends.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').filter({ hasText: 'Some variables of the template are missing.' }).waitFor();

    const { date, nineThirtyUtc, label } = tomorrowInMexicoCity();
    await ends.fill(`${date}T09:30`);
    const preview = page.getByRole('region', { name: 'Preview' });
    await preview.getByText(`Expiring offer! (ends ${label})`).waitFor();
    await preview.getByText('Good news, Ana! Use code CARIBE25 to get 25% off all Caribbean packages!').waitFor();
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await page.getByRole('heading', { level: 1, name: 'Broadcast caribbean_offer' }).waitFor();

    const sent = JSON.parse(creations.at(-1)!.postData() ?? '{}');
    expect(sent).toMatchObject({
      header_media_url: `${filesUrl}/offer.png`,
      variables: { 'body.1': 'Ana', 'body.2': 'CARIBE25' },
      url_suffixes: { '1': 'mx-25' },
      coupon_code: 'CARIBE25',
      lto_expiration: nineThirtyUtc,
    });
    await expect.poll(() => page.locator('.card .badge').first().textContent(), { timeout: 20_000 }).toBe('completed');
    const id = new URL(page.url()).pathname.split('/').at(-1)!;
    const stored = await storedBroadcast(id);
    expect(stored.audience_input).toMatchObject({ coupon_code: 'CARIBE25' });
    // The components the broadcast sends carry the offer's end as the instant typed in Mexico City.
    expect(JSON.stringify(stored.base_components)).toContain(String(Date.parse(nineThirtyUtc)));
  });

  it('a carousel: each card’s media, body variables and link button, by card', async () => {
    const card = (text: string, format: string, button: string) => ({
      components: [
        { type: 'HEADER', format, example: { header_handle: ['4::aW1hZ2UvcG5n'] } },
        { type: 'BODY', text, example: { body_text: [['15OFF', '15%']] } },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Send more like this' },
            {
              type: 'URL',
              text: button,
              url: 'https://shop.example.com/p?code={{1}}',
              example: ['https://x/p?code=A'],
            },
          ],
        },
      ],
    });
    await approvedTemplate('fruit_carousel', 'MARKETING', [
      { type: 'BODY', text: 'Summer is here, {{1}}!', example: { body_text: [['Ana']] } },
      {
        type: 'CAROUSEL',
        cards: [
          card('Rare lemons. Use code {{1}} to get {{2}} off.', 'IMAGE', 'Buy lemons'),
          card('Exotic fruit. Use code {{1}} to get {{2}} off.', 'VIDEO', 'Buy fruit'),
        ],
      },
    ]);
    await page.goto(`${server.baseUrl}/app/broadcasts/new`);
    await page.getByRole('heading', { level: 1, name: 'New broadcast' }).waitFor();
    await choose(/Template/, 'fruit_carousel (en_US, MARKETING)');
    const first = page.getByRole('group', { name: 'Card 1' });
    const second = page.getByRole('group', { name: 'Card 2' });
    await first.waitFor();
    await page.getByRole('textbox', { name: 'Countries' }).fill('MX, BR');
    await page.getByRole('status').filter({ hasText: '2 contacts match' }).waitFor();
    await page.getByRole('textbox', { name: 'Body {{1}}', exact: true }).fill('amigos');
    await first.getByRole('textbox', { name: 'Card 1 image URL' }).fill(`${filesUrl}/lemons.png`);
    await first.getByRole('textbox', { name: 'Card 1 body {{1}}' }).fill('LEMON15');
    await first.getByRole('textbox', { name: 'Card 1 body {{2}}' }).fill('15%');
    await first.getByRole('textbox', { name: 'Card 1 link suffix of button 2' }).fill('lemons');
    await second.getByRole('textbox', { name: 'Card 2 body {{1}}' }).fill('FRUIT20');
    await second.getByRole('textbox', { name: 'Card 2 body {{2}}' }).fill('20%');
    await second.getByRole('textbox', { name: 'Card 2 link suffix of button 2' }).fill('fruit');
    await page
      .getByRole('list', { name: 'Cards' })
      .getByText('Rare lemons. Use code LEMON15 to get 15% off.')
      .waitFor();

    // The second card's video left out: missing_variables names `card.1.header.media`, shown at that field.
    const video = second.getByRole('textbox', { name: 'Card 2 video URL' });
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await expect.poll(() => video.getAttribute('aria-invalid')).toBe('true');
    expect(await first.getByRole('textbox', { name: 'Card 1 image URL' }).getAttribute('aria-invalid')).not.toBe(
      'true',
    );
    await video.fill(`${filesUrl}/fruit.mp4`);
    await checkPage(page, csp, 'New broadcast', 'broadcast-new-carousel');
    await screenshot(page, 'broadcast-new-carousel', { fullPage: true });
    await page.getByRole('button', { name: 'Send broadcast' }).click();
    await page.getByRole('heading', { level: 1, name: 'Broadcast fruit_carousel' }).waitFor();

    const sent = JSON.parse(creations.at(-1)!.postData() ?? '{}');
    expect(sent).toMatchObject({
      variables: {
        'body.1': 'amigos',
        'card.0.body.1': 'LEMON15',
        'card.0.body.2': '15%',
        'card.1.body.1': 'FRUIT20',
        'card.1.body.2': '20%',
      },
      url_suffixes: { 'card.0.button.1': 'lemons', 'card.1.button.1': 'fruit' },
      card_media_urls: { '0': `${filesUrl}/lemons.png`, '1': `${filesUrl}/fruit.mp4` },
    });
    await expect.poll(() => page.locator('.card .badge').first().textContent(), { timeout: 20_000 }).toBe('completed');
    await page.getByText('2 recipients').waitFor();
    const id = new URL(page.url()).pathname.split('/').at(-1)!;
    const components = JSON.stringify((await storedBroadcast(id)).base_components);
    for (const part of [`${filesUrl}/lemons.png`, `${filesUrl}/fruit.mp4`, 'LEMON15', 'FRUIT20', 'lemons', 'fruit'])
      expect(components).toContain(part);
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

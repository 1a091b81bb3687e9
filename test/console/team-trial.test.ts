// Two people at once on a TRIAL organization (decisions §17): an admin and an agent, each in their own browser
// context, while the integration's key spends the trial's 5 requests a second. Each person has a budget of their own
// (20 a second, D238); a read answered 429 is asked again after its Retry-After, quietly, and a refusal never replaces
// the page or its navigation (D239).
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { horizontalOverflow, launchChromium, openDesktopPage, seriousViolations, VIEWPORTS } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewPerson } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let data: Seeded;
let receiver: Server;
let receiverUrl: string;
const people: Record<'admin' | 'agent', { context: BrowserContext; page: Page; refused: string[] }> = {} as never;

/** Contacts who write in, so that the inbox lists several conversations. */
const WRITERS = Array.from({ length: 8 }, (_, index) => `+1555020${String(index).padStart(4, '0')}`);

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  [server, browser] = await Promise.all([startConsoleServer({ WEBHOOK_ALLOW_HOSTS: '127.0.0.1' }), launchChromium()]);
  data = await seed(server, { trial: true });
  for (const phone of WRITERS) {
    const inbound = await server.admin('POST', '/sandbox/inbound', {
      channel_id: data.channelId,
      from: phone,
      text: 'Hi',
    });
    if (inbound.status >= 300) throw new Error(`inbound: ${inbound.status}`);
  }
  for (const role of ['admin', 'agent'] as const) {
    const { context, page } = await openDesktopPage(browser);
    const refused: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 429) refused.push(new URL(response.url()).pathname);
    });
    await signInNewPerson(server, page, data.orgId, {
      email: `${role}@acme.example`,
      name: role === 'admin' ? 'Ada Admin' : 'Alex Agent',
      role,
    });
    people[role] = { context, page, refused };
  }
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

/** The integration at work: the key's trial budget spent for `ms`, whatever the people do. */
async function busyKey(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end)
    await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${server.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${data.key}` } }).then((r) => r.text()),
      ),
    );
}

/** Other tabs of the person in `context`: 30 loops spending their own budget, until `done()`; answers the 429s. */
async function busyPerson(context: BrowserContext, done: () => boolean, maxMs: number): Promise<number> {
  let refusals = 0;
  const end = Date.now() + maxMs;
  const loop = async () => {
    while (!done() && Date.now() < end) {
      const answer = await context.request.get(`${server.baseUrl}/app/api/v1/contacts?limit=1`);
      if (answer.status() === 429) refusals++;
    }
  };
  await Promise.all(Array.from({ length: 30 }, loop));
  return refusals;
}

const navigation = (page: Page) => page.getByRole('navigation', { name: 'Main' });

describe('two people on a trial organization', () => {
  it('work at once beside a busy integration: each has a budget of their own, no read is refused', async () => {
    const { admin, agent } = people;
    admin.refused.length = 0;
    agent.refused.length = 0;
    const key = busyKey(4000);
    const walk = async (page: Page) => {
      for (const [link, heading] of [
        ['Contacts', 'Contacts'],
        ['Inbox', 'Inbox'],
        ['Contacts', 'Contacts'],
        ['Inbox', 'Inbox'],
      ] as const) {
        await navigation(page).getByRole('link', { name: link }).click();
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      }
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Loading' }).count()).toBe(0);
    };
    await Promise.all([walk(admin.page), walk(agent.page)]);
    await key;
    expect(admin.refused).toEqual([]);
    expect(agent.refused).toEqual([]);
  });

  it('asks again quietly after a 429: the page and its navigation stay, never the sign-in lockout’s words', async () => {
    const { admin } = people;
    admin.refused.length = 0;
    let walked = false;
    // The other tabs stop once a read of the page met a 429 (30 loops spending the budget from the first
    // millisecond of every second would otherwise starve the page's own retries for as long as they run).
    const burning = busyPerson(admin.context, () => walked || admin.refused.length > 0, 20_000);
    // Pages reloaded and changed while the person's budget is spent, until one of the page's reads met a 429.
    for (let round = 0; round < 5 && admin.refused.length === 0; round++) {
      await admin.page.reload();
      await navigation(admin.page).getByRole('link', { name: 'Contacts' }).click();
      await admin.page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    }
    walked = true;
    expect(await burning).toBeGreaterThan(0);
    // The refused reads were asked again: the page is whole, with its navigation, and says nothing of attempts.
    await admin.page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await expect.poll(() => admin.page.getByRole('status').filter({ hasText: 'Loading' }).count()).toBe(0);
    await expect.poll(() => admin.page.getByRole('row').count()).toBeGreaterThan(1);
    expect(await navigation(admin.page).isVisible()).toBe(true);
    expect(await admin.page.getByRole('alert').count()).toBe(0);
    expect(await admin.page.getByText(/too many attempts/i).count()).toBe(0);
    expect(admin.refused.length, 'the page met the spent budget').toBeGreaterThan(0);
    expect(await seriousViolations(admin.page)).toEqual([]);
  });
});

describe('an import while the person’s budget is spent', () => {
  it('waits out a 429 and goes on to the end', async () => {
    const { admin } = people;
    await admin.page.goto(`${server.baseUrl}/app/contacts/import`);
    await admin.page.getByRole('heading', { level: 1, name: 'Import contacts' }).waitFor();
    const file = join(tmpdir(), `team-import-${Date.now()}.csv`);
    const rows = Array.from({ length: 250 }, (_, index) => `Person ${index},person${index}@import.example`);
    writeFileSync(file, `first_name,email\n${rows.join('\n')}\n`);
    const chooser = admin.page.waitForEvent('filechooser');
    await admin.page.getByRole('button', { name: 'Choose a CSV file' }).click();
    await (await chooser).setFiles(file);
    await admin.page.getByText(/Chosen: team-import/).waitFor();
    // The import's calls: its properties read (once, first), then its batches.
    const refusedCalls = () =>
      admin.refused.filter((path) => path.endsWith('/batch-upsert') || path.endsWith('/v1/properties')).length;
    admin.refused.length = 0;
    const burning = busyPerson(admin.context, () => refusedCalls() > 0, 15_000);
    // Started while the budget is being spent: a call of the import meets a 429 (the other tabs stop once one has).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await admin.page.getByRole('button', { name: 'Import', exact: true }).click();
    await burning;
    await admin.page.getByText('250 imported, 0 rejected. Done.').waitFor();
    expect(refusedCalls(), 'a call of the import met the spent budget').toBeGreaterThan(0);
    expect(await admin.page.getByRole('alert').count()).toBe(0);
  });
});

describe('a conversation, for two people on a trial organization', () => {
  const conversationOf = async (phone: string) => {
    const page = await server.api(data.key, 'GET', '/v1/conversations?limit=100');
    for (const conversation of page.body.items) {
      const messages = await server.api(data.key, 'GET', `/v1/conversations/${conversation.id}/messages?limit=1`);
      if (messages.body.items[0]?.phone === phone) return conversation.id as string;
    }
    throw new Error(`no conversation with ${phone}`);
  };
  const row = (page: Page, name: string | RegExp) =>
    page.getByRole('navigation', { name: 'Conversations' }).getByRole('link', { name });

  it('shows the text the contact received from a template, not only its name', async () => {
    const { admin } = people;
    await admin.page.goto(`${server.baseUrl}/app/inbox/${data.conversationId}`);
    await admin.page.getByRole('heading', { level: 2, name: 'Ana García' }).waitFor();
    await admin.page
      .getByRole('list', { name: 'Messages' })
      .getByText('Hello Ana, your order is on its way.')
      .waitFor();
    expect(await admin.page.getByText(/^Template order_update$/).count()).toBe(0);
  });

  it('reads messages arriving in the conversation on screen: no unread for it, in the list or the API', async () => {
    const { agent } = people;
    const phone = WRITERS[1] as string;
    const id = await conversationOf(phone);
    await agent.page.goto(`${server.baseUrl}/app/inbox/${id}`);
    await agent.page.getByRole('heading', { level: 2, name: phone }).waitFor();
    for (const text of ['Is it in stock?', 'And in blue?', 'Thanks!']) {
      await server.admin('POST', '/sandbox/inbound', { channel_id: data.channelId, from: phone, text });
      await agent.page.getByRole('list', { name: 'Messages' }).getByText(text).waitFor();
      await expect
        .poll(async () => (await server.api(data.key, 'GET', `/v1/conversations/${id}`)).body.unread_count)
        .toBe(0);
      expect(await row(agent.page, new RegExp(phone.replace('+', '\\+'))).textContent()).not.toMatch(/unread/);
    }
  });

  it('at 390×844 shows the list and a conversation as separate views, with a way back', async () => {
    const { agent } = people;
    await agent.page.setViewportSize(VIEWPORTS.phone);
    try {
      await agent.page.goto(`${server.baseUrl}/app/inbox`);
      const list = agent.page.getByRole('navigation', { name: 'Conversations' });
      await list.waitFor();
      await row(agent.page, /Ana García/).click();
      const heading = agent.page.getByRole('heading', { level: 2, name: 'Ana García' });
      await heading.waitFor();
      expect(await list.isVisible()).toBe(false);
      // The conversation opens where the person looks, not below the list.
      expect((await heading.boundingBox())?.y ?? Number.POSITIVE_INFINITY).toBeLessThan(VIEWPORTS.phone.height);
      await expect.poll(() => horizontalOverflow(agent.page)).toBe(0);
      expect(await seriousViolations(agent.page)).toEqual([]);
      await agent.page.getByRole('link', { name: 'All conversations' }).click();
      await list.waitFor();
      expect(await heading.count()).toBe(0);
      await expect.poll(() => horizontalOverflow(agent.page)).toBe(0);
    } finally {
      await agent.page.setViewportSize(VIEWPORTS.desktop);
    }
  });

  it('says why a media URL was refused', async () => {
    const { admin } = people;
    const id = await conversationOf(WRITERS[2] as string);
    await admin.page.goto(`${server.baseUrl}/app/inbox/${id}`);
    await admin.page.getByRole('button', { name: 'Attach a file by URL' }).click();
    await admin.page.getByRole('textbox', { name: 'File URL' }).fill('http://127.0.0.1:9/photo.png');
    await admin.page.getByRole('button', { name: 'Send reply' }).click();
    const refusal = admin.page.getByRole('alert').filter({ hasText: 'could not be fetched' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/could not be fetched: \S.+/);
  });
});

describe('the inbox list', () => {
  it('shows each contact’s name and the last message’s preview at once, with no request per row', async () => {
    const { agent } = people;
    const perRow: string[] = [];
    const listen = (request: { url(): string }) => {
      const path = new URL(request.url()).pathname;
      if (/^\/app\/api\/v1\/(contacts|conversations)\/[^/]+$/.test(path)) perRow.push(path);
    };
    agent.page.on('request', listen);
    try {
      await agent.page.goto(`${server.baseUrl}/app/inbox`);
      const list = agent.page.getByRole('navigation', { name: 'Conversations' });
      const ana = list.getByRole('link', { name: /Ana García/ });
      await ana.waitFor();
      const newest = (await server.api(data.key, 'GET', `/v1/conversations/${data.conversationId}`)).body.last_message;
      expect(await ana.textContent()).toContain(newest.text);
      expect(await list.getByRole('link').count()).toBe(WRITERS.length + 1);
      for (const phone of WRITERS) await list.getByRole('link', { name: new RegExp(`\\${phone}`) }).waitFor();
      await expect.poll(() => agent.page.getByRole('status').filter({ hasText: 'Loading' }).count()).toBe(0);
      expect(perRow).toEqual([]);
      expect(await seriousViolations(agent.page)).toEqual([]);
    } finally {
      agent.page.off('request', listen);
    }
  });
});

describe('elsewhere, as an admin of a trial organization', () => {
  const go = async (path: string, heading: string | RegExp) => {
    await people.admin.page.goto(`${server.baseUrl}/app${path}`);
    await people.admin.page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  it('loads without React Router’s HydrateFallback warning', async () => {
    const messages: string[] = [];
    const page = await people.admin.context.newPage();
    page.on('console', (message) => messages.push(message.text()));
    await page.goto(`${server.baseUrl}/app/contacts`);
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await page.close();
    expect(messages.filter((text) => /HydrateFallback/.test(text))).toEqual([]);
  });

  it('follows a test ping in the deliveries log without a reload', async () => {
    const created = await server.api(data.key, 'POST', '/v1/webhook-endpoints', {
      url: receiverUrl,
      events: ['contact.created'],
    });
    expect(created.status).toBe(201);
    await go(`/developers/webhooks/${created.body.id}`, 'Webhook endpoint');
    await people.admin.page.getByRole('button', { name: 'Send test ping' }).click();
    await people.admin.page.getByRole('row', { name: /ping/ }).getByText('succeeded').waitFor();
  });

  it('names each recipient with a link to the contact, and a failure’s reason in words beside its code', async () => {
    const { page } = people.admin;
    await go(`/broadcasts/${data.broadcastId}`, /^Broadcast/);
    await page.getByRole('row', { name: /0404/ }).getByText('Not on the chat network (not_on_network)').waitFor();
    await page.getByRole('link', { name: 'Ana García' }).click();
    await page.getByRole('heading', { level: 1, name: 'Ana García' }).waitFor();
  });

  it('searches contacts as the person types, without Enter', async () => {
    const { page } = people.admin;
    await go('/contacts', 'Contacts');
    await page.getByRole('searchbox', { name: 'Search' }).pressSequentially('Chlo');
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    await page.getByRole('rowheader', { name: 'Chloé Martin' }).waitFor();
  });

  it('suggests a property’s key from its label until the key is edited, and says what a key must be in words', async () => {
    const { page } = people.admin;
    await go('/settings', 'Settings');
    const section = page.getByRole('region', { name: 'Custom properties' });
    const label = section.getByRole('textbox', { name: 'Label' });
    const key = section.getByRole('textbox', { name: 'Key' });
    await label.fill('Favourite colour');
    expect(await key.inputValue()).toBe('favourite_colour');
    await label.fill('Ação 2');
    expect(await key.inputValue()).toBe('acao_2');
    await key.fill('2 Bad Key');
    await label.fill('Another label');
    expect(await key.inputValue()).toBe('2 Bad Key');
    await section.getByRole('button', { name: 'Create property' }).click();
    const refusal = section.getByText(/Start with a lower-case letter/);
    await refusal.waitFor();
    expect(await section.getByText(/should match pattern/).count()).toBe(0);
  });

  it('invites a person by name, and issues a new sign-in link that works', async () => {
    const { page } = people.admin;
    await go('/settings', 'Settings');
    const users = page.getByRole('region', { name: 'Users' });
    await users.getByRole('textbox', { name: 'Name of the new user' }).fill('Bea Agent');
    await users.getByRole('textbox', { name: 'Email of the new user' }).fill('bea@acme.example');
    await users.getByRole('button', { name: 'Invite user' }).click();
    await users.getByText('Bea Agent').waitFor();
    await users.getByRole('button', { name: 'New sign-in link for bea@acme.example' }).click();
    await users.getByText(/Sign-in link for bea@acme\.example/).waitFor();
    const link = (await users.locator('.secret').textContent())?.trim() ?? '';
    expect(link).toMatch(new RegExp(`^${server.baseUrl}/app/set-password#token=`));
    const other = await browser.newContext();
    const theirs = await other.newPage();
    await theirs.goto(link);
    await theirs.getByLabel('New password').waitFor();
    await other.close();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('offers a template’s language from the platform’s list, by name', async () => {
    const { page } = people.admin;
    await go('/templates/new', 'New template');
    expect(await page.getByRole('textbox', { name: 'Language' }).count()).toBe(0);
    await page.getByRole('button', { name: /Language/ }).click();
    await page.getByRole('option', { name: 'Portuguese (Brazil) (pt_BR)' }).click();
    await page
      .getByRole('button', { name: /Language/ })
      .filter({ hasText: 'Portuguese (Brazil)' })
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });
});

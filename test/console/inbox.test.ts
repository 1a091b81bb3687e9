// The inbox's conversation in Chromium (decisions §15, §17 flow 2), as an agent reads and answers it: the window's
// state in the organization's timezone while the browser is in another; the composer (Enter sends, Shift+Enter a new
// line; one Idempotency-Key per body, so a retry after a lost answer sends once); replies moving sending → read and a
// failure's reason live; inbound images shown (fetched with the session as a blob) and documents downloaded by name;
// a reply's quote; the window closing (the server's 409 as a sentence, then a template by its variables, a 422 at its
// field and a 402 as a sentence); an unknown conversation's error state; axe and 390×844 on the open conversation.
import { crc32, deflateSync } from 'node:zlib';
import pg from 'pg';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, openDesktopPage, screenshot, seriousViolations } from './browser.ts';
import { type FileHost, startFileHost } from './files.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { signInNewAdmin } from './sign-in.ts';

/** A real 160×100 PNG (a gradient), so the browser decodes it and the screenshot shows it. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows: number[] = [];
  for (let y = 0; y < height; y++) {
    rows.push(0);
    for (let x = 0; x < width; x++)
      rows.push(40 + Math.round((x / width) * 180), 90, 200 - Math.round((y / height) * 120));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
const PHOTO = png(160, 100);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 3)]);

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let data: Seeded;
let csp: string[];
let files: FileHost;
let filesUrl: string;
const replies: Request[] = [];
const ANA = '+5215512345678';

beforeAll(async () => {
  files = await startFileHost((path) => {
    if (path === '/photo.png') return { type: 'image/png', body: PHOTO };
    if (path === '/invoice') return { type: 'application/pdf', body: PDF };
    return undefined;
  });
  filesUrl = files.url;
  [server, browser] = await Promise.all([
    startConsoleServer({ MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1' }),
    launchChromium(),
  ]);
  data = await seed(server);
  // The browser is in Berlin, the organization in Mexico City: every time shown is Mexico City's.
  ({ page, csp } = await openDesktopPage(browser));
  page.on('request', (request) => {
    if (
      request.method() === 'POST' &&
      /\/app\/api\/v1\/conversations\/[^/]+\/messages$/.test(new URL(request.url()).pathname)
    )
      replies.push(request);
  });
  await signInNewAdmin(server, page, data.orgId, 'agent@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await files?.close();
});

const mexicoCity = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'America/Mexico_City',
  dateStyle: 'medium',
  timeStyle: 'short',
});

async function messagesOf(conversationId: string): Promise<any[]> {
  return (await server.api(data.key, 'GET', `/v1/conversations/${conversationId}/messages?limit=100`)).body.items;
}

const inbound = (body: Record<string, unknown>) =>
  server.admin('POST', '/sandbox/inbound', { channel_id: data.channelId, from: ANA, ...body });

/** A day passes for one conversation on the server: its customer-service window closes. */
async function closeWindow(conversationId: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    await client.query(`update conversations set last_inbound_at = now() - interval '25 hours' where id = $1`, [
      conversationId,
    ]);
  } finally {
    await client.end();
  }
}

/** The conversation that holds a message with this text. */
async function conversationWith(text: string): Promise<string> {
  const conversations = (await server.api(data.key, 'GET', '/v1/conversations?limit=100')).body.items as any[];
  const theirs = [];
  for (const conversation of conversations)
    if ((await messagesOf(conversation.id)).some((m) => m.text === text)) theirs.push(conversation.id);
  expect(theirs).toHaveLength(1);
  return theirs[0];
}

const composer = () => page.getByRole('textbox', { name: 'Message' });
const messageList = () => page.getByRole('list', { name: 'Messages' });
const keyOf = (request: Request) => request.headers()['idempotency-key'];

describe('the inbox: reading and answering a conversation', { timeout: 60_000 }, () => {
  it('an unknown conversation shows its error state with a way to try again', async () => {
    await page.goto(`${server.baseUrl}/app/inbox/cv_does_not_exist`);
    await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'It no longer exists' }).waitFor();
    await page.getByRole('button', { name: 'Try again' }).waitFor();
  });

  it('shows the window open until its end in the organization’s timezone; Enter sends, Shift+Enter is a new line; the reply moves to read live', async () => {
    await page.goto(`${server.baseUrl}/app/inbox/${data.conversationId}`);
    await page.getByRole('heading', { level: 2, name: 'Ana García' }).waitFor();
    const conversation = (await server.api(data.key, 'GET', `/v1/conversations/${data.conversationId}`)).body;
    await page.getByText(`Window open until ${mexicoCity.format(new Date(conversation.window_expires_at))}`).waitFor();
    const origin = await page.evaluate(() => performance.timeOrigin);

    // The keyboard alone: focus the box, two lines, Enter.
    await composer().focus();
    await page.keyboard.type('Line one');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('Line two');
    expect(await composer().inputValue()).toBe('Line one\nLine two');
    const before = replies.length;
    await page.keyboard.press('Enter');
    await expect.poll(() => composer().inputValue()).toBe('');
    expect(replies.length - before).toBe(1);
    expect(JSON.parse(replies.at(-1)!.postData() ?? '{}')).toEqual({ type: 'text', text: 'Line one\nLine two' });
    const stored = (await messagesOf(data.conversationId)).find((m) => m.text === 'Line one\nLine two');
    expect(stored).toMatchObject({ direction: 'outbound', sender: 'agent' });

    // sending → sent → delivered → read, from the stream, without reloading.
    const item = messageList().getByRole('listitem').filter({ hasText: 'Line two' });
    await expect.poll(() => item.textContent(), { timeout: 15_000 }).toMatch(/Ada Admin · .* · read/);
    expect(await page.evaluate(() => performance.timeOrigin)).toBe(origin);
    // Enter on an empty box sends nothing.
    await composer().focus();
    await page.keyboard.press('Enter');
    expect(replies.length - before).toBe(1);
  });

  it('a retry after a lost answer sends the same Idempotency-Key (one message); a new body gets a new key', async () => {
    // The server gets the first request and answers it, but the browser never sees the answer.
    let lost = false;
    await page.route('**/app/api/v1/conversations/*/messages', async (route) => {
      if (lost || route.request().method() !== 'POST') return route.continue();
      lost = true;
      await route.fetch();
      await route.abort('failed');
    });
    const before = replies.length;
    await composer().fill('¿Le llegó el paquete?');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The server cannot be reached. Try again.' }).waitFor();
    expect(await composer().inputValue()).toBe('¿Le llegó el paquete?');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await expect.poll(() => composer().inputValue()).toBe('');
    await page.unroute('**/app/api/v1/conversations/*/messages');
    const [first, second] = replies.slice(before).map(keyOf);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toBe(first);
    const sent = (await messagesOf(data.conversationId)).filter((m) => m.text === '¿Le llegó el paquete?');
    expect(sent).toHaveLength(1);

    // The same words again after it was accepted are a new message, with a new key.
    await composer().fill('¿Le llegó el paquete?');
    await page.keyboard.press('Enter');
    await expect.poll(() => composer().inputValue()).toBe('');
    expect(keyOf(replies.at(-1)!)).not.toBe(first);
    await expect
      .poll(
        async () => (await messagesOf(data.conversationId)).filter((m) => m.text === '¿Le llegó el paquete?').length,
      )
      .toBe(2);
  });

  it('attaches a file by URL from a named disclosure the keyboard opens; the reply carries it', async () => {
    const trigger = page.getByRole('button', { name: 'Attach a file by URL' });
    expect(await trigger.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByRole('textbox', { name: 'File URL' }).isVisible()).toBe(false);
    await trigger.focus();
    await page.keyboard.press('Enter');
    expect(await trigger.getAttribute('aria-expanded')).toBe('true');
    // The panel is the region the button controls, named by it.
    const panel = page.getByRole('group', { name: 'Attach a file by URL' });
    expect(await trigger.getAttribute('aria-controls')).toBe(await panel.getAttribute('id'));
    await page.keyboard.press('Tab');
    await page.keyboard.type(`${filesUrl}/photo.png`);
    expect(await page.getByRole('textbox', { name: 'File URL' }).inputValue()).toBe(`${filesUrl}/photo.png`);
    await page.getByRole('textbox', { name: 'Caption' }).fill('Le envío la foto del paquete');
    const before = replies.length;
    await page.getByRole('button', { name: 'Send reply' }).click();
    // One send (sent again, same body and key, if the organization's budget answered 429: D154).
    await expect.poll(() => replies.length - before).toBeGreaterThanOrEqual(1);
    expect(new Set(replies.slice(before).map(keyOf)).size).toBe(1);
    expect(JSON.parse(replies.at(-1)!.postData() ?? '{}')).toEqual({
      type: 'image',
      media_url: `${filesUrl}/photo.png`,
      caption: 'Le envío la foto del paquete',
    });
    // Sent: the fields are empty and the disclosure closed again; Space opens it as Enter did.
    await expect.poll(() => trigger.getAttribute('aria-expanded')).toBe('false');
    await composer().waitFor();
    await expect
      .poll(async () =>
        (await messagesOf(data.conversationId)).some((m) => m.media?.caption === 'Le envío la foto del paquete'),
      )
      .toBe(true);
    await trigger.focus();
    await page.keyboard.press('Space');
    expect(await trigger.getAttribute('aria-expanded')).toBe('true');
    expect(await page.getByRole('textbox', { name: 'File URL' }).inputValue()).toBe('');
    await page.keyboard.press('Space');
    expect(await trigger.getAttribute('aria-expanded')).toBe('false');
  });

  it('attaches an image from the computer (D294): its name, size and type shown, a refusal at the field, then sent', async () => {
    const input = page.locator('input[type="file"]');
    const picker = page.getByRole('button', { name: 'Attach a file from the computer' });
    await picker.waitFor();
    // A file the platform does not take: the server's refusal, at the file's field; nothing is attached.
    await input.setInputFiles({ name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<html></html>') });
    await page
      .getByRole('alert')
      .filter({ hasText: 'page.html: The file is not of a kind that can be sent' })
      .waitFor();
    // The photo: uploaded as it is picked, then shown by name, size and type.
    await input.setInputFiles({ name: 'paquete.png', mimeType: 'image/png', buffer: PHOTO });
    await page.getByText(`Attached: paquete.png · ${Math.round(PHOTO.length / 1024)} KB · image/png`).waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'page.html' }).count()).toBe(0);
    await page.getByRole('textbox', { name: 'Caption' }).fill('La foto desde mi computadora');
    const before = replies.length;
    await page.getByRole('button', { name: 'Send reply' }).click();
    await expect.poll(() => replies.length - before).toBeGreaterThanOrEqual(1);
    const sent = JSON.parse(replies.at(-1)!.postData() ?? '{}');
    expect(sent).toEqual({
      type: 'image',
      file_id: expect.stringMatching(/^file_/),
      caption: 'La foto desde mi computadora',
    });
    // Sent: nothing attached any more; the platform took it, and the message's file is the photo's bytes.
    await expect.poll(() => page.getByText('Attached: paquete.png').count()).toBe(0);
    await expect
      .poll(async () => (await messagesOf(data.conversationId)).find((m) => m.media?.file_id === sent.file_id)?.status)
      .toMatch(/^(sent|delivered|read)$/);
    const message = (await messagesOf(data.conversationId)).find((m) => m.media?.file_id === sent.file_id);
    expect(message.media).toMatchObject({ mime_type: 'image/png', filename: 'paquete.png', url: null });
    const bytes = await fetch(
      `${server.baseUrl}/v1/conversations/${data.conversationId}/messages/${message.id}/media`,
      { headers: { authorization: `Bearer ${data.key}` } },
    );
    expect(Buffer.compare(Buffer.from(await bytes.arrayBuffer()), PHOTO)).toBe(0);
  });

  it('shows an inbound image, offers a document by its name, and quotes the message a reply answers', async () => {
    // The conversation is still open from the tests above: the three messages arrive live, in one burst.
    const first = (await messagesOf(data.conversationId)).find((m) => m.text === 'Hola, ¿dónde está mi pedido?');
    expect(
      (await inbound({ type: 'image', media_url: `${filesUrl}/photo.png`, caption: 'Así llegó la caja' })).status,
    ).toBe(200);
    expect(
      (await inbound({ type: 'document', media_url: `${filesUrl}/invoice`, filename: 'Factura 0042.pdf' })).status,
    ).toBe(200);
    expect(
      (await inbound({ text: 'Esto es lo que pedí', reply_to_platform_message_id: first.platform_message_id })).status,
    ).toBe(200);

    const image = page.getByRole('img', { name: 'Image: Así llegó la caja' });
    await image.waitFor();
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    await expect
      .poll(() => image.evaluate((element) => (element as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(160);

    const download = page.getByRole('link', { name: 'Download Factura 0042.pdf' });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(file.suggestedFilename()).toBe('Factura 0042.pdf');

    const reply = messageList().getByRole('listitem').filter({ hasText: 'Esto es lo que pedí' });
    await reply.locator('blockquote').filter({ hasText: 'Hola, ¿dónde está mi pedido?' }).waitFor();

    await composer().fill('Gracias, lo revisamos.');
    await checkPage(page, csp, 'Inbox', 'inbox-reply');
    await screenshot(page, 'inbox-reply', { fullPage: true });
  });

  it('a reply the platform refuses shows its failure as a sentence with the platform’s message, live', async () => {
    // The seed's broadcast failed to +15550100404 (not on the network); that phone writes in, and the answer fails.
    expect((await inbound({ from: '+15550100404', text: 'hello?' })).status).toBe(200);
    const theirs = await conversationWith('hello?');
    await page.goto(`${server.baseUrl}/app/inbox/${theirs}`);
    await messageList().getByText('hello?').waitFor();
    await composer().fill('Hi! How can we help?');
    await page.keyboard.press('Enter');
    const item = messageList().getByRole('listitem').filter({ hasText: 'Hi! How can we help?' });
    await item.getByText('This number is not on the messaging network', { exact: false }).waitFor({ timeout: 15_000 });
    const failed = (await messagesOf(theirs)).find((m) => m.text === 'Hi! How can we help?');
    expect(failed).toMatchObject({ status: 'failed', error: 'not_on_network' });
    expect(failed.error_message).toBeTruthy();
    await item.getByText(failed.error_message, { exact: false }).waitFor();
    expect(await item.textContent()).toMatch(/Ada Admin · .* · failed/);
  });

  it('when the window has closed: the 409 as a sentence, then a template by its variables (422 at its field, 402 as a sentence)', async () => {
    await page.goto(`${server.baseUrl}/app/inbox/${data.conversationId}`);
    await composer().waitFor();
    // A day passes on the server while the page still shows the window open.
    await closeWindow(data.conversationId);
    await composer().fill('¿Sigue ahí?');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The 24-hour window has closed' }).waitFor();
    const form = page.getByRole('form', { name: 'Send a template' });
    await form.waitFor();
    await page.getByText(/^Window closed since .*: only a template can be sent\.$/).waitFor();
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('link', { name: /Ana García/ })
      .filter({ hasText: 'Closed' })
      .waitFor();
    expect((await messagesOf(data.conversationId)).some((m) => m.text === '¿Sigue ahí?')).toBe(false);

    await page.getByRole('button', { name: /Template/ }).click();
    await page.getByRole('option', { name: 'order_update (en_US, UTILITY)' }).click();
    const variable = form.getByRole('textbox', { name: 'Body {{1}}' });
    await variable.waitFor();
    await form.getByText('Hello {{1}}, your order is on its way.').waitFor();
    // Without its variable: the API's missing_variables at the field.
    await form.getByRole('button', { name: 'Send template' }).click();
    await expect.poll(() => variable.getAttribute('aria-invalid')).toBe('true');
    await form.getByRole('alert').filter({ hasText: 'Some variables of the template are missing.' }).waitFor();
    await variable.fill('Ana');
    await form.getByText('Hello Ana, your order is on its way.').waitFor();
    await checkPage(page, csp, 'Inbox', 'inbox-template-reply');
    await screenshot(page, 'inbox-template-reply', { fullPage: true });

    // No balance: the 402 as a sentence the agent can act on; nothing is sent.
    const account = await server.admin('GET', `/messaging-accounts/${data.accountId}`);
    await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, { balance: 0 });
    const before = replies.length;
    await form.getByRole('button', { name: 'Send template' }).click();
    await form.getByRole('alert').filter({ hasText: 'The messaging balance is too low for this send.' }).waitFor();
    await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, { balance: account.body.balance });
    // Pressed again with the same body: the same key (a refusal releases it for the retry), and now it is sent.
    await form.getByRole('button', { name: 'Send template' }).click();
    await expect.poll(() => replies.length - before).toBeGreaterThanOrEqual(2);
    expect(new Set(replies.slice(before).map(keyOf)).size).toBe(1);
    await expect
      .poll(async () =>
        (await messagesOf(data.conversationId)).some((m) => m.type === 'template' && m.sender === 'agent'),
      )
      .toBe(true);
    await messageList()
      .getByRole('listitem')
      // The text the contact received (D240), not only the template's name.
      .filter({ hasText: 'your order is on its way.' })
      .filter({ hasText: 'Ada Admin' })
      .first()
      .waitFor();
    // Sent: the form is empty again and the window's refusal is gone.
    await expect.poll(() => page.getByRole('alert').count()).toBe(0);
    await form.getByRole('button', { name: 'Send template' }).waitFor();
    expect(await form.getByRole('button', { name: 'Send template' }).isDisabled()).toBe(true);
  });
  it('a long conversation: its 50 newest first, "Load older messages" by the keyboard keeps the place and moves focus just above; live messages still arrive', async () => {
    const BETO = '+5215577770000';
    for (let i = 1; i <= 60; i++) expect((await inbound({ from: BETO, text: `Mensaje ${i}` })).status).toBe(200);
    const id = await conversationWith('Mensaje 1');
    await page.goto(`${server.baseUrl}/app/inbox/${id}`);
    const items = messageList().getByRole('listitem');
    const message = (n: number) => items.filter({ has: page.getByText(`Mensaje ${n}`, { exact: true }) });
    await message(60).waitFor();
    expect(await items.count()).toBe(50);
    expect(await message(11).count()).toBe(1);
    expect(await message(10).count()).toBe(0);

    const button = page.getByRole('button', { name: 'Load older messages' });
    await button.focus();
    const before = (await message(11).boundingBox())!.y;
    await page.keyboard.press('Enter');
    await expect.poll(() => items.count()).toBe(60);
    await message(1).waitFor({ state: 'attached' });
    // The message that was the oldest shown stays where it was (give or take the focused message brought into view),
    // and focus is on the newest of the older ones, just above it.
    const after = (await message(11).boundingBox())!.y;
    expect(Math.abs(after - before), `moved from ${before} to ${after}`).toBeLessThan(150);
    await expect
      .poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.dataset?.messageId))
      .toBe(await message(10).getAttribute('data-message-id'));
    // All 60 are shown: no more to load.
    expect(await button.count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    // A new message arrives live at the bottom; the older ones stay.
    expect((await inbound({ from: BETO, text: 'Mensaje 61' })).status).toBe(200);
    await message(61).waitFor();
    expect(await items.count()).toBe(61);
    expect(await message(1).count()).toBe(1);
    const texts = await items.locator('.message-text').allTextContents();
    expect(texts.slice(0, 2)).toEqual(['Mensaje 1', 'Mensaje 2']);
    expect(texts.at(-1)).toBe('Mensaje 61');
  });

  it('a template outside the window when the account’s 24-hour limit is used up: the 409 as a sentence, nothing sent', async () => {
    const id = await conversationWith('Mensaje 61');
    await closeWindow(id);
    const account = await server.admin('GET', `/messaging-accounts/${data.accountId}`);
    expect(
      (await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, { messaging_limit_24h: 0 })).status,
    ).toBe(200);
    try {
      await page.goto(`${server.baseUrl}/app/inbox/${id}`);
      const form = page.getByRole('form', { name: 'Send a template' });
      await form.waitFor();
      await page.getByRole('button', { name: /Template/ }).click();
      await page.getByRole('option', { name: 'order_update (en_US, UTILITY)' }).click();
      await form.getByRole('textbox', { name: 'Body {{1}}' }).fill('Beto');
      const before = replies.length;
      await form.getByRole('button', { name: 'Send template' }).click();
      await form
        .getByRole('alert')
        .filter({
          hasText:
            'The 24-hour messaging limit is reached: no more conversations can be started with a template until it frees up.',
        })
        .waitFor();
      expect(replies.length - before).toBe(1);
      expect((await messagesOf(id)).some((m) => m.type === 'template')).toBe(false);
      // The form keeps what was typed, for when the limit frees up.
      expect(await form.getByRole('textbox', { name: 'Body {{1}}' }).inputValue()).toBe('Beto');
    } finally {
      await server.admin('PATCH', `/messaging-accounts/${data.accountId}`, {
        messaging_limit_24h: account.body.messaging_limit_24h,
      });
    }
  });
});

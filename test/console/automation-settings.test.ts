// decisions §20 in the console, as a person does it in Chromium: an admin sets business hours (a 422 at its row),
// creates a rule (a 422 at its condition's row, then saved and listed), sets up the assistant with an FAQ and tries
// it (the sandbox provider answers from the FAQs with no model); in the inbox the assistant's message is marked and
// "Suggest a reply" fills the reply box; an agent cannot reach these settings. Every page axe-clean at 1280×800 and
// 390×844.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, openDesktopPage, VIEWPORTS } from './browser.ts';
import { type Seeded, seed } from './seed.ts';
import { type ConsoleServer, startConsoleServer } from './server.ts';
import { PASSWORD, signInNewAdmin } from './sign-in.ts';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let csp: string[];
let data: Seeded;
let teamId: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startConsoleServer({ AI_PROVIDER: 'sandbox', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' }),
    launchChromium(),
  ]);
  data = await seed(server);
  const team = await server.api(data.key, 'POST', '/v1/teams', { name: 'Support' });
  if (team.status !== 201) throw new Error(`team: ${team.status} ${JSON.stringify(team.body)}`);
  teamId = team.body.id;
  ({ page, csp } = await openDesktopPage(browser));
  await signInNewAdmin(server, page, data.orgId, 'ada@acme.example');
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Settings, then one of its pages from the settings' own navigation. */
async function settings(section: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: section }).click();
  await page.getByRole('heading', { level: 1, name: section }).waitFor();
}

/** A switch turned from the keyboard, as a person does. */
async function toggle(control: Locator) {
  await control.focus();
  await page.keyboard.press('Space');
}

const api = (method: string, path: string, body?: unknown) => server.api(data.key, method, path, body);

describe('automation and the assistant in the console', { timeout: 90_000 }, () => {
  it('business hours: a close before its open is refused at its row; the week, a day twice, and the away message are saved', async () => {
    await settings('Business hours');
    await page.getByText('America/Mexico_City').waitFor();
    await toggle(page.getByRole('switch', { name: 'Business hours enabled' }));
    await page.getByRole('button', { name: 'Add opening hours' }).click();
    await page.getByRole('button', { name: 'Add opening hours' }).click();
    await page.getByRole('button', { name: 'Add opening hours' }).click();
    // The second row on the same day as the first: Monday morning and afternoon.
    await page.getByRole('button', { name: /Day 2/ }).click();
    await page.getByRole('option', { name: 'Monday' }).click();
    await page.getByRole('textbox', { name: 'Opens 1' }).fill('09:00');
    await page.getByRole('textbox', { name: 'Closes 1' }).fill('12:30');
    await page.getByRole('textbox', { name: 'Opens 2' }).fill('14:00');
    await page.getByRole('textbox', { name: 'Closes 2' }).fill('13:00');
    await page.getByRole('button', { name: 'Remove opening hours 3' }).click();
    await page.getByRole('textbox', { name: 'Away message' }).fill('We are closed now; we answer from 09:00.');
    await page.getByRole('button', { name: 'Save business hours' }).click();
    const close2 = page.getByRole('textbox', { name: 'Closes 2' });
    await expect.poll(() => close2.getAttribute('aria-invalid')).toBe('true');
    await page.getByText('Close must be after open.').waitFor();
    expect((await api('GET', '/v1/business-hours')).body.enabled).toBe(false);

    await close2.fill('18:00');
    await page.getByRole('button', { name: 'Save business hours' }).click();
    await page.getByRole('status').filter({ hasText: 'Business hours saved.' }).waitFor();
    expect((await api('GET', '/v1/business-hours')).body).toEqual({
      enabled: true,
      week: [
        { day: 'mon', open: '09:00', close: '12:30' },
        { day: 'mon', open: '14:00', close: '18:00' },
      ],
      away_message: { text: 'We are closed now; we answer from 09:00.' },
    });
    await page.reload();
    await page.getByRole('textbox', { name: 'Closes 2' }).waitFor();
    expect(await page.getByRole('textbox', { name: 'Closes 2' }).inputValue()).toBe('18:00');
    await checkPage(page, csp, 'Business hours', 'settings-business-hours');
  });

  it('rules: a pattern that does not compile is refused at its row; the rule created runs on a contact message, its runs in words; listed, switched off and moved', async () => {
    await settings('Rules');
    await page.getByText('No rules yet.').waitFor();
    await page.getByRole('link', { name: 'New rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'New rule' }).waitFor();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByRole('textbox', { name: 'Rule name' }).fill('Prices');
    await form.getByRole('button', { name: 'Add a condition' }).click();
    await form.getByRole('button', { name: /Condition 1 operator/ }).click();
    await page.getByRole('option', { name: 'matches the pattern' }).click();
    await form.getByRole('textbox', { name: 'Condition 1 value' }).fill('(price');
    await form.getByRole('textbox', { name: 'Action 1 text' }).fill('Our prices are on acme.example/prices.');
    await form.getByRole('button', { name: 'Add an action' }).click();
    await form.getByRole('button', { name: /Action 2$/ }).click();
    await page.getByRole('option', { name: 'Add labels' }).click();
    await form.getByRole('textbox', { name: 'Action 2 labels' }).fill('pricing, sales');
    await form.getByRole('button', { name: 'Add an action' }).click();
    await form.getByRole('button', { name: /Action 3$/ }).click();
    await page.getByRole('option', { name: 'Set the priority' }).click();
    await form.getByRole('button', { name: /Action 3 priority/ }).click();
    await page.getByRole('option', { name: 'High' }).click();
    await form.getByRole('button', { name: 'Add an action' }).click();
    await form.getByRole('button', { name: /Action 4$/ }).click();
    await page.getByRole('option', { name: 'Give to a team' }).click();
    await form.getByRole('button', { name: /Action 4 team/ }).click();
    await page.getByRole('option', { name: 'Support' }).click();
    // Snoozed until 09:00 in the organization's timezone (Mexico City, UTC-6), ten days ahead.
    const day = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await form.getByRole('button', { name: 'Add an action' }).click();
    await form.getByRole('button', { name: /Action 5$/ }).click();
    await page.getByRole('option', { name: 'Set the status' }).click();
    await form.getByRole('button', { name: /Action 5 status/ }).click();
    await page.getByRole('option', { name: 'Snoozed' }).click();
    await form.getByLabel('Action 5 snoozed until').fill(`${day}T09:00`);
    await form.getByRole('button', { name: 'Create rule' }).click();
    const value = form.getByRole('textbox', { name: 'Condition 1 value' });
    await expect.poll(() => value.getAttribute('aria-invalid')).toBe('true');
    await form.getByText(/^The pattern does not compile: .*\.$/).waitFor();
    expect((await api('GET', '/v1/automation-rules')).body.items).toEqual([]);
    await checkPage(page, csp, 'New rule', 'settings-rule-new');

    await form.getByRole('button', { name: /Condition 1 operator/ }).click();
    await page.getByRole('option', { name: 'contains' }).click();
    await value.fill('price');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rule: Prices' }).waitFor();
    const [rule] = (await api('GET', '/v1/automation-rules')).body.items;
    expect(rule).toMatchObject({
      name: 'Prices',
      event: 'message.received',
      active: true,
      stop: false,
      conditions: [{ field: 'message.text', operator: 'contains', value: 'price' }],
      actions: [
        { type: 'send_text', text: 'Our prices are on acme.example/prices.' },
        { type: 'add_labels', labels: ['pricing', 'sales'] },
        { type: 'set_priority', priority: 'high' },
        { type: 'assign_team', team_id: teamId },
        { type: 'set_status', status: 'snoozed', snoozed_until: `${day}T15:00:00.000Z` },
      ],
    });
    await page.getByText('This rule has not run yet.').waitFor();

    // Ana writes about prices (her window is open): the rule answers, labels and raises the priority.
    await server.admin('POST', '/sandbox/inbound', {
      channel_id: data.channelId,
      from: '+5215512345678',
      text: 'What is the PRICE of the red shoes?',
    });
    await expect.poll(async () => (await api('GET', `/v1/automation-rules/${rule.id}/runs`)).body.items.length).toBe(1);
    await page.reload();
    await page
      .getByText(
        'Send a text: done; Add labels: done; Set the priority: done; Give to a team: done; Set the status: done',
      )
      .waitFor();
    await checkPage(page, csp, 'Rule: Prices', 'settings-rule');

    // The list: a second rule (made through the API) moved above the first; the first switched off.
    await api('POST', '/v1/automation-rules', {
      name: 'Thanks',
      event: 'message.received',
      conditions: [{ field: 'message.text', operator: 'contains', value: 'thanks' }],
      actions: [{ type: 'add_labels', labels: ['thanked'] }],
    });
    await settings('Rules');
    const list = page.getByRole('list', { name: 'Rules in the order they run' });
    await list.getByRole('link', { name: 'Thanks' }).waitFor();
    await list.getByRole('button', { name: 'Move Thanks up' }).click();
    await expect
      .poll(async () => (await api('GET', '/v1/automation-rules')).body.items.map((r: { name: string }) => r.name))
      .toEqual(['Thanks', 'Prices']);
    await toggle(list.getByRole('switch', { name: 'Prices active' }));
    await expect.poll(async () => (await api('GET', `/v1/automation-rules/${rule.id}`)).body.active).toBe(false);
    await checkPage(page, csp, 'Rules', 'settings-rules');
  });

  it('the assistant: refused while disabled, then enabled with an FAQ; the provider key write-only; try it answers from the FAQs', async () => {
    await settings('AI assistant');
    const tryIt = page.getByRole('form', { name: 'Try the assistant' });
    const answer = page.getByRole('status').filter({ has: page.getByText('Action') });
    await tryIt.getByRole('textbox', { name: 'A contact’s message' }).fill('What are your Opening Hours?');
    await tryIt.getByRole('button', { name: 'Try it' }).click();
    await tryIt.getByRole('alert').filter({ hasText: 'The AI assistant is disabled.' }).waitFor();

    const form = page.getByRole('form', { name: 'AI assistant settings' });
    await toggle(form.getByRole('switch', { name: 'Assistant enabled' }));
    await form.getByRole('button', { name: /Mode/ }).click();
    await page.getByRole('option', { name: /Autonomous/ }).click();
    await form.getByRole('button', { name: 'Add a question' }).click();
    await form.getByRole('textbox', { name: 'Question 1' }).fill('opening hours');
    await form.getByRole('textbox', { name: 'Answer 1' }).fill('Every day from 8:00 to 19:00.');
    await form.getByRole('button', { name: 'Add a question' }).click();
    await form.getByRole('textbox', { name: 'Question 2' }).fill('to remove');
    await form.getByRole('textbox', { name: 'Answer 2' }).fill('gone');
    await form.getByRole('button', { name: 'Remove question 2' }).click();
    await toggle(form.getByRole('checkbox', { name: /Acme support/ }));
    await form.getByRole('button', { name: /Handoff team/ }).click();
    await page.getByRole('option', { name: 'Support' }).click();
    // Our own provider, with a key: the key is stored and never shown again.
    await toggle(form.getByRole('switch', { name: 'Use our own model provider' }));
    await form.getByRole('textbox', { name: 'Provider base URL' }).fill('http://127.0.0.1:9/v1');
    await form.getByRole('textbox', { name: 'Model' }).fill('tiny');
    await form.getByLabel(/API key/).fill('sk-never-shown');
    await form.getByRole('button', { name: 'Save AI assistant' }).click();
    await page.getByRole('status').filter({ hasText: 'AI assistant saved.' }).waitFor();
    await form.getByText('An API key is set.').waitFor();
    expect(await page.content()).not.toContain('sk-never-shown');
    const saved = (await api('GET', '/v1/ai-assistant')).body;
    expect(saved).toMatchObject({
      enabled: true,
      mode: 'autonomous',
      faqs: [{ question: 'opening hours', answer: 'Every day from 8:00 to 19:00.' }],
      channel_ids: [data.channelId],
      handoff_team_id: teamId,
      provider: { base_url: 'http://127.0.0.1:9/v1', model: 'tiny', has_api_key: true },
    });
    // Nothing listens there: the provider's failure is a sentence.
    await tryIt.getByRole('button', { name: 'Try it' }).click();
    await tryIt.getByRole('alert').filter({ hasText: 'The AI model did not answer' }).waitFor();

    // The key removed, then the provider: the sandbox answers from the FAQs with no model.
    await form.getByRole('button', { name: 'Remove API key' }).click();
    await form.getByRole('button', { name: 'Save AI assistant' }).click();
    await expect.poll(async () => (await api('GET', '/v1/ai-assistant')).body.provider?.has_api_key).toBe(false);
    await toggle(form.getByRole('switch', { name: 'Use our own model provider' }));
    await form.getByRole('button', { name: 'Save AI assistant' }).click();
    await expect.poll(async () => (await api('GET', '/v1/ai-assistant')).body.provider).toBeNull();
    await tryIt.getByRole('button', { name: 'Try it' }).click();
    await answer.getByText('Every day from 8:00 to 19:00.').waitFor();
    await answer.getByText('Reply').waitFor();
    await checkPage(page, csp, 'AI assistant', 'settings-ai-assistant');
  });

  it('the inbox: the assistant’s answer and a handoff’s note are marked; "Suggest a reply" fills the box, or says the assistant is disabled', async () => {
    // The assistant (autonomous on this number since the test above) answers a new conversation from its FAQs.
    await server.admin('POST', '/sandbox/inbound', {
      channel_id: data.channelId,
      from: '+33612345678',
      text: 'Hello, what are your opening hours?',
    });
    let conversationId = '';
    await expect
      .poll(async () => {
        const list = (await api('GET', '/v1/conversations?assignee=ai')).body.items as { id: string }[];
        conversationId = list[0]?.id ?? '';
        return conversationId;
      })
      .not.toBe('');
    await page.goto(`${server.baseUrl}/app/inbox/${conversationId}`);
    const messages = page.getByRole('list', { name: 'Messages' });
    const answer = messages.getByRole('listitem').filter({ hasText: 'Every day from 8:00 to 19:00.' });
    await answer.getByText('Assistant', { exact: true }).waitFor();

    const reply = page.getByRole('form', { name: 'Reply to the contact' });
    await reply.getByRole('button', { name: 'Suggest a reply' }).click();
    await expect
      .poll(() => reply.getByRole('textbox', { name: 'Message' }).inputValue())
      .toBe('Every day from 8:00 to 19:00.');
    await checkPage(page, csp, 'Inbox', 'inbox-assistant');

    // A question without an FAQ: the sandbox hands off, with a private note by the system.
    await server.admin('POST', '/sandbox/inbound', {
      channel_id: data.channelId,
      from: '+33612345678',
      text: 'Can I pay with a gift card?',
    });
    const note = messages.getByRole('listitem').filter({ hasText: 'AI handed off' });
    await note.getByText('Private note', { exact: true }).waitFor({ timeout: 15_000 });
    await note.getByText('Automation', { exact: true }).waitFor();
    await messages
      .getByRole('listitem')
      .filter({ hasText: 'Let me get a person to help you.' })
      .getByText('Assistant', { exact: true })
      .waitFor();
    expect((await api('GET', `/v1/conversations/${conversationId}`)).body).toMatchObject({
      assignee: null,
      status: 'open',
      team_id: teamId,
    });

    // Disabled: the draft is refused with a sentence beside the button.
    const current = (await api('GET', '/v1/ai-assistant')).body;
    await api('PUT', '/v1/ai-assistant', { ...current, provider: null, enabled: false });
    await reply.getByRole('button', { name: 'Suggest a reply' }).click();
    await reply.getByRole('alert').filter({ hasText: 'The AI assistant is disabled.' }).waitFor();

    // Ana's conversation: the rule's text reads "Automation"; the broadcast's template (also `system`) does not.
    await page.goto(`${server.baseUrl}/app/inbox/${data.conversationId}`);
    await messages
      .getByRole('listitem')
      .filter({ hasText: 'Our prices are on acme.example/prices.' })
      .getByText('Automation', { exact: true })
      .waitFor();
    const template = messages
      .getByRole('listitem')
      .filter({ hasText: /order_update|your order is on its way/ })
      .first();
    await template.getByText(/system · /).waitFor();
    expect(await template.getByText('Automation', { exact: true }).count()).toBe(0);
  });

  it('an agent cannot reach the automation settings, and the server answers 403', async () => {
    const invited = await server.admin('POST', `/organizations/${data.orgId}/users`, {
      email: 'cleo@acme.example',
      name: 'Cleo Agent',
      role: 'agent',
    });
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop, timezoneId: 'Europe/Berlin' });
    const agent = await context.newPage();
    agent.setDefaultTimeout(10_000);
    await agent.goto(invited.body.sign_in_url);
    await agent.getByLabel('New password').fill(PASSWORD);
    await agent.getByRole('button', { name: 'Save and sign in' }).click();
    await agent.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    for (const path of ['business-hours', 'rules', 'rules/new', 'ai-assistant']) {
      await agent.goto(`${server.baseUrl}/app/settings/${path}`);
      await agent.getByRole('heading', { level: 1, name: 'Not available' }).waitFor();
    }
    for (const path of ['/v1/business-hours', '/v1/automation-rules', '/v1/ai-assistant']) {
      const refused = await agent.request.get(`${server.baseUrl}/app/api${path}`);
      expect(refused.status()).toBe(403);
    }
    await context.close();
  });
});

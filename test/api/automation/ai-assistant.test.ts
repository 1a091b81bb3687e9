// decisions §20: the AI assistant's settings (defaults, the provider's key sealed at rest and never shown, base_url
// under the webhook endpoints' address policy), the test call and drafts — against the sandbox provider and a fake
// OpenAI-compatible server on 127.0.0.1 (the request it receives, garbage, HTTP 500, a timeout).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { generateKeyringText, parseKeyring } from '../../../src/lib/secrets-box.ts';
import { resealAssistantKeys, settingsOf } from '../../../src/modules/automation/assistant/assistant-settings.ts';
import { answer, type FakeOpenAi, startFakeOpenAi } from '../../fakes/fake-openai.ts';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { phones } from '../../helpers/sends.ts';

let h: Harness;
let model: FakeOpenAi;
beforeAll(async () => {
  // A short model deadline, so the timeout test waits a fraction of decisions §20's 30 s.
  h = await startHarness({ unlimited: true, ai: { timeoutMs: 500 } });
  model = await startFakeOpenAi();
});
afterAll(async () => {
  await model.close();
  await h.close();
});

const put = (key: string, body: unknown) => h.api('PUT', '/v1/ai-assistant', { key, body });
const tryIt = (key: string, text: string) => h.api('POST', '/v1/ai-assistant/test', { key, body: { text } });
const FAQS = [{ question: 'Opening hours', answer: 'Every day from 8:00 to 19:00.' }];
const locs = (response: { body: { detail: { loc: unknown }[] } }) => response.body.detail.map((issue) => issue.loc);

describe('settings', () => {
  it('are disabled with the defaults of decisions §20 until saved', async () => {
    const { key } = await h.createOrg();
    const read = await h.api('GET', '/v1/ai-assistant', { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      enabled: false,
      mode: 'draft',
      instructions: '',
      faqs: [],
      channel_ids: [],
      handoff_team_id: null,
      handoff_message: 'Let me get a person to help you.',
      max_replies_per_conversation: 10,
      provider: null,
    });
  });

  it('seal the provider’s key at rest, never show it, and keep it only for the same base_url', async () => {
    const { org, key } = await h.createOrg();
    const saved = await put(key, {
      enabled: true,
      mode: 'autonomous',
      instructions: 'Be brief.',
      faqs: FAQS,
      max_replies_per_conversation: 3,
      provider: { base_url: model.baseUrl, model: 'fake-model', api_key: 'sk-secret-123' },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.provider).toEqual({ base_url: model.baseUrl, model: 'fake-model', has_api_key: true });
    expect(JSON.stringify(saved.body)).not.toContain('sk-secret-123');
    expect((await h.api('GET', '/v1/ai-assistant', { key })).body).toEqual(saved.body);
    const stored = await sql<{ provider_api_key: string }>`select provider_api_key from ai_assistants
      where org_id = ${org.id}`.execute(h.database.db);
    expect(stored.rows[0]?.provider_api_key).toBeTruthy();
    expect(stored.rows[0]?.provider_api_key).not.toContain('sk-secret-123');

    // Left out with the same base_url: kept (the model receives it).
    const again = await put(key, {
      enabled: true,
      faqs: FAQS,
      provider: { base_url: model.baseUrl, model: 'fake-model' },
    });
    expect(again.body.provider.has_api_key).toBe(true);
    model.script(answer({ action: 'reply', text: 'We open at 8.' }));
    expect((await tryIt(key, 'when do you open?')).status).toBe(200);
    expect(model.requests.at(-1)?.headers.authorization).toBe('Bearer sk-secret-123');
    // Another base_url without a key: none.
    const moved = await put(key, {
      enabled: true,
      provider: { base_url: `${model.baseUrl.replace('/v1', '')}/other/v1`, model: 'fake-model' },
    });
    expect(moved.body.provider.has_api_key).toBe(false);
    expect((await put(key, { enabled: true, provider: null })).body.provider).toBeNull();
  });

  it('reseal the provider’s key under a new key of the keyring (a rotation), still opening to the same key', async () => {
    const { org, key } = await h.createOrg();
    await put(key, { enabled: true, provider: { base_url: model.baseUrl, model: 'm', api_key: 'sk-rotate-me' } });
    const read = () =>
      h.database.db.selectFrom('ai_assistants').selectAll().where('org_id', '=', org.id).executeTakeFirstOrThrow();
    const before = await read();
    // SECRETS_KEY="next,current": the new key seals, the old one still opens.
    const next = parseKeyring(generateKeyringText());
    const rotated = { currentId: next.currentId, keys: new Map([...next.keys, ...h.wiring.keyring.keys]) };
    expect(await resealAssistantKeys(h.database.db, rotated)).toBeGreaterThanOrEqual(1);
    const after = await read();
    expect(after.api_key_key_id).toBe(next.currentId);
    expect(after.provider_api_key).not.toBe(before.provider_api_key);
    expect(settingsOf(rotated, after).provider?.apiKey).toBe('sk-rotate-me');
    expect(await resealAssistantKeys(h.database.db, rotated)).toBe(0);
  });

  it.each([
    [
      'http:// to a public host',
      { provider: { base_url: 'http://93.184.216.34/v1', model: 'm' } },
      ['body', 'provider', 'base_url'],
    ],
    [
      'a private address',
      { provider: { base_url: 'https://10.0.0.8/v1', model: 'm' } },
      ['body', 'provider', 'base_url'],
    ],
    ['not a URL', { provider: { base_url: 'nonsense', model: 'm' } }, ['body', 'provider', 'base_url']],
    ['no model', { provider: { base_url: 'https://93.184.216.34/v1' } }, ['body', 'provider', 'model']],
    ['an unknown mode', { mode: 'wild' }, ['body', 'mode']],
    ['instructions over 8,000', { instructions: 'x'.repeat(8001) }, ['body', 'instructions']],
    ['201 FAQs', { faqs: Array.from({ length: 201 }, () => FAQS[0]) }, ['body', 'faqs']],
    ['a number not of the organization', { channel_ids: ['ch_nowhere'] }, ['body', 'channel_ids', 0]],
    ['an unknown team', { handoff_team_id: 'team_nowhere' }, ['body', 'handoff_team_id']],
    ['51 replies', { max_replies_per_conversation: 51 }, ['body', 'max_replies_per_conversation']],
    ['no replies', { max_replies_per_conversation: 0 }, ['body', 'max_replies_per_conversation']],
  ])('refuse %s with a 422 at its place and keep what was stored', async (_label, change, loc) => {
    const { key } = await h.createOrg();
    const refused = await put(key, { enabled: true, ...change });
    expect(refused.status).toBe(422);
    expect(locs(refused)).toContainEqual(loc);
    expect((await h.api('GET', '/v1/ai-assistant', { key })).body.enabled).toBe(false);
  });

  it('take the organization’s numbers', async () => {
    const { org, key } = await h.createOrg();
    const account = await h.createAccount(org.id);
    const saved = await put(key, { enabled: true, channel_ids: [account.numbers[0].id] });
    expect(saved.body.channel_ids).toEqual([account.numbers[0].id]);
  });
});

describe('the test call', () => {
  it('is a 409 ai_disabled while disabled', async () => {
    const { key } = await h.createOrg();
    expect((await tryIt(key, 'hello')).body).toMatchObject({ detail: { code: 'ai_disabled' } });
    expect((await tryIt(key, 'hello')).status).toBe(409);
  });

  it('answers from the FAQs with the sandbox provider (ignoring case), and hands off otherwise', async () => {
    const { key } = await h.createOrg();
    await put(key, { enabled: true, faqs: FAQS, handoff_message: 'A person will write.' });
    expect((await tryIt(key, 'Hi! what are your OPENING HOURS today?')).body).toEqual({
      action: 'reply',
      text: 'Every day from 8:00 to 19:00.',
      reason: null,
    });
    expect((await tryIt(key, 'where is my order?')).body).toEqual({
      action: 'handoff',
      text: 'A person will write.',
      reason: 'no_matching_faq',
    });
  });

  it('asks the organization’s model as decisions §20 says, and reads its JSON answer', async () => {
    const { key } = await h.createOrg();
    await put(key, {
      enabled: true,
      instructions: 'We are a bakery.',
      faqs: FAQS,
      provider: { base_url: model.baseUrl, model: 'bakery-model' },
    });
    model.script(answer({ action: 'resolve', text: 'Glad to help!', reason: 'thanked' }));
    expect((await tryIt(key, 'thanks, bye')).body).toEqual({
      action: 'resolve',
      text: 'Glad to help!',
      reason: 'thanked',
    });
    const request = model.requests.at(-1);
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.body.model).toBe('bakery-model');
    expect(request?.body.messages.map((message) => message.role)).toEqual(['system', 'user']);
    expect(request?.body.messages[0]?.content).toContain('We are a bakery.');
    expect(request?.body.messages[0]?.content).toContain('Every day from 8:00 to 19:00.');
    expect(request?.body.messages[1]?.content).toBe('thanks, bye');
    // A fenced JSON answer is still the JSON; a handoff carries the handoff message.
    model.script({ content: '```json\n{"action":"handoff","reason":"asks for a person"}\n```' });
    expect((await tryIt(key, 'a person please')).body).toEqual({
      action: 'handoff',
      text: 'Let me get a person to help you.',
      reason: 'asks for a person',
    });
  });

  it.each([
    ['garbage', { content: 'Sure! We open at 8.' }],
    ['an unknown action', answer({ action: 'dance', text: 'x' })],
    ['a reply without text', answer({ action: 'reply' })],
    ['a reply over 4,096 characters', answer({ action: 'reply', text: 'x'.repeat(4097) })],
    ['HTTP 500', { status: 500 }],
    ['a timeout', { hang: true as const }],
  ])('is a 502 ai_provider_error on %s', async (_label, scripted) => {
    const { key } = await h.createOrg();
    await put(key, { enabled: true, provider: { base_url: model.baseUrl, model: 'm' } });
    model.script(scripted);
    const failed = await tryIt(key, 'hello');
    expect(failed.status).toBe(502);
    expect(failed.body.detail).toMatchObject({ code: 'ai_provider_error' });
  });

  it('needs automation:write', async () => {
    const { org } = await h.createOrg();
    const reader = await h.admin('POST', `/organizations/${org.id}/api-keys`, { scopes: ['automation:read'] });
    expect((await tryIt(reader.body.key, 'hello')).body).toEqual({
      detail: { code: 'insufficient_scope', required: 'automation:write' },
    });
  });
});

describe('the deployment’s model', () => {
  it('is the sandbox provider by default with the sandbox platform; AI_BASE_URL needs AI_MODEL', () => {
    expect(loadConfig({}).ai).toMatchObject({ provider: 'sandbox', baseUrl: undefined });
    expect(() => loadConfig({ AI_BASE_URL: 'http://127.0.0.1:11434/v1' })).toThrow(/AI_MODEL/);
  });

  it('answers an organization without a provider from AI_BASE_URL, AI_MODEL and AI_API_KEY', async () => {
    const env = { AI_BASE_URL: model.baseUrl, AI_MODEL: 'house-model', AI_API_KEY: 'sk-house' };
    const deployed = await startHarness({ unlimited: true, ai: { ...loadConfig(env).ai, timeoutMs: 500 } });
    try {
      const { key } = await deployed.createOrg();
      const saved = await deployed.api('PUT', '/v1/ai-assistant', { key, body: { enabled: true, faqs: FAQS } });
      expect(saved.status, saved.text).toBe(200);
      // The deployment's key is never shown as the organization's.
      expect(saved.body.provider).toBeNull();
      model.script(answer({ action: 'reply', text: 'From the house model.' }));
      const tried = await deployed.api('POST', '/v1/ai-assistant/test', { key, body: { text: 'hello' } });
      expect(tried.body).toEqual({ action: 'reply', text: 'From the house model.', reason: null });
      const request = model.requests.at(-1);
      expect(request?.body.model).toBe('house-model');
      expect(request?.headers.authorization).toBe('Bearer sk-house');
    } finally {
      await deployed.close();
    }
  });
});

describe('drafts', () => {
  async function conversationOf(key: string, orgId: string) {
    const account = await h.createAccount(orgId);
    const channelId = account.numbers[0].id as string;
    const [phone] = phones(1);
    await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'Do you bake on Sundays?' });
    const list = await h.api('GET', `/v1/conversations?channel_id=${channelId}`, { key });
    return list.body.items[0].id as string;
  }

  it('suggest a reply from the conversation’s messages and send nothing', async () => {
    const { org, key } = await h.createOrg();
    const conversationId = await conversationOf(key, org.id);
    const draft = () => h.api('POST', `/v1/conversations/${conversationId}/ai-draft`, { key });
    expect((await draft()).body).toMatchObject({ detail: { code: 'ai_disabled' } });
    await put(key, { enabled: true, provider: { base_url: model.baseUrl, model: 'm' } });
    model.script(answer({ action: 'reply', text: 'Yes, from 9:00.' }));
    const drafted = await draft();
    expect(drafted.status).toBe(200);
    expect(drafted.body).toEqual({ text: 'Yes, from 9:00.' });
    expect(model.requests.at(-1)?.body.messages.slice(1)).toEqual([
      { role: 'user', content: 'Do you bake on Sundays?' },
    ]);
    const messages = await h.api('GET', `/v1/conversations/${conversationId}/messages`, { key });
    expect(messages.body.items).toHaveLength(1);
    model.script({ status: 500 });
    expect((await draft()).status).toBe(502);
    expect((await h.api('POST', '/v1/conversations/conv_nowhere/ai-draft', { key })).status).toBe(404);
  });
});

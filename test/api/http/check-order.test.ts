// The ordered lists of checks (decisions §7, §15, §16; D224): each request here fails two checks at once, and the
// earlier one in the list answers, whatever the body's schema says about a later part. The body's own 422 keeps its
// shape (loc, msg, type) when it is the one that answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { approvedTemplate, phones, recipientsFor, sender } from '../../helpers/sends.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ unlimited: true });
});
afterAll(() => h.close());

const TWO_NUMBERS = { numbers: [{ phone: '+15550100001' }, { phone: '+15550100002' }] };

const send = (key: string, templateId: string, body: unknown) =>
  h.api('POST', `/v1/templates/${templateId}/send`, { key, body });

const pause = async (templateId: string) =>
  expect((await h.admin('POST', `/sandbox/templates/${templateId}/review`, { event: 'PAUSED' })).status).toBe(200);

const sentNothing = async (key: string) =>
  expect((await h.api('GET', '/v1/broadcasts', { key })).body.items).toEqual([]);

describe('POST /v1/templates/{id}/send (decisions §7)', () => {
  it('the template before the channel, the count and each recipient', async () => {
    const { key, template } = await sender(h, TWO_NUMBERS);
    await pause(template.id);
    for (const body of [
      { recipients: [] },
      { recipients: [], channel_id: 12 },
      { recipients: [{ phone: 'not a phone' }] },
      { recipients: [{ contact_id: 'ct_unknown', variables: { 'body.1': 'x' } }] },
      { recipients: Array.from({ length: 101 }, () => ({ phone: '+15550000001' })), extra: true },
      'not an object',
    ]) {
      const refused = await send(key, template.id, body);
      expect(refused.status, JSON.stringify(body).slice(0, 80)).toBe(409);
      expect(refused.body.detail).toMatchObject({ code: 'template_not_sendable', status: 'PAUSED' });
    }
    await sentNothing(key);
  });

  it('the channel before the count and each recipient', async () => {
    const { key, template, account } = await sender(h, TWO_NUMBERS);
    const required = await send(key, template.id, { recipients: [] });
    expect(required.status).toBe(400);
    expect(required.body.detail).toMatchObject({
      code: 'channel_id_required',
      channel_ids: expect.arrayContaining(account.numbers.map((number: { id: string }) => number.id)),
    });
    const unknown = await send(key, template.id, { channel_id: 'ch_unknown', recipients: [{ phone: 'x' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatchObject({ code: 'invalid_channel', channel_id: 'ch_unknown' });
    // A channel_id of the wrong type is the channel's check failing: the body's 422, as the schema says it.
    const typed = await send(key, template.id, { channel_id: 12, recipients: [] });
    expect(typed.status).toBe(422);
    expect(typed.body.detail).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'channel_id'], msg: 'Input should be a valid string', type: 'string_type', input: 12 },
      ]),
    );
    await sentNothing(key);
  });

  it('the count before each recipient, and each recipient in order', async () => {
    const { key, template, account } = await sender(h, TWO_NUMBERS);
    const channel_id = account.numbers[0].id as string;
    const empty = await send(key, template.id, { channel_id, recipients: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'recipients'], type: 'too_short', input: [] }),
    ]);
    const tooMany = Array.from({ length: 101 }, () => ({ contact_id: 'ct_unknown' }));
    const over = await send(key, template.id, { channel_id, recipients: tooMany });
    expect(over.status).toBe(422);
    expect(over.body.detail[0]).toMatchObject({ loc: ['body', 'recipients'], type: 'too_long' });

    const [phone] = phones(1) as [string];
    // The first recipient's contact is unknown; the second's phone is malformed: the first answers.
    const first = await send(key, template.id, {
      channel_id,
      recipients: [{ contact_id: 'ct_unknown', variables: { 'body.1': 'a' } }, { phone: 'not a phone' }],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(404);
    expect(first.body.detail).toEqual({ code: 'contact_not_found', index: 0, contact_id: 'ct_unknown' });
    // The other way round, the malformed first recipient answers with the schema's 422 at its place.
    const second = await send(key, template.id, {
      channel_id,
      recipients: [{ phone: 'not a phone' }, { contact_id: 'ct_unknown', variables: { 'body.1': 'a' } }],
    });
    expect(second.status).toBe(422);
    expect(second.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'recipients', 0, 'phone'], type: 'string_pattern_mismatch' }),
      ]),
    );
    // A recipient's missing variables come before the next recipient's malformed field.
    const variables = await send(key, template.id, { channel_id, recipients: [{ phone }, { phone: 'x' }] });
    expect(variables.status).toBe(422);
    expect(variables.body.detail).toMatchObject({ code: 'missing_variables', index: 0, tokens: ['body.1'] });
    await sentNothing(key);
  });

  it('within a recipient, unknown keys before missing variables; the 24-hour limit before the balance', async () => {
    const { key, template } = await sender(h, { balance: 0, limit: 1 });
    // Both unknown keys and a missing variable: the unknown keys answer.
    const unknown = await send(key, template.id, {
      recipients: [{ phone: phones(1)[0], variables: { 'body.9': 'x' } }],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toMatchObject({ code: 'unknown_variables', index: 0, keys: ['body.9'] });
    // Two new phones over a limit of one, with no balance: the limit answers.
    const limited = await send(key, template.id, { recipients: recipientsFor(phones(2)) });
    expect(limited.status, JSON.stringify(limited.body)).toBe(409);
    expect(limited.body.detail).toMatchObject({ code: 'messaging_limit_exceeded', remaining: 1 });
    // Within the limit, the balance answers.
    const poor = await send(key, template.id, { recipients: recipientsFor(phones(1)) });
    expect(poor.status).toBe(402);
    await sentNothing(key);
  });

  it('a valid body still sends, one recipient given as an object too', async () => {
    const { key, template } = await sender(h);
    const [phone] = phones(1) as [string];
    const sent = await send(key, template.id, { recipients: { phone, variables: { 'body.1': 'a' } } });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ requested: 1 });
    const bad = await send(key, template.id, { recipients: { phone: 'x' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'recipients', 'phone'] });
  });
});

describe('POST /v1/conversations/{id}/messages (decisions §15)', () => {
  it('the conversation before the body, the body before the number', async () => {
    const setup = await sender(h, TWO_NUMBERS);
    for (const body of [{}, { type: 'text' }, 'text', undefined]) {
      const unknown = await h.api('POST', '/v1/conversations/cv_unknown/messages', { key: setup.key, body });
      expect(unknown.status, JSON.stringify(body)).toBe(404);
      expect(unknown.body.detail).toBe('not_found');
    }
    const channelId = setup.account.numbers[0].id as string;
    const [phone] = phones(1) as [string];
    expect((await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text: 'hi' })).status).toBe(
      200,
    );
    const list = await h.api('GET', `/v1/conversations?channel_id=${channelId}`, { key: setup.key });
    const conversationId = list.body.items[0].id as string;
    await h.admin('DELETE', `/messaging-accounts/${setup.account.id}/numbers/${channelId}`);
    const body = await h.api('POST', `/v1/conversations/${conversationId}/messages`, { key: setup.key, body: {} });
    expect(body.status).toBe(422);
    expect(body.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'type'], type: 'missing' })]);
    const number = await h.api('POST', `/v1/conversations/${conversationId}/messages`, {
      key: setup.key,
      body: { type: 'text', text: 'hello' },
    });
    expect(number.status).toBe(409);
    expect(number.body.detail).toMatchObject({ code: 'channel_unavailable' });
  });
});

describe('a template reply (decisions §15)', () => {
  it('the template before the opt-out, the opt-out before the balance', async () => {
    const setup = await sender(h, { balance: 0 });
    const channelId = setup.account.numbers[0].id as string;
    const [phone] = phones(1) as [string];
    for (const text of ['hi', 'STOP']) {
      expect((await h.admin('POST', '/sandbox/inbound', { channel_id: channelId, from: phone, text })).status).toBe(
        200,
      );
    }
    const list = await h.api('GET', `/v1/conversations?channel_id=${channelId}`, { key: setup.key });
    const conversationId = list.body.items[0].id as string;
    const reply = (templateId: string) =>
      h.api('POST', `/v1/conversations/${conversationId}/messages`, {
        key: setup.key,
        body: { type: 'template', template_id: templateId, variables: { 'body.1': 'x' } },
      });
    const paused = await approvedTemplate(h, setup.key, undefined, { category: 'MARKETING' });
    await pause(paused.id);
    const notSendable = await reply(paused.id);
    expect(notSendable.status).toBe(409);
    expect(notSendable.body.detail).toMatchObject({ code: 'template_not_sendable' });
    const marketing = await approvedTemplate(h, setup.key, undefined, { category: 'MARKETING' });
    const optedOut = await reply(marketing.id);
    expect(optedOut.status).toBe(409);
    expect(optedOut.body.detail).toEqual({ code: 'contact_opted_out' });
    // A UTILITY template goes to an opted-out contact: the balance answers.
    expect((await reply(setup.template.id)).status).toBe(402);
  });
});

describe('POST /v1/broadcasts (decisions §16)', () => {
  const create = (key: string, body: unknown) => h.api('POST', '/v1/broadcasts', { key, body });

  it('the template, the channel, the body, then the balance', async () => {
    const { key, template, account } = await sender(h, { ...TWO_NUMBERS, balance: 0 });
    const badBody = { audience: { origin: 'NOPE' }, send_at: 'tomorrow', name: 'x'.repeat(201) };
    const required = await create(key, { template_id: template.id, ...badBody });
    expect(required.status).toBe(400);
    expect(required.body.detail).toMatchObject({ code: 'channel_id_required' });
    const channel_id = account.numbers[0].id as string;
    const body = await create(key, { template_id: template.id, channel_id, ...badBody });
    expect(body.status).toBe(422);
    expect(body.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'audience', 'origin'],
        ['body', 'send_at'],
        ['body', 'name'],
      ]),
    );
    const balance = await create(key, {
      template_id: template.id,
      channel_id,
      audience: {},
      variables: { 'body.1': 'x' },
    });
    expect(balance.status, JSON.stringify(balance.body)).toBe(402);
    await pause(template.id);
    const paused = await create(key, { template_id: template.id, channel_id: 12, ...badBody });
    expect(paused.status).toBe(409);
    expect(paused.body.detail).toMatchObject({ code: 'template_not_sendable' });
    // No template to look up: the body's 422 for it.
    const missing = await create(key, { audience: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'template_id'], type: 'missing' })]);
    expect((await create(key, 'x')).status).toBe(422);
    await sentNothing(key);
  });
});

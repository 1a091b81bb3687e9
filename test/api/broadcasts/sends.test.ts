// POST /v1/templates/{id}/send: accepted sends, every refusal of the contract in its order, and what a refusal
// leaves behind (nothing).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../helpers/harness.ts';
import { balanceOf } from '../../helpers/messages.ts';
import {
  approvedTemplate,
  IMAGE_HEADER_WITH_BUTTON,
  NAMED_BODY,
  phones,
  recipientsFor,
  sender,
} from '../../helpers/sends.ts';

let h: Harness;
let media: Server;
let mediaBase: string;
const mediaHits = new Map<string, number>();
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);

beforeAll(async () => {
  h = await startHarness({ unlimited: true });
  media = createServer((request, response) => {
    mediaHits.set(request.url ?? '', (mediaHits.get(request.url ?? '') ?? 0) + 1);
    if (request.url?.startsWith('/ok.png')) {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
      return response.end(PNG);
    }
    if (request.url === '/page.html') {
      response.writeHead(200, { 'content-type': 'text/html' });
      return response.end('<html></html>');
    }
    if (request.url === '/huge.png') {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': String(6 * 1024 * 1024) });
      return response.end(PNG);
    }
    response.writeHead(404);
    response.end();
  });
  await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
  mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => media.close(() => resolve()));
  await h.close();
});

const count = async (table: 'broadcasts' | 'contacts' | 'broadcast_recipients', orgId: string) =>
  Number(
    (
      await h.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('org_id', '=', orgId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('an accepted send', () => {
  it('answers 202 with the Broadcast, creates contacts for unknown phones, and the worker sends every message', async () => {
    const { org, key, account, template } = await sender(h, { prices: { UTILITY: 0.25 } });
    const known = await h.database.db
      .insertInto('contacts')
      .values({ org_id: org.id, id: `ct_known_${Date.now()}`, phone: phones(1)[0], messaging_status: 'unverified' })
      .returning(['id', 'phone'])
      .executeTakeFirstOrThrow();
    const fresh = phones(2);
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: {
        recipients: [{ contact_id: known.id, variables: { 'body.1': 'A' } }, ...recipientsFor(fresh)],
      },
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      template_id: template.id,
      template_name: template.name,
      template_language: 'en_US',
      channel_id: account.numbers[0].id,
      status: 'in_progress',
      requested: 3,
      sent: 0,
      failed: 0,
      pending: 3,
      origin: 'API',
    });
    const created = await h.database.db
      .selectFrom('contacts')
      .select(['phone', 'origin', 'messaging_status'])
      .where('org_id', '=', org.id)
      .where('phone', 'in', fresh)
      .execute();
    expect(created).toHaveLength(2);
    expect(created.every((contact) => contact.origin === 'API' && contact.messaging_status === 'unverified')).toBe(
      true,
    );

    expect(await h.fanout.drain()).toBe(3);
    const after = await h.api('GET', `/v1/broadcasts/${response.body.id}`, { key });
    expect(after.body).toMatchObject({ status: 'completed', requested: 3, sent: 3, failed: 0, pending: 0 });
    expect(await balanceOf(h, account.id)).toBeCloseTo(100 - 0.75, 6);

    const recipients = await h.api('GET', `/v1/broadcasts/${response.body.id}/recipients`, { key });
    expect(recipients.body.total_count).toBe(3);
    expect(recipients.body.items.map((item: { phone: string }) => item.phone)).toEqual([known.phone, ...fresh]);
    for (const item of recipients.body.items) {
      expect(item).toMatchObject({
        status: 'sent',
        error: null,
        platform_message_id: expect.stringMatching(/^wamid\./),
      });
    }
    const verified = await h.database.db
      .selectFrom('contacts')
      .select('messaging_status')
      .where('org_id', '=', org.id)
      .where('id', '=', known.id)
      .executeTakeFirstOrThrow();
    expect(verified.messaging_status).toBe('verified');

    const conversations = await h.api('GET', `/v1/conversations?contact_id=${known.id}`, { key });
    expect(conversations.body.items).toHaveLength(1);
    const messages = await h.api('GET', `/v1/conversations/${conversations.body.items[0].id}/messages`, { key });
    expect(messages.body.items).toEqual([expect.objectContaining({ sender: 'system' })]);
  });

  it('takes a single recipient object, and resolves named placeholders from the contact', async () => {
    const { org, key, template } = await sender(h, { components: NAMED_BODY });
    const contact = await h.database.db
      .insertInto('contacts')
      .values({
        org_id: org.id,
        id: `ct_named_${Date.now()}`,
        phone: phones(1)[0],
        first_name: 'Ana',
        messaging_status: 'unverified',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: { contact_id: contact.id, variables: { 'body.order_id': 'A-9' } } },
    });
    expect(response.status).toBe(202);
    expect(response.body.requested).toBe(1);
    const queued = await h.database.db
      .selectFrom('broadcast_recipients')
      .select('send_components')
      .where('org_id', '=', org.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(queued.send_components)).toContain('Ana');
    expect(JSON.stringify(queued.send_components)).toContain('A-9');
  });
});

describe('refusals (decisions §7 order; nothing queued, created or charged)', () => {
  it('409 template_not_sendable for a template that is not APPROVED', async () => {
    const { key, template } = await sender(h);
    await h.admin('POST', `/sandbox/templates/${template.id}/review`, { event: 'PAUSED' });
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(1)) },
    });
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatchObject({ code: 'template_not_sendable', status: 'PAUSED' });
  });

  it('404 for an unknown template or another organization’s', async () => {
    const { template } = await sender(h);
    const other = await h.createOrg();
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key: other.key,
      body: { recipients: recipientsFor(phones(1)) },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'not_found' });
  });

  it('400 channel_id_required listing the eligible numbers, and 400 invalid_channel', async () => {
    const { org, key, account, template } = await sender(h, {
      numbers: [{ phone: '+15550100001' }, { phone: '+15550100002' }],
    });
    const list = recipientsFor(phones(1));
    const required = await h.api('POST', `/v1/templates/${template.id}/send`, { key, body: { recipients: list } });
    expect(required.status).toBe(400);
    expect(required.body.detail).toEqual({
      code: 'channel_id_required',
      channel_ids: account.numbers.map((number: { id: string }) => number.id),
    });
    const invalid = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: list, channel_id: 'ch_nope' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.detail.code).toBe('invalid_channel');
    await h.admin('DELETE', `/messaging-accounts/${account.id}/numbers/${account.numbers[1].id}`);
    const removed = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: list, channel_id: account.numbers[1].id },
    });
    expect(removed.body.detail.code).toBe('invalid_channel');
    const chosen = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: list, channel_id: account.numbers[0].id },
    });
    expect(chosen.status).toBe(202);
    expect(await count('broadcasts', org.id)).toBe(1);
  });

  it('422 for no recipients or more than 100', async () => {
    const { key, template } = await sender(h);
    const none = await h.api('POST', `/v1/templates/${template.id}/send`, { key, body: { recipients: [] } });
    expect(none.status).toBe(422);
    expect(none.body.detail[0]).toMatchObject({ loc: ['body', 'recipients'], type: 'too_short' });
    const many = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(101)) },
    });
    expect(many.status).toBe(422);
    expect(many.body.detail[0]).toMatchObject({
      loc: ['body', 'recipients'],
      type: 'too_long',
      ctx: { max_length: 100 },
    });
    const hundred = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(100)) },
    });
    expect(hundred.status).toBe(202);
  });

  it('404 contact_not_found with the index, also for another organization’s contact', async () => {
    const { key, template } = await sender(h);
    const other = await h.createOrg();
    const foreign = await h.database.db
      .insertInto('contacts')
      .values({
        org_id: other.org.id,
        id: `ct_foreign_${Date.now()}`,
        phone: phones(1)[0],
        messaging_status: 'unverified',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [...recipientsFor(phones(1)), { contact_id: foreign.id, variables: { 'body.1': 'x' } }] },
    });
    expect(response.status).toBe(404);
    expect(response.body.detail).toEqual({ code: 'contact_not_found', index: 1, contact_id: foreign.id });
  });

  it('422 unknown_variables, unknown_url_suffixes and missing_variables with index and keys/tokens', async () => {
    const { key, template } = await sender(h, { components: IMAGE_HEADER_WITH_BUTTON });
    const [a, b] = phones(2);
    const good = {
      phone: a,
      variables: { 'body.1': 'A-1' },
      url_suffixes: { '0': 'A-1' },
      header_media_url: `${mediaBase}/ok.png`,
    };
    const send = (second: Record<string, unknown>) =>
      h.api('POST', `/v1/templates/${template.id}/send`, {
        key,
        body: { recipients: [good, { phone: b, ...second }] },
      });

    const unknown = await send({
      variables: { 'body.1': 'x', 'body.2': 'y' },
      url_suffixes: { '0': 'x' },
      header_media_url: `${mediaBase}/ok.png`,
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toEqual({ code: 'unknown_variables', index: 1, keys: ['body.2'] });

    const suffix = await send({
      variables: { 'body.1': 'x' },
      url_suffixes: { '0': 'x', '3': 'y' },
      header_media_url: `${mediaBase}/ok.png`,
    });
    expect(suffix.body.detail).toEqual({ code: 'unknown_url_suffixes', index: 1, keys: ['3'] });

    const missing = await send({ variables: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.code).toBe('missing_variables');
    expect(missing.body.detail.index).toBe(1);
    expect(missing.body.detail.tokens).toEqual(expect.arrayContaining(['body.1', 'header.media']));
  });

  it('422 media_fetch_failed, media_type_mismatch and media_too_large, fetching each distinct URL once', async () => {
    const { org, key, template } = await sender(h, { components: IMAGE_HEADER_WITH_BUTTON });
    const recipient = (url: string) => ({
      variables: { 'body.1': 'x' },
      url_suffixes: { '0': 'x' },
      header_media_url: url,
    });
    const cases: [string, string][] = [
      [`${mediaBase}/missing.png`, 'media_fetch_failed'],
      [`${mediaBase}/page.html`, 'media_type_mismatch'],
      [`${mediaBase}/huge.png`, 'media_too_large'],
    ];
    for (const [url, code] of cases) {
      const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
        key,
        body: { recipients: phones(1).map((phone) => ({ phone, ...recipient(url) })) },
      });
      expect(response.status, url).toBe(422);
      expect(response.body.detail).toMatchObject({ code, index: 0, token: 'header.media', url });
    }
    const shared = `${mediaBase}/ok.png?shared=${Date.now()}`;
    const ok = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: phones(5).map((phone) => ({ phone, ...recipient(shared) })) },
    });
    expect(ok.status).toBe(202);
    expect(mediaHits.get(shared.replace(mediaBase, ''))).toBe(1);
    expect(await count('broadcasts', org.id)).toBe(1);
  });

  it('409 messaging_limit_exceeded with what remains of the rolling 24-hour limit', async () => {
    const { key, template } = await sender(h, { limit: 3 });
    const [a, b, c, d] = phones(4) as [string, string, string, string];
    expect(
      (await h.api('POST', `/v1/templates/${template.id}/send`, { key, body: { recipients: recipientsFor([a, b]) } }))
        .status,
    ).toBe(202);
    const over = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor([c, d]) },
    });
    expect(over.status).toBe(409);
    expect(over.body.detail).toMatchObject({ code: 'messaging_limit_exceeded', remaining: 1 });
    // Phones already messaged in the window do not count again.
    const again = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor([a, b, c]) },
    });
    expect(again.status).toBe(202);
  });

  it('402 messaging_insufficient_balance when the balance cannot pay one message', async () => {
    const { org, key, template } = await sender(h, { balance: 0.5 });
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor(phones(2)) },
    });
    expect(response.status).toBe(402);
    expect(response.body.detail).toMatchObject({ code: 'messaging_insufficient_balance' });
    expect(await count('contacts', org.id)).toBe(0);
    expect(await count('broadcasts', org.id)).toBe(0);
  });

  it('answers the first failing check: channel before recipients, and recipients in order', async () => {
    const { org, key, template } = await sender(h, { numbers: [{ phone: '+15550100001' }, { phone: '+15550100002' }] });
    const [a, b] = phones(2);
    const both = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [{ phone: a, variables: { 'body.9': 'x' } }] },
    });
    expect(both.body.detail.code).toBe('channel_id_required');
    const channel = (await h.api('GET', '/v1/channels/messaging/phones', { key })).body.items[0].id;
    const ordered = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: {
        channel_id: channel,
        recipients: [
          { phone: a, variables: {} },
          { contact_id: 'ct_missing', variables: { 'body.1': 'x' } },
        ],
      },
    });
    expect(ordered.body.detail).toEqual({ code: 'missing_variables', index: 0, tokens: ['body.1'] });
    expect(await count('contacts', org.id)).toBe(0);
    void b;
  });

  it('422 for a recipient with both or neither of contact_id and phone, and for a repeated phone', async () => {
    const { key, template } = await sender(h);
    const [a] = phones(1);
    const neither = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [{ variables: { 'body.1': 'x' } }] },
    });
    expect(neither.status).toBe(422);
    expect(neither.body.detail[0]).toMatchObject({ loc: ['body', 'recipients', 0] });
    const twice = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: recipientsFor([a as string, a as string]) },
    });
    expect(twice.status).toBe(422);
    expect(twice.body.detail).toMatchObject({ code: 'duplicate_recipient', index: 1, first_index: 0 });
  });

  it('validates the body shape without coercion', async () => {
    const { key, template } = await sender(h);
    const response = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: [{ phone: '5551234', variables: { 'body.1': 7 } }], extra: true },
    });
    expect(response.status).toBe(422);
    const locs = response.body.detail.map((issue: { loc: unknown[] }) => issue.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.extra']));
  });
});

describe('sends under concurrency', () => {
  it('two sends that each fit the 24-hour limit but together do not: exactly one is refused', async () => {
    const { org, key, template } = await sender(h, { limit: 5 });
    const [first, second] = await Promise.all(
      [phones(3), phones(3)].map((list) =>
        h.api('POST', `/v1/templates/${template.id}/send`, { key, body: { recipients: recipientsFor(list) } }),
      ),
    );
    expect([first?.status, second?.status].sort()).toEqual([202, 409]);
    expect(await count('broadcasts', org.id)).toBe(1);
    expect(await count('broadcast_recipients', org.id)).toBe(3);
  });

  it('concurrent sends to the same new phone create one contact', async () => {
    const { org, key } = await sender(h);
    const template = await approvedTemplate(h, key);
    const [phone] = phones(1);
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        h.api('POST', `/v1/templates/${template.id}/send`, {
          key,
          body: { recipients: recipientsFor([phone as string]) },
        }),
      ),
    );
    expect(responses.every((response) => response.status === 202)).toBe(true);
    expect(await count('contacts', org.id)).toBe(1);
  });
});

describe('sends and the CRM', () => {
  it('resolve a named placeholder from a custom property, and report it in the send requirements', async () => {
    const { key } = await sender(h);
    const property = await h.api('POST', '/v1/properties', {
      key,
      body: { key: 'plan_name', label: 'Plan', kind: 'TEXT' },
    });
    expect(property.status).toBe(201);
    const template = await approvedTemplate(h, key, [
      {
        type: 'BODY',
        text: 'Your plan {{plan_name}} renews on {{renewal}}',
        example: {
          body_text_named_params: [
            { param_name: 'plan_name', example: 'Gold' },
            { param_name: 'renewal', example: 'May 1' },
          ],
        },
      },
    ]);
    const requirements = await h.api('GET', `/v1/templates/${template.id}/send-requirements`, { key });
    expect(requirements.body.contact_resolvable_tokens).toEqual(['body.plan_name']);
    const contact = await h.api('POST', '/v1/contacts', {
      key,
      body: {
        first_name: 'Ana',
        phone: phones(1)[0],
        properties: { plan_name: { kind: 'TEXT', value_text: 'Platinum' } },
      },
    });
    expect(contact.status).toBe(201);
    const missing = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: { contact_id: contact.body.id } },
    });
    expect(missing.body.detail).toEqual({ code: 'missing_variables', index: 0, tokens: ['body.renewal'] });
    const sent = await h.api('POST', `/v1/templates/${template.id}/send`, {
      key,
      body: { recipients: { contact_id: contact.body.id, variables: { 'body.renewal': 'June 2' } } },
    });
    expect(sent.status).toBe(202);
    const queued = await h.database.db
      .selectFrom('broadcast_recipients')
      .select('send_components')
      .where('broadcast_id', '=', sent.body.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(queued.send_components)).toContain('Platinum');
  });

  it('place contacts made by a send or by an inbound message in the initial funnel stage', async () => {
    const { key, template, account } = await sender(h);
    const stage = await h.api('POST', '/v1/funnel-stages', { key, body: { name: 'New lead' } });
    expect(stage.status).toBe(201);
    expect(stage.body.is_initial).toBe(true);
    const [fromSend, fromInbound] = phones(2) as [string, string];
    expect(
      (
        await h.api('POST', `/v1/templates/${template.id}/send`, {
          key,
          body: { recipients: recipientsFor([fromSend]) },
        })
      ).status,
    ).toBe(202);
    const inbound = await h.admin('POST', '/sandbox/inbound', {
      channel_id: account.numbers[0].id,
      from: fromInbound,
      text: 'hi',
    });
    expect(inbound.status).toBe(200);
    const list = await h.api('GET', '/v1/contacts?limit=10', { key });
    const byPhone = Object.fromEntries(list.body.items.map((contact: { phone: string }) => [contact.phone, contact]));
    expect(byPhone[fromSend]).toMatchObject({
      origin: 'API',
      funnel_stage_id: stage.body.id,
      messaging_status: 'unverified',
    });
    expect(byPhone[fromInbound]).toMatchObject({ origin: 'OTHER', funnel_stage_id: stage.body.id });
  });
});

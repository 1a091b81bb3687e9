import { describe, expect, it } from 'vitest';
import {
  buildSignedWebhook,
  buildWebhookPayload,
  parseWebhook,
  parseWebhookJson,
  signPayload,
  verifySignature,
} from '../../../../src/messaging/cloud/webhook-parser.ts';
import type { PlatformEvent } from '../../../../src/messaging/platform.ts';

const waba = '102290129340398';
const phoneNumberId = '106540352242922';

function envelope(changes: unknown[], id: unknown = waba) {
  return { object: 'whatsapp_business_account', entry: [{ id, time: 1739321024, changes }] };
}

describe('parseWebhook: template status', () => {
  it('reads an approval with a numeric template id and a hyphenated language', () => {
    const body = envelope([
      {
        field: 'message_template_status_update',
        value: {
          event: 'APPROVED',
          message_template_id: 594425479261596,
          message_template_name: 'seasonal_promo',
          message_template_language: 'en-US',
          reason: 'NONE',
          message_template_category: 'MARKETING',
        },
      },
    ]);
    expect(parseWebhook(body)).toEqual([
      {
        kind: 'template_status',
        businessAccountId: waba,
        platformTemplateId: '594425479261596',
        templateName: 'seasonal_promo',
        language: 'en_US',
        event: 'APPROVED',
      },
    ]);
  });

  it('keeps a rejection reason', () => {
    const [event] = parseWebhook(
      envelope([
        {
          field: 'message_template_status_update',
          value: { event: 'REJECTED', message_template_id: 1, reason: 'INVALID_FORMAT' },
        },
      ]),
    );
    expect(event).toMatchObject({ kind: 'template_status', event: 'REJECTED', reason: 'INVALID_FORMAT' });
  });

  it('skips template webhooks without an event (quality updates) without throwing', () => {
    const body = envelope([
      {
        field: 'message_template_status_update',
        value: {
          message_template_id: 1,
          message_template_name: 'x',
          previous_quality_score: 'GREEN',
          new_quality_score: 'YELLOW',
        },
      },
      { field: 'message_template_status_update', value: { event: 'PAUSED', message_template_id: 2 } },
    ]);
    expect(parseWebhook(body)).toEqual([
      { kind: 'template_status', businessAccountId: waba, platformTemplateId: '2', event: 'PAUSED' },
    ]);
  });

  it('accepts a string template id too', () => {
    const [event] = parseWebhook(
      envelope([{ field: 'message_template_status_update', value: { event: 'DISABLED', message_template_id: '77' } }]),
    );
    expect(event).toMatchObject({ platformTemplateId: '77', event: 'DISABLED' });
  });
});

describe('parseWebhook: template category', () => {
  it('reads a completed category change', () => {
    const body = envelope([
      {
        field: 'template_category_update',
        value: {
          message_template_id: 278077987957091,
          message_template_name: 'welcome_template',
          message_template_language: 'en-US',
          previous_category: 'UTILITY',
          new_category: 'MARKETING',
        },
      },
    ]);
    expect(parseWebhook(body)).toEqual([
      {
        kind: 'template_category',
        businessAccountId: waba,
        platformTemplateId: '278077987957091',
        templateName: 'welcome_template',
        language: 'en_US',
        previousCategory: 'UTILITY',
        newCategory: 'MARKETING',
      },
    ]);
  });

  it('ignores an impending change (new_category is still the current one)', () => {
    const body = envelope([
      {
        field: 'template_category_update',
        value: {
          message_template_id: 278077987957091,
          correct_category: 'MARKETING',
          new_category: 'UTILITY',
          category_update_timestamp: 1760711433,
        },
      },
    ]);
    expect(parseWebhook(body)).toEqual([]);
  });
});

describe('parseWebhook: messages field', () => {
  it('reads sent, delivered and read statuses with E.164 recipients and second timestamps', () => {
    const body = envelope([
      {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
          statuses: ['sent', 'delivered', 'read'].map((status) => ({
            id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA',
            status,
            timestamp: '1750857384',
            recipient_id: '5516992318222',
            conversation: { id: 'a75d17ad06104c51166f948319b03c6a', origin: { type: 'marketing' } },
            pricing: { billable: true, pricing_model: 'PMP', category: 'marketing' },
          })),
        },
      },
    ]);
    const events = parseWebhook(body);
    expect(events.map((event) => (event.kind === 'message_status' ? event.status : event.kind))).toEqual([
      'sent',
      'delivered',
      'read',
    ]);
    expect(events[0]).toEqual({
      kind: 'message_status',
      businessAccountId: waba,
      phoneNumberId,
      platformMessageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA',
      status: 'sent',
      recipient: '+5516992318222',
      timestamp: new Date(1750857384 * 1000),
    });
  });

  it('classifies a failed status error by its code', () => {
    const body = envelope([
      {
        field: 'messages',
        value: {
          metadata: { phone_number_id: phoneNumberId },
          statuses: [
            {
              id: 'wamid.1',
              status: 'failed',
              timestamp: '1750857384',
              recipient_id: '15551234567',
              errors: [
                {
                  code: 131026,
                  title: 'Message undeliverable',
                  message: 'Message undeliverable',
                  error_data: { details: 'Message Undeliverable.' },
                },
              ],
            },
            {
              id: 'wamid.2',
              status: 'failed',
              timestamp: '1750857384',
              recipient_id: '15551234568',
              errors: [{ code: 131049, title: 'Not delivered to maintain healthy ecosystem engagement' }],
            },
          ],
        },
      },
    ]);
    const [first, second] = parseWebhook(body);
    expect(first).toMatchObject({
      status: 'failed',
      error: {
        code: 131026,
        title: 'Message undeliverable',
        message: 'Message undeliverable',
        reason: 'not_on_network',
      },
    });
    expect(second).toMatchObject({
      error: {
        code: 131049,
        title: 'Not delivered to maintain healthy ecosystem engagement',
        reason: 'platform_error',
      },
    });
  });

  it('reads inbound text with the sender profile name', () => {
    const body = envelope([
      {
        field: 'messages',
        value: {
          messaging_product: 'whatsapp',
          metadata: { display_phone_number: '16505551111', phone_number_id: phoneNumberId },
          contacts: [{ profile: { name: 'Lee Jen Ling' }, wa_id: '60173526233' }],
          messages: [
            {
              from: '60173526233',
              id: 'wamid.HBgLNjAxNzM1MjYyMzMVAgASGBQzQUI0NkE4NjM1QTU2NjVGOURGQgA=',
              timestamp: '1694427240',
              text: { body: 'Hihu' },
              type: 'text',
            },
          ],
        },
      },
    ]);
    expect(parseWebhook(body)).toEqual([
      {
        kind: 'inbound_message',
        businessAccountId: waba,
        phoneNumberId,
        platformMessageId: 'wamid.HBgLNjAxNzM1MjYyMzMVAgASGBQzQUI0NkE4NjM1QTU2NjVGOURGQgA=',
        from: '+60173526233',
        profileName: 'Lee Jen Ling',
        type: 'text',
        text: 'Hihu',
        timestamp: new Date(1694427240 * 1000),
      },
    ]);
  });

  it('reads non-text inbound messages (image without text, quick-reply button label)', () => {
    const body = envelope([
      {
        field: 'messages',
        value: {
          metadata: { phone_number_id: phoneNumberId },
          messages: [
            { from: '15551234567', id: 'wamid.a', timestamp: '1', type: 'image', image: { id: 'media-1' } },
            {
              from: '15551234567',
              id: 'wamid.b',
              timestamp: '2',
              type: 'button',
              button: { text: 'Stop promotions', payload: 'x' },
            },
          ],
        },
      },
    ]);
    const events = parseWebhook(body);
    expect(events).toHaveLength(2);
    expect(events[0]).not.toHaveProperty('text');
    expect(events[0]).toMatchObject({ type: 'image' });
    expect(events[1]).toMatchObject({ type: 'button', text: 'Stop promotions' });
  });

  it('skips unusable statuses and messages but keeps the rest of the batch', () => {
    const good = { id: 'wamid.ok', status: 'delivered', timestamp: '1750857384', recipient_id: '15551234567' };
    const body = envelope([
      {
        field: 'messages',
        value: {
          metadata: { phone_number_id: phoneNumberId },
          statuses: [
            { ...good, status: 'deleted' },
            { ...good, status: 'warning' },
            { ...good, id: 42 },
            { ...good, recipient_id: 'not-a-phone' },
            { ...good, timestamp: 'yesterday' },
            null,
            'junk',
            good,
          ],
          messages: [{ from: '15551234567', id: 'wamid.x', timestamp: '1' }],
        },
      },
      { field: 'messages', value: { statuses: [good] } }, // no metadata.phone_number_id
    ]);
    expect(parseWebhook(body)).toEqual([
      expect.objectContaining({ kind: 'message_status', platformMessageId: 'wamid.ok', status: 'delivered' }),
    ]);
  });
});

describe('parseWebhook: envelope', () => {
  it('handles many entries and many changes, in order, and ignores unknown fields', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'waba-1',
          changes: [
            { field: 'message_template_status_update', value: { event: 'APPROVED', message_template_id: 1 } },
            { field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } },
            {
              field: 'template_category_update',
              value: { message_template_id: 1, new_category: 'UTILITY', previous_category: 'MARKETING' },
            },
          ],
        },
        {
          id: 'waba-2',
          changes: [{ field: 'message_template_status_update', value: { event: 'REJECTED', message_template_id: 2 } }],
        },
      ],
    };
    expect(parseWebhook(body).map((event) => [event.kind, event.businessAccountId])).toEqual([
      ['template_status', 'waba-1'],
      ['template_category', 'waba-1'],
      ['template_status', 'waba-2'],
    ]);
  });

  it.each([
    null,
    undefined,
    42,
    'text',
    [],
    {},
    { entry: 'x' },
    { entry: [null, 1, { id: 'w' }, { id: 'w', changes: 'x' }, { id: 'w', changes: [null, { field: 'messages' }] }] },
    {
      entry: [
        {
          id: {},
          changes: [{ field: 'message_template_status_update', value: { event: 'APPROVED', message_template_id: 1 } }],
        },
      ],
    },
    {
      entry: [
        {
          id: 'w',
          changes: [
            { field: 'message_template_status_update', value: { event: 'APPROVED', message_template_id: -1.5 } },
          ],
        },
      ],
    },
    {
      entry: [
        {
          id: 'w',
          changes: [{ field: 'messages', value: { metadata: { phone_number_id: 'p' }, statuses: 'x', messages: {} } }],
        },
      ],
    },
  ])('never throws and yields nothing useful from %j', (body) => {
    expect(parseWebhook(body)).toEqual([]);
  });
});

describe('parseWebhookJson', () => {
  it('keeps ids too large for a double exact', () => {
    const raw = '{"message_template_id": 12345678901234567890, "small": 5, "float": 1.5}';
    expect(parseWebhookJson(raw)).toEqual({ message_template_id: '12345678901234567890', small: 5, float: 1.5 });
  });
});

describe('signatures', () => {
  const secret = 'app-secret';
  const raw = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');

  it('accepts the signature of the exact bytes', () => {
    expect(verifySignature(raw, signPayload(raw, secret), secret)).toBe(true);
  });

  it('matches a known HMAC-SHA256 vector', () => {
    // HMAC-SHA256(key="key", "The quick brown fox jumps over the lazy dog")
    const header = 'sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8';
    expect(verifySignature(Buffer.from('The quick brown fox jumps over the lazy dog'), header, 'key')).toBe(true);
    expect(signPayload('The quick brown fox jumps over the lazy dog', 'key')).toBe(header);
  });

  it('accepts an uppercase hex digest', () => {
    const header = signPayload(raw, secret)
      .replace(/[a-f]/g, (c) => c.toUpperCase())
      .replace('SHA256=', 'sha256=');
    expect(verifySignature(raw, header, secret)).toBe(true);
  });

  it.each([
    ['missing header', undefined],
    ['empty header', ''],
    ['no prefix', signPayload(raw, secret).slice('sha256='.length)],
    ['sha1 prefix', `sha1=${signPayload(raw, secret).slice('sha256='.length)}`],
    ['short digest', signPayload(raw, secret).slice(0, 20)],
    ['long digest', `${signPayload(raw, secret)}00`],
    ['non-hex digest', `sha256=${'z'.repeat(64)}`],
    ['other secret', signPayload(raw, 'other')],
    ['other body', signPayload(Buffer.from('{}'), secret)],
  ])('refuses %s', (_name, header) => {
    expect(verifySignature(raw, header, secret)).toBe(false);
  });

  it('refuses everything when no secret is configured', () => {
    expect(verifySignature(raw, signPayload(raw, ''), '')).toBe(false);
  });
});

describe('buildWebhookPayload', () => {
  const at = new Date('2025-06-25T13:16:24Z');
  const events: PlatformEvent[] = [
    {
      kind: 'template_status',
      businessAccountId: waba,
      platformTemplateId: '594425479261596',
      templateName: 'seasonal_promo',
      language: 'en_US',
      event: 'REJECTED',
      reason: 'INVALID_FORMAT',
    },
    {
      kind: 'template_category',
      businessAccountId: waba,
      platformTemplateId: '594425479261596',
      templateName: 'seasonal_promo',
      language: 'en_US',
      previousCategory: 'UTILITY',
      newCategory: 'MARKETING',
    },
    {
      kind: 'message_status',
      businessAccountId: 'waba-2',
      phoneNumberId,
      platformMessageId: 'wamid.1',
      status: 'failed',
      recipient: '+15551230404',
      timestamp: at,
      error: {
        code: 131026,
        title: 'Message undeliverable',
        message: 'Message undeliverable',
        reason: 'not_on_network',
      },
    },
    {
      kind: 'inbound_message',
      businessAccountId: waba,
      phoneNumberId,
      platformMessageId: 'wamid.in',
      from: '+15551234567',
      profileName: 'Ana',
      type: 'text',
      text: 'hello',
      timestamp: at,
    },
  ];

  it('produces the platform wire shapes', () => {
    const payload = buildWebhookPayload(events, { time: at, displayPhoneNumber: () => '+1 555 078 3881' });
    expect(payload.object).toBe('whatsapp_business_account');
    expect(payload.entry.map((entry) => [entry.id, entry.changes.length, entry.time])).toEqual([
      [waba, 3, 1750857384],
      ['waba-2', 1, 1750857384],
    ]);
    expect(payload.entry[0]?.changes[0]).toEqual({
      field: 'message_template_status_update',
      value: {
        event: 'REJECTED',
        message_template_id: 594425479261596,
        message_template_name: 'seasonal_promo',
        message_template_language: 'en-US',
        reason: 'INVALID_FORMAT',
      },
    });
    expect(payload.entry[1]?.changes[0]).toEqual({
      field: 'messages',
      value: {
        messaging_product: 'whatsapp',
        metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
        statuses: [
          {
            id: 'wamid.1',
            status: 'failed',
            timestamp: '1750857384',
            recipient_id: '15551230404',
            errors: [
              {
                code: 131026,
                title: 'Message undeliverable',
                message: 'Message undeliverable',
                error_data: { details: 'Message undeliverable' },
              },
            ],
          },
        ],
      },
    });
  });

  it('round-trips through the parser, so sandbox events take the real path', () => {
    const { rawBody, signature } = buildSignedWebhook(events, 'secret', { time: at });
    expect(verifySignature(rawBody, signature, 'secret')).toBe(true);
    const parsed = parseWebhook(parseWebhookJson(rawBody.toString('utf8')));
    // the parser re-groups by business account: waba's three events, then waba-2's
    expect(parsed).toEqual([events[0], events[1], events[3], events[2]]);
  });

  it('writes reason NONE for an approval, which the parser reads back as no reason', () => {
    const approval: PlatformEvent = {
      kind: 'template_status',
      businessAccountId: waba,
      platformTemplateId: '1',
      event: 'APPROVED',
    };
    const payload = buildWebhookPayload([approval]);
    expect(payload.entry[0]?.changes[0]?.value.reason).toBe('NONE');
    expect(parseWebhook(payload)).toEqual([approval]);
  });
});

describe('callback data', () => {
  it('is read from biz_opaque_callback_data on statuses and written back by the builder', () => {
    const event: PlatformEvent = {
      kind: 'message_status',
      businessAccountId: '102290129340398',
      phoneNumberId: '106540352242922',
      platformMessageId: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI',
      status: 'sent',
      recipient: '+15551234567',
      timestamp: new Date('2026-01-01T00:00:00Z'),
      callbackData: 'org_1|bc_1|7',
    };
    const payload = buildWebhookPayload([event]) as unknown as {
      entry: { changes: { value: { statuses: unknown[] } }[] }[];
    };
    expect(payload.entry[0]?.changes[0]?.value.statuses[0]).toMatchObject({ biz_opaque_callback_data: 'org_1|bc_1|7' });
    expect(parseWebhook(payload)).toEqual([event]);
  });
});

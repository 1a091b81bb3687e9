// decisions §15: inbound media and replies in the Cloud API's documented webhook shapes (`messages` field): the file
// under the key its type names (`image`, `video`, `audio`, `document`, `sticker`) with `id`, `mime_type`, `sha256`,
// and `caption`/`filename` where the type has them; the message answered in `context.id`.
import { describe, expect, it } from 'vitest';
import { buildWebhookPayload, parseWebhook } from '../../../../src/messaging/cloud/webhook-parser.ts';
import type { PlatformEvent } from '../../../../src/messaging/platform.ts';

const waba = '102290129340398';
const phoneNumberId = '106540352242922';

function inbound(messages: unknown[]) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: waba,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
              messages,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

const base = { from: '16505551234', timestamp: '1744344496' };
const common = {
  kind: 'inbound_message',
  businessAccountId: waba,
  phoneNumberId,
  from: '+16505551234',
  profileName: 'Sheena Nelson',
  timestamp: new Date(1744344496 * 1000),
};

describe('inbound media', () => {
  it('reads an image with its caption (the caption is also the text)', () => {
    const body = inbound([
      {
        ...base,
        id: 'wamid.IMAGE',
        type: 'image',
        image: {
          caption: 'The bill for March',
          mime_type: 'image/jpeg',
          sha256: 'iyqAbs9Ev1Ya7Qg2yLBDoRWXFbvqXl2pQ2SO5NzBSNs=',
          id: '1003383421387256',
        },
      },
    ]);
    expect(parseWebhook(body)).toEqual([
      {
        ...common,
        platformMessageId: 'wamid.IMAGE',
        type: 'image',
        text: 'The bill for March',
        media: {
          platformMediaId: '1003383421387256',
          mimeType: 'image/jpeg',
          sha256: 'iyqAbs9Ev1Ya7Qg2yLBDoRWXFbvqXl2pQ2SO5NzBSNs=',
          caption: 'The bill for March',
        },
      },
    ]);
  });

  it('reads a document with its file name, and a sticker, an audio (voice note) and a video without caption', () => {
    const body = inbound([
      {
        ...base,
        id: 'wamid.DOC',
        type: 'document',
        document: {
          caption: 'Signed contract',
          filename: 'contract-2025.pdf',
          mime_type: 'application/pdf',
          sha256: 'Bz0ysq1mIJYMb0V1VwNx7sKfN0mVhOaN3yhtdTyDCkU=',
          id: '1045229047257573',
        },
      },
      {
        ...base,
        id: 'wamid.STICKER',
        type: 'sticker',
        sticker: { mime_type: 'image/webp', sha256: 'HASH', id: '2287256678128437', animated: false },
      },
      {
        ...base,
        id: 'wamid.AUDIO',
        type: 'audio',
        audio: { mime_type: 'audio/ogg; codecs=opus', sha256: 'HASH2', id: '1256788295466424', voice: true },
      },
      { ...base, id: 'wamid.VIDEO', type: 'video', video: { mime_type: 'video/mp4', sha256: 'HASH3', id: '88' } },
    ]);
    const events = parseWebhook(body);
    expect(
      events.map((event) => (event.kind === 'inbound_message' ? [event.type, event.text, event.media] : [])),
    ).toEqual([
      [
        'document',
        'Signed contract',
        {
          platformMediaId: '1045229047257573',
          mimeType: 'application/pdf',
          sha256: 'Bz0ysq1mIJYMb0V1VwNx7sKfN0mVhOaN3yhtdTyDCkU=',
          caption: 'Signed contract',
          filename: 'contract-2025.pdf',
        },
      ],
      ['sticker', undefined, { platformMediaId: '2287256678128437', mimeType: 'image/webp', sha256: 'HASH' }],
      [
        'audio',
        undefined,
        { platformMediaId: '1256788295466424', mimeType: 'audio/ogg; codecs=opus', sha256: 'HASH2' },
      ],
      ['video', undefined, { platformMediaId: '88', mimeType: 'video/mp4', sha256: 'HASH3' }],
    ]);
  });

  it('reads the message a reply answers from context.id, on text and on media', () => {
    const body = inbound([
      {
        context: { from: '15550783881', id: 'wamid.ORIGINAL' },
        ...base,
        id: 'wamid.REPLY',
        text: { body: 'Yes please' },
        type: 'text',
      },
      {
        context: { from: '15550783881', id: 'wamid.ORIGINAL2' },
        ...base,
        id: 'wamid.REPLY2',
        type: 'image',
        image: { mime_type: 'image/png', sha256: 'H', id: '77' },
      },
      { ...base, id: 'wamid.PLAIN', text: { body: 'no context' }, type: 'text' },
    ]);
    const events = parseWebhook(body) as Extract<PlatformEvent, { kind: 'inbound_message' }>[];
    expect(events.map((event) => event.replyToPlatformMessageId)).toEqual([
      'wamid.ORIGINAL',
      'wamid.ORIGINAL2',
      undefined,
    ]);
    expect(events[0]).toMatchObject({ text: 'Yes please' });
    expect(events[2]).not.toHaveProperty('replyToPlatformMessageId');
  });

  it('skips the file of a media message without a media id, keeping the message', () => {
    const events = parseWebhook(inbound([{ ...base, id: 'wamid.X', type: 'image', image: { caption: 'no id' } }]));
    expect(events).toHaveLength(1);
    expect(events[0]).not.toHaveProperty('media');
  });

  it('builds the same shapes back, so the sandbox’s media webhooks take the real path', () => {
    const event: PlatformEvent = {
      ...(common as Omit<Extract<PlatformEvent, { kind: 'inbound_message' }>, 'platformMessageId' | 'type'>),
      platformMessageId: 'wamid.DOC',
      type: 'document',
      text: 'Signed contract',
      replyToPlatformMessageId: 'wamid.ORIGINAL',
      media: {
        platformMediaId: 'sbx-media-1',
        mimeType: 'application/pdf',
        caption: 'Signed contract',
        filename: 'contract.pdf',
      },
    };
    const payload = buildWebhookPayload([event]);
    const messages = payload.entry[0]?.changes[0]?.value.messages as Record<string, unknown>[] | undefined;
    const message = messages?.[0];
    expect(message).toEqual({
      from: '16505551234',
      id: 'wamid.DOC',
      timestamp: '1744344496',
      type: 'document',
      context: { id: 'wamid.ORIGINAL' },
      document: {
        mime_type: 'application/pdf',
        id: 'sbx-media-1',
        caption: 'Signed contract',
        filename: 'contract.pdf',
      },
    });
    expect(parseWebhook(payload)).toEqual([event]);
  });
});

// U+0000 in a webhook's strings cannot reach the database (PostgreSQL refuses it): the parser drops the character.
import { describe, expect, it } from 'vitest';
import { parseWebhook, parseWebhookJson } from '../../../../src/messaging/cloud/webhook-parser.ts';

describe('parseWebhookJson', () => {
  it('drops U+0000 from every string, keeping the rest of the text', () => {
    const raw = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1001',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '2002' },
                contacts: [{ wa_id: '15550001111', profile: { name: 'A\u0000na' } }],
                messages: [
                  {
                    from: '15550001111',
                    id: 'wamid.1\u0000',
                    type: 'text',
                    timestamp: '1800000000',
                    text: { body: 'hi\u0000!' },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    expect(raw).toContain('\\u0000');
    const [event] = parseWebhook(parseWebhookJson(raw));
    expect(event).toMatchObject({
      kind: 'inbound_message',
      text: 'hi!',
      profileName: 'Ana',
      platformMessageId: 'wamid.1',
    });
  });
});

// verifyWebhook against signatures made by the `standardwebhooks` package (the Standard Webhooks reference library),
// and the other way round: what signWebhook makes, that library accepts.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '../src/index.ts';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const event = { id: 'evt_01', type: 'contact.created', created_at: '2026-01-01T00:00:00.000Z', data: { id: 'ct_1' } };
const body = JSON.stringify(event);

function reference(secret: string, id: string, at: Date, payload: string) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
  };
}

describe('verifyWebhook', () => {
  it('accepts a delivery signed by the reference library and returns the event', async () => {
    const secret = newSecret();
    const headers = reference(secret, 'evt_01', new Date(), body);
    expect(await verifyWebhook({ secret, headers, body })).toEqual(event);
    // Fetch Headers, raw bytes and an ArrayBuffer are the same delivery.
    const bytes = new TextEncoder().encode(body);
    expect(await verifyWebhook({ secret, headers: new Headers(headers), body: bytes })).toEqual(event);
    expect(await verifyWebhook({ secret, headers, body: bytes.buffer })).toEqual(event);
  });

  it('reads header names in any case (Node lower-cases them, others may not)', async () => {
    const secret = newSecret();
    const headers = reference(secret, 'evt_01', new Date(), body);
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(await verifyWebhook({ secret, headers: upper, body })).toEqual(event);
  });

  it('accepts either signature during a rotation (space-separated), with the old or the new secret', async () => {
    const oldSecret = newSecret();
    const newer = newSecret();
    const at = new Date();
    const signedOld = reference(oldSecret, 'evt_01', at, body);
    const signedNew = reference(newer, 'evt_01', at, body);
    const headers = {
      ...signedNew,
      'webhook-signature': `${signedNew['webhook-signature']} ${signedOld['webhook-signature']}`,
    };
    expect(await verifyWebhook({ secret: newer, headers, body })).toEqual(event);
    expect(await verifyWebhook({ secret: oldSecret, headers, body })).toEqual(event);
    await expect(verifyWebhook({ secret: newSecret(), headers, body })).rejects.toThrow('no signature matches');
  });

  it('refuses an altered body, another id, another secret and an unknown signature version', async () => {
    const secret = newSecret();
    const headers = reference(secret, 'evt_01', new Date(), body);
    const refused = (options: Parameters<typeof verifyWebhook>[0]) =>
      expect(verifyWebhook(options)).rejects.toBeInstanceOf(WebhookVerificationError);
    await refused({ secret, headers, body: body.replace('ct_1', 'ct_2') });
    await refused({ secret, headers: { ...headers, 'webhook-id': 'evt_02' }, body });
    await refused({ secret: newSecret(), headers, body });
    const signature = headers['webhook-signature'].slice('v1,'.length);
    await refused({ secret, headers: { ...headers, 'webhook-signature': `v2,${signature}` }, body });
    await refused({ secret, headers: { ...headers, 'webhook-signature': 'v1,not base64!' }, body });
  });

  it('refuses a timestamp outside the tolerance either way, and accepts one inside it', async () => {
    const secret = newSecret();
    const now = Date.now();
    const old = reference(secret, 'evt_01', new Date(now - 301_000), body);
    await expect(verifyWebhook({ secret, headers: old, body, now })).rejects.toThrow('tolerance');
    const ahead = reference(secret, 'evt_01', new Date(now + 301_000), body);
    await expect(verifyWebhook({ secret, headers: ahead, body, now })).rejects.toThrow('tolerance');
    const recent = reference(secret, 'evt_01', new Date(now - 299_000), body);
    expect(await verifyWebhook({ secret, headers: recent, body, now })).toEqual(event);
    await expect(verifyWebhook({ secret, headers: recent, body, now, toleranceSeconds: 60 })).rejects.toThrow(
      'tolerance',
    );
  });

  it('refuses a delivery with a header missing, and a secret that is not base64', async () => {
    const secret = newSecret();
    const headers = reference(secret, 'evt_01', new Date(), body);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _left, ...rest } = headers;
      await expect(verifyWebhook({ secret, headers: rest, body })).rejects.toThrow('missing');
    }
    await expect(verifyWebhook({ secret: 'whsec_%%%', headers, body })).rejects.toThrow('whsec_');
  });
});

describe('signWebhook', () => {
  it('makes headers the reference library verifies', async () => {
    const secret = newSecret();
    const headers = await signWebhook({ secret, id: 'evt_09', body });
    expect(new Webhook(secret).verify(body, headers)).toEqual(event);
  });
});

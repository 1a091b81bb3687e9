// `X-Hub-Signature-256: sha256=<hex>`: an HMAC-SHA256 of the raw request bytes keyed with the app secret.
// Verified over the raw bytes, never over re-serialised JSON (key order and escaping would differ).

import { createHmac, timingSafeEqual } from 'node:crypto';

const prefix = 'sha256=';

export function signPayload(rawBody: Buffer | string, appSecret: string): string {
  return `${prefix}${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

export function verifySignature(rawBody: Buffer, header: string | undefined, appSecret: string): boolean {
  // An empty secret would make every signature forgeable by anyone who knows the scheme.
  if (appSecret === '' || header === undefined) return false;
  const trimmed = header.trim();
  if (!trimmed.toLowerCase().startsWith(prefix)) return false;
  const hex = trimmed.slice(prefix.length);
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  const given = Buffer.from(hex, 'hex');
  // timingSafeEqual throws on unequal lengths; the regex above already pins the length, this keeps it explicit.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

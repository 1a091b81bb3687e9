// Verifies our webhook deliveries (decisions §11, the Standard Webhooks format) with WebCrypto, so it runs in
// browsers, Node 20+, Deno and edge runtimes alike: `webhook-signature` is `v1,` + base64 HMAC-SHA256 over
// `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the `whsec_` secret; during a
// rotation several signatures are separated by spaces, and any one that matches is enough.

import type { webhooks } from './openapi.ts';

/** The body of a delivery of event type `T`, as the OpenAPI document's `webhooks` section describes it. */
type EventBody<T extends keyof webhooks> = webhooks[T]['post']['requestBody']['content']['application/json'];

/**
 * Every event a webhook endpoint can receive (decisions §11), `{id: "evt_…", type, created_at, data}`, as a union
 * discriminated by `type`: `if (event.type === 'message.received')` narrows `data` to that event's Message.
 */
export type WebhookEvent = { [T in keyof webhooks]: EventBody<T> }[keyof webhooks];

/** The event types, e.g. `contact.created`. */
export type WebhookEventType = WebhookEvent['type'];

/** The event of one type: `WebhookEventOf<'contact.created'>['data']` is a Contact. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The endpoint's secret, `whsec_…` (both secrets may be tried in turn by calling twice during a rotation). */
  secret: string;
  /** The delivery's headers: a Fetch `Headers`, or Node's `IncomingHttpHeaders`-like record. */
  headers: WebhookHeaders;
  /** The raw body exactly as received: parse it only after it is verified. */
  body: string | Uint8Array | ArrayBuffer;
  /** How far `webhook-timestamp` may be from now, in seconds, either way; default 300 (replay protection). */
  toleranceSeconds?: number;
  /** The current time (ms since the epoch), for tests; `Date.now()` by default. */
  now?: number;
}

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function bodyBytes(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

function secretKey(secret: string) {
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('the secret is not a whsec_ secret (base64 after the prefix)');
  }
  return globalThis.crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}

/** The bytes that are signed: `{id}.{timestamp}.` followed by the raw body. */
function signedContent(id: string, timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

/**
 * Checks a delivery's signature and timestamp and returns the parsed event (narrow it by `type`); throws
 * WebhookVerificationError when
 * the delivery is not ours, was altered, or is too old (or too far ahead) to trust.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<WebhookEvent> {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  }
  const body = bodyBytes(options.body);
  const key = await secretKey(options.secret);
  const content = signedContent(id, timestamp, body);
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = base64ToBytes(value);
    } catch {
      continue;
    }
    // subtle.verify compares in constant time.
    if (await globalThis.crypto.subtle.verify('HMAC', key, signature, content)) {
      return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
    }
  }
  throw new WebhookVerificationError('no signature matches');
}

/** Signs a payload as our deliveries are signed: for a receiver's own tests. Returns the three headers. */
export async function signWebhook(options: {
  secret: string;
  id: string;
  body: string | Uint8Array;
  timestamp?: number;
}): Promise<Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const key = await secretKey(options.secret);
  const mac = await globalThis.crypto.subtle.sign(
    'HMAC',
    key,
    signedContent(options.id, timestamp, bodyBytes(options.body)),
  );
  return {
    'webhook-id': options.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${bytesToBase64(new Uint8Array(mac))}`,
  };
}

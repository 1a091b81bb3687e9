// Verifies our webhook deliveries (decisions §11, the Standard Webhooks format) with WebCrypto, so it runs in
// browsers, Node 20+, Deno and edge runtimes alike: `webhook-signature` is `v1,` + base64 HMAC-SHA256 over
// `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the `whsec_` secret; during a
// rotation several signatures are separated by spaces, and any one that matches is enough.
export class WebhookVerificationError extends Error {
    name = 'WebhookVerificationError';
}
const encoder = new TextEncoder();
function header(headers, name) {
    if (typeof headers.get === 'function')
        return headers.get(name) ?? undefined;
    const record = headers;
    const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
    const value = key === undefined ? undefined : record[key];
    return Array.isArray(value) ? value.join(' ') : value;
}
function base64ToBytes(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++)
        bytes[index] = binary.charCodeAt(index);
    return bytes;
}
function bytesToBase64(bytes) {
    let binary = '';
    for (const byte of bytes)
        binary += String.fromCharCode(byte);
    return btoa(binary);
}
function bodyBytes(body) {
    if (typeof body === 'string')
        return encoder.encode(body);
    return body instanceof Uint8Array ? body : new Uint8Array(body);
}
function secretKey(secret) {
    let keyBytes;
    try {
        keyBytes = base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
    }
    catch {
        throw new WebhookVerificationError('the secret is not a whsec_ secret (base64 after the prefix)');
    }
    return globalThis.crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
        'verify',
    ]);
}
/** The bytes that are signed: `{id}.{timestamp}.` followed by the raw body. */
function signedContent(id, timestamp, body) {
    const prefix = encoder.encode(`${id}.${timestamp}.`);
    const content = new Uint8Array(prefix.length + body.length);
    content.set(prefix);
    content.set(body, prefix.length);
    return content;
}
/**
 * Checks a delivery's signature and timestamp and returns the parsed event; throws WebhookVerificationError when
 * the delivery is not ours, was altered, or is too old (or too far ahead) to trust.
 */
export async function verifyWebhook(options) {
    const id = header(options.headers, 'webhook-id');
    const timestamp = header(options.headers, 'webhook-timestamp');
    const signatures = header(options.headers, 'webhook-signature');
    if (!id || !timestamp || !signatures) {
        throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
    }
    if (!/^\d+$/.test(timestamp))
        throw new WebhookVerificationError('webhook-timestamp is not Unix seconds');
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
        if (version !== 'v1' || !value)
            continue;
        let signature;
        try {
            signature = base64ToBytes(value);
        }
        catch {
            continue;
        }
        // subtle.verify compares in constant time.
        if (await globalThis.crypto.subtle.verify('HMAC', key, signature, content)) {
            return JSON.parse(new TextDecoder().decode(body));
        }
    }
    throw new WebhookVerificationError('no signature matches');
}
/** Signs a payload as our deliveries are signed: for a receiver's own tests. Returns the three headers. */
export async function signWebhook(options) {
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const key = await secretKey(options.secret);
    const mac = await globalThis.crypto.subtle.sign('HMAC', key, signedContent(options.id, timestamp, bodyBytes(options.body)));
    return {
        'webhook-id': options.id,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${bytesToBase64(new Uint8Array(mac))}`,
    };
}

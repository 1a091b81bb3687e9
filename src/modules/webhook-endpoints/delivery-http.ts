// One webhook delivery attempt over HTTP, in the Standard Webhooks wire format (decisions §11): POST the event's
// JSON with `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 over
// `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`; one signature per
// valid secret, space-separated). The address policy applies at connect time (the same one as media fetching);
// redirects are not followed; the whole attempt has a deadline.
// Kept-alive connections (D97): an idle connection is closed after `idleSocketMs`, below the keep-alive timeouts of
// common servers (Node's and Apache's 5 s), so that we rarely write to one the server is closing. One request per
// attempt, whatever happens to it (D228): a reset cannot tell a request the server never read from one it read and
// then dropped, so it is a failed attempt, in the log and retried on §11's schedule, never sent again unseen.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { AddressRefused, checkLiteralHost, guardedLookup } from '../../lib/address-policy.ts';
import type { AttemptAnswer } from './delivery-rules.ts';

const SECRET_PREFIX = 'whsec_';
/** Answers are read only to keep the connection reusable; beyond this the connection is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Endpoint URLs whose parse and literal-host check a sender keeps (more: it starts over). */
const TARGETS_KEPT = 1000;

/** The signing key of a `whsec_` secret (decisions §11: the base64-decoded part after the prefix). */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(
    Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'),
  );
}

export function signature(secret: string | KeyObject, id: string, timestamp: number, body: string): string {
  const key = typeof secret === 'string' ? signingKey(secret) : secret;
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface WebhookSender {
  send(input: { url: string; eventId: string; body: string; secrets: (string | KeyObject)[] }): Promise<AttemptAnswer>;
  close(): void;
}

export function createWebhookSender(options: {
  allowHosts: readonly string[];
  timeoutMs: number;
  idleSocketMs: number;
}): WebhookSender {
  // Connections are kept alive between deliveries; each was checked against the address policy when it connected.
  // The agent's `timeout` is the idle time after which it closes a free connection (a server's `Keep-Alive:
  // timeout=N` hint shortens it further to N - 1 s).
  const agentOptions = { keepAlive: true, maxSockets: 64, timeout: options.idleSocketMs };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  // Each endpoint's URL parsed and its literal host checked once (D299), not for every attempt; a name's addresses
  // are still checked at every connect (guardedLookup).
  const targets = new Map<string, { url: URL; allowed: boolean } | { refused: Error } | null>();
  function targetOf(text: string) {
    let target = targets.get(text);
    if (target === undefined) {
      try {
        const url = new URL(text);
        const { allowed } = checkLiteralHost(url.hostname, options.allowHosts);
        target =
          url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)
            ? { refused: new AddressRefused(`${url.protocol}// is not allowed for ${url.hostname}`) }
            : { url, allowed };
      } catch (error) {
        target = error instanceof AddressRefused ? { refused: error } : null;
      }
      if (targets.size >= TARGETS_KEPT) targets.clear();
      targets.set(text, target);
    }
    return target;
  }

  function post(
    { url, allowed }: { url: URL; allowed: boolean },
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ) {
    return new Promise<AttemptAnswer>((resolve, reject) => {
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(
        url,
        {
          method: 'POST',
          signal,
          agent: agents[url.protocol as 'http:' | 'https:'],
          lookup: guardedLookup(allowed),
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          const statusCode = response.statusCode ?? 0;
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) response.destroy();
          });
          const settle = () =>
            resolve({
              statusCode,
              error:
                statusCode >= 200 && statusCode < 300
                  ? null
                  : statusCode >= 300 && statusCode < 400
                    ? `redirect ${statusCode} not followed`
                    : `HTTP ${statusCode}`,
            });
          response.once('end', settle);
          response.once('close', settle);
        },
      );
      request.once('error', reject);
      request.end(body);
    });
  }

  return {
    async send({ url, eventId, body, secrets }) {
      const target = targetOf(url);
      if (target === null) return { statusCode: null, error: 'invalid URL' };
      if ('refused' in target) return { statusCode: null, error: `address refused: ${target.refused.message}` };
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'crm-messaging-webhooks/1',
        'webhook-id': eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': secrets.map((secret) => signature(secret, eventId, timestamp, body)).join(' '),
      };
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), options.timeoutMs);
      try {
        return await post(target, headers, body, controller.signal);
      } catch (error) {
        if (controller.signal.aborted)
          return { statusCode: null, error: `timeout: no answer within ${options.timeoutMs} ms` };
        if (error instanceof AddressRefused) return { statusCode: null, error: `address refused: ${error.message}` };
        const code = (error as NodeJS.ErrnoException).code;
        return { statusCode: null, error: `connection failed: ${code ?? (error as Error).message}` };
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

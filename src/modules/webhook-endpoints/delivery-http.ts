// One webhook delivery attempt over HTTP, in the Standard Webhooks wire format (decisions §11): POST the event's
// JSON with `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 over
// `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`; one signature per
// valid secret, space-separated). The address policy applies at connect time (the same one as media fetching);
// redirects are not followed; the whole attempt has a deadline.
// Kept-alive connections (D97): an idle connection is closed after `idleSocketMs`, below the keep-alive timeouts of
// common servers (Node's and Apache's 5 s), so that we rarely write to one the server is closing. One request per
// attempt, whatever happens to it (D228): a reset cannot tell a request the server never read from one it read and
// then dropped, so it is a failed attempt, in the log and retried on §11's schedule, never sent again unseen.
// The client is undici's (D355): a pool of kept-alive connections per endpoint's origin (node:http's request objects,
// header checks and agent queue were ≈ 30 % of a delivering worker's profile, inclusive). It is loaded at the first
// attempt, not with this file (D362): the API process wires the deliverer but never sends, and undici's 109 modules
// were ≈ 4 MB of its live heap under the read load (51.0 against 46.8 MB).
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { Agent } from 'undici';
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
  // Connections are kept alive between deliveries, a pool per origin; each was checked against the address policy
  // when it connected (a host on WEBHOOK_ALLOW_HOSTS by its own agent). A free connection is closed after
  // `idleSocketMs`, or sooner when a server's `Keep-Alive: timeout=N` hint says so (N less 1 s). No retries: undici
  // retries nothing but through its RetryAgent, so an attempt is one request (D228).
  const agentOf = (AgentClass: typeof Agent, allowed: boolean) =>
    new AgentClass({
      connections: 64,
      pipelining: 1,
      keepAliveTimeout: options.idleSocketMs,
      keepAliveMaxTimeout: options.idleSocketMs,
      keepAliveTimeoutThreshold: 1000,
      connect: { lookup: guardedLookup(allowed) },
    });
  type Agents = { guarded: Agent; allowed: Agent };
  const destroy = (made: Agents) => {
    void made.guarded.destroy();
    void made.allowed.destroy();
  };
  // The two agents, made at the first attempt with undici loaded then (D362); made after close(), they are closed too
  // (an attempt then fails as on closed agents).
  let closed = false;
  let agents: Promise<Agents> | undefined;
  const agentsNow = () =>
    (agents ??= import('undici').then(({ Agent: AgentClass }) => {
      const made = { guarded: agentOf(AgentClass, false), allowed: agentOf(AgentClass, true) };
      if (closed) destroy(made);
      return made;
    }));

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

  async function post(
    { url, allowed }: { url: URL; allowed: boolean },
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<AttemptAnswer> {
    const pools = await agentsNow();
    const response = await (allowed ? pools.allowed : pools.guarded).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers,
      body,
      signal,
    });
    const { statusCode } = response;
    // Read to keep the connection reusable; beyond MAX_ANSWER_BYTES the connection is dropped.
    await response.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
    return {
      statusCode,
      error:
        statusCode >= 200 && statusCode < 300
          ? null
          : statusCode >= 300 && statusCode < 400
            ? `redirect ${statusCode} not followed`
            : `HTTP ${statusCode}`,
    };
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
      closed = true;
      void agents?.then(destroy);
    },
  };
}

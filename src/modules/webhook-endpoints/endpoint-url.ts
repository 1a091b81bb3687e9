// decisions §11: an endpoint's URL is `https://` to a public address; `http://` and private, loopback or
// link-local addresses only for hosts in WEBHOOK_ALLOW_HOSTS. Checked here when the endpoint is saved, with the
// same address policy (src/lib/address-policy.ts) that every delivery applies again at connect time.
import { isIP } from 'node:net';
import { validationError } from '../../http/errors.ts';
import { AddressRefused, checkLiteralHost, guardedLookup } from '../../lib/address-policy.ts';

const LOOKUP_TIMEOUT_MS = 3000;

/** Resolves `host` under the policy: refused when it resolves to a non-public address. */
function resolvesPrivately(host: string): Promise<AddressRefused | undefined> {
  const lookup = guardedLookup(false);
  return new Promise((resolve) => {
    // A name that does not resolve (yet), or a slow resolver, is not refused here: nothing can be sent to it, and
    // the connect-time check still applies to whatever it resolves to later (Stripe and Svix do not check DNS).
    const timer = setTimeout(() => resolve(undefined), LOOKUP_TIMEOUT_MS);
    lookup(host, { all: true }, (error) => {
      clearTimeout(timer);
      resolve(error instanceof AddressRefused ? error : undefined);
    });
  });
}

/** Checks a URL under the policy; refused at `loc` (an AI provider's `base_url` shares the policy, decisions §20). */
export async function checkEndpointUrl(
  raw: string,
  allowHosts: readonly string[],
  loc: (string | number)[] = ['body', 'url'],
): Promise<string> {
  const refuse = (msg: string) => validationError(loc, msg, 'value_error', { input: raw });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('Not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('The URL must use https://');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw refuse('The URL has no host');
  let allowed: boolean;
  try {
    ({ allowed } = checkLiteralHost(host, allowHosts));
  } catch {
    throw refuse('The host is a private, loopback or link-local address');
  }
  if (url.protocol === 'http:' && !allowed) throw refuse('The URL must use https:// (http:// only for allowed hosts)');
  if (!allowed && !isIP(host) && (await resolvesPrivately(host))) {
    throw refuse('The host resolves to a private, loopback or link-local address');
  }
  return url.toString();
}

// Which network addresses the server may connect to on a user's behalf (media fetching, decisions §7; webhook
// deliveries, decisions §11): never private, loopback, link-local or otherwise special ranges, unless the host is
// explicitly allowed (MEDIA_FETCH_ALLOW_HOSTS, WEBHOOK_ALLOW_HOSTS). One policy, checked at connect time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * True when the address is not public unicast: private, loopback, link-local, carrier-grade NAT, multicast,
 * broadcast, documentation, benchmarking and every other special range that ipaddr.js names. An IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`) is judged by its IPv4 address; every other IPv6 form that carries an IPv4 address
 * (IPv4-compatible `::a.b.c.d`, IPv4-translated, 6to4 `2002::/16`, Teredo `2001::/32`, NAT64 `64:ff9b::/96`) is
 * refused outright, since the address it reaches is not the one it shows. Anything that is not an address is
 * refused too.
 */
export function isPrivateAddress(address: string): boolean {
  const text = canonical(address.replace(/^\[|\]$/g, ''));
  if (text === undefined || !ipaddr.isValid(text)) return true;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(text);
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() !== 'unicast';
    // IPv4-compatible (::/96, deprecated by RFC 4291) has no range name of its own in ipaddr.js.
    if (v6.parts.slice(0, 6).every((part) => part === 0)) return true;
  }
  return parsed.range() !== 'unicast';
}

/**
 * IPv6 in the form the socket will use. ipaddr.js reads any `::a.b.c.d` as IPv4-mapped, while it is the
 * IPv4-compatible `::xxxx:xxxx` (and `64:ff9b::a.b.c.d` is NAT64): the WHATWG URL parser writes the hex form.
 */
function canonical(text: string): string | undefined {
  if (isIP(text.replace(/%.*$/, '')) !== 6) return text;
  try {
    return new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

export function isAllowedHost(hostname: string, allowHosts: readonly string[]): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return allowHosts.includes(host);
}

/** Refused by the address policy; the message names the host, never more. */
export class AddressRefused extends Error {}

/**
 * A DNS lookup for http(s) requests that refuses hosts resolving to any non-public address, unless `allowed`.
 * Checked at connect time, so a DNS answer cannot change between the check and the connection.
 */
export function guardedLookup(allowed: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.find((entry) => isPrivateAddress(entry.address));
      if (refused && !allowed) {
        return callback(new AddressRefused(`${hostname} resolves to a private address`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new AddressRefused(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Refuses a literal IP host that is not public (a name is checked by `guardedLookup` at connect time). */
export function checkLiteralHost(hostname: string, allowHosts: readonly string[]): { allowed: boolean } {
  const host = hostname.replace(/^\[|\]$/g, '');
  const allowed = isAllowedHost(host, allowHosts);
  if (isIP(host) && isPrivateAddress(host) && !allowed) throw new AddressRefused(`${host} is a private address`);
  return { allowed };
}

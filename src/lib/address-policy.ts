// Which network addresses the server may connect to on a user's behalf (media fetching, decisions §7; webhook
// deliveries, decisions §11): never private, loopback, link-local or otherwise special ranges, unless the host is
// explicitly allowed (MEDIA_FETCH_ALLOW_HOSTS, WEBHOOK_ALLOW_HOSTS). One policy, checked at connect time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** True when the address is not publicly routable (IPv4-mapped IPv6 is judged by its IPv4 address). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) return blocked.check(address, 'ipv6');
  return true;
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

// The one address policy (media fetching and webhook deliveries): only public unicast addresses pass, whatever the
// spelling, including IPv6 forms that carry a private or loopback IPv4 address (D26).
import { describe, expect, it } from 'vitest';
import { AddressRefused, checkLiteralHost, guardedLookup, isPrivateAddress } from '../../../src/lib/address-policy.ts';

const refused = [
  // IPv4 special ranges
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '127.0.0.1',
  '127.255.255.254',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.1',
  '192.168.1.1',
  '198.18.0.1',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // other spellings of loopback and private IPv4
  '127.1',
  '0x7f.0.0.1',
  '0177.0.0.1',
  '2130706433',
  // IPv6 special ranges
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  '[::1]',
  'fe80::1',
  'fe80::1%eth0',
  'fc00::1',
  'fd12:3456:789a::1',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '100::1',
  // IPv4-mapped (judged by the IPv4 address)
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::FFFF:10.0.0.1',
  '0:0:0:0:0:ffff:192.168.0.1',
  '::ffff:169.254.169.254',
  // IPv4-compatible
  '::127.0.0.1',
  '::7f00:1',
  '::10.0.0.1',
  '::8.8.8.8',
  // IPv4-translated (RFC 6145)
  '::ffff:0:127.0.0.1',
  // 6to4 carrying loopback / private
  '2002:7f00:1::',
  '2002:7f00:0001::1',
  '2002:0a00:0001::',
  '2002:c0a8:0101::1',
  // Teredo
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  '2001::1',
  // NAT64
  '64:ff9b::127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::a00:1',
  '64:ff9b::8.8.8.8',
  '64:ff9b:1::1',
  // not an address at all
  '',
  'localhost',
  'example.com',
  '1.2.3.4.5',
  '::g',
];

const allowed = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001::1'];

describe('isPrivateAddress', () => {
  it.each(refused)('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });
  it.each(allowed)('allows the public address %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('checkLiteralHost', () => {
  it('refuses a literal private host unless it is allowed, and lets names through to the lookup', () => {
    expect(() => checkLiteralHost('[::ffff:127.0.0.1]', [])).toThrow(AddressRefused);
    expect(() => checkLiteralHost('[2002:7f00:1::]', [])).toThrow(AddressRefused);
    expect(() => checkLiteralHost('10.0.0.1', [])).toThrow(AddressRefused);
    expect(checkLiteralHost('127.0.0.1', ['127.0.0.1'])).toEqual({ allowed: true });
    expect(checkLiteralHost('8.8.8.8', [])).toEqual({ allowed: false });
    expect(checkLiteralHost('media.example.com', [])).toEqual({ allowed: false });
  });
});

describe('guardedLookup', () => {
  const lookup = (allowedHost: boolean, host: string) =>
    new Promise<{ error: Error | null; address: string }>((resolve) =>
      guardedLookup(allowedHost)(host, {}, (error, address) => resolve({ error, address: String(address) })),
    );
  it('refuses a name that resolves to loopback, unless the host is allowed', async () => {
    const refusedLookup = await lookup(false, 'localhost');
    expect(refusedLookup.error).toBeInstanceOf(AddressRefused);
    const allowedLookup = await lookup(true, 'localhost');
    expect(allowedLookup.error).toBeNull();
    expect(isPrivateAddress(allowedLookup.address)).toBe(true);
  });
});

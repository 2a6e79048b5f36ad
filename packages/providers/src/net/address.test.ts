import { describe, expect, it } from 'vitest';
import { cidrContains, formatIp, parseCidr, parseIp, specialRange } from './address.ts';

const canonical = (host: string) => {
  const ip = parseIp(host);
  return ip ? formatIp(ip) : undefined;
};
const rangeOf = (host: string) => {
  const ip = parseIp(host);
  if (!ip) throw new Error(`not an IP: ${host}`);
  return specialRange(ip);
};

describe('parseIp: every spelling resolvers accept', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0X7F000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['10.0x10.1', '10.16.0.1'],
    ['169.254.169.254', '169.254.169.254'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['::ffff:7f00:1', '::ffff:7f00:1'],
    ['[::ffff:2130706433]', undefined],
    ['fe80::1%eth0', 'fe80::1'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
  ])('%s -> %s', (host, want) => {
    expect(canonical(host)).toBe(want);
  });

  it.each([
    'localhost',
    'example.com',
    'deadbeef',
    'cafe.be',
    '256.0.0.1',
    '1.2.3.4.5',
    '4294967296',
    '0x1g',
    '',
    '::g',
  ])('%s is not an IP literal', (host) => {
    expect(parseIp(host)).toBeUndefined();
  });
});

describe('specialRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['::ffff:192.168.1.10', 'private'],
    ['64:ff9b::192.168.1.10', 'private'],
    ['64:ff9b:1::1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456::1', 'unique_local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['0.1.2.3', 'this_network'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.0.8', 'protocol_assignments'],
    ['2001::1', 'protocol_assignments'],
    ['2002:7f00:1::1', 'tunnel'],
    ['::127.0.0.1', 'reserved'],
    ['fec0::1', 'site_local'],
  ])('%s is %s', (host, range) => {
    expect(rangeOf(host)).toBe(range);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
  ])('%s is public', (host) => {
    expect(rangeOf(host)).toBeUndefined();
  });
});

describe('CIDR ranges', () => {
  it('reads addresses and ranges, and refuses what is neither', () => {
    expect(parseCidr('192.168.1.0/24')?.prefix).toBe(24);
    expect(parseCidr('10.0.0.7')?.prefix).toBe(32);
    expect(parseCidr('fd00::/8')?.prefix).toBe(8);
    expect(parseCidr('::1')?.prefix).toBe(128);
    for (const bad of ['192.168.1.0/33', '10/8', '2130706433', 'nas.local', '10.0.0.0/8/1', 'fd00::/129', '10.0.0.0/x'])
      expect(parseCidr(bad), bad).toBeUndefined();
  });

  it('holds exactly the addresses under its prefix', () => {
    const lan = parseCidr('192.168.1.0/24')!;
    expect(cidrContains(lan, parseIp('192.168.1.255')!)).toBe(true);
    expect(cidrContains(lan, parseIp('192.168.2.1')!)).toBe(false);
    const odd = parseCidr('172.16.0.0/12')!;
    expect(cidrContains(odd, parseIp('172.31.1.1')!)).toBe(true);
    expect(cidrContains(odd, parseIp('172.32.1.1')!)).toBe(false);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('8.8.8.8')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('::1')!)).toBe(false);
  });
});

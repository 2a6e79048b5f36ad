import { isIPv6 } from 'node:net';

/** An IP address as bytes: 4 for IPv4, 16 for IPv6. */
export interface Ip {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/** An address range: the first `prefix` bits of `ip`. */
export interface Cidr {
  readonly ip: Ip;
  readonly prefix: number;
}

/**
 * One part of a numeric IPv4 host as inet_aton(3) and URL parsers read it: decimal, octal with a
 * leading 0, or hex with 0x. Undefined when the part is not a number.
 */
function ipv4Part(part: string): number | undefined {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]*$/.test(part)) return parseInt(part, 8);
  if (/^[1-9][0-9]*$/.test(part)) return Number(part);
  return undefined;
}

/**
 * Reads an IPv4 address in every spelling resolvers accept: "127.0.0.1", "2130706433",
 * "0x7f000001", "0177.0.0.1", "127.1", "127.0.1", with at most one trailing dot.
 */
function parseIpv4(text: string): Ip | undefined {
  const parts = text.replace(/\.$/, '').split('.');
  if (parts.length === 0 || parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    const n = ipv4Part(p);
    if (n === undefined || !Number.isSafeInteger(n)) return undefined;
    nums.push(n);
  }
  // The last part fills the bytes the others leave ("127.1" is 127.0.0.1).
  const last = nums.pop() as number;
  if (nums.some((n) => n > 255) || last >= 256 ** (4 - nums.length)) return undefined;
  let value = last;
  nums.forEach((n, i) => (value += n * 256 ** (3 - i)));
  const bytes = new Uint8Array(4);
  for (let i = 3; i >= 0; i--) {
    bytes[i] = value % 256;
    value = Math.floor(value / 256);
  }
  return { family: 4, bytes };
}

/** Reads an IPv6 address (brackets, a zone "%eth0" and a dotted IPv4 tail allowed). */
function parseIpv6(text: string): Ip | undefined {
  let bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  const lastColon = bare.lastIndexOf(':');
  const tail = bare.slice(lastColon + 1);
  if (tail.includes('.')) {
    // "::ffff:127.0.0.1" is "::ffff:7f00:1".
    const v4 = parseIpv4(tail);
    if (!v4) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = v4.bytes;
    bare = `${bare.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const hex = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const gap = bare.indexOf('::');
  let groups: number[];
  if (gap < 0) groups = hex(bare);
  else {
    const left = hex(bare.slice(0, gap));
    const right = hex(bare.slice(gap + 2));
    groups = [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
  }
  if (groups.length !== 8 || groups.some((g) => !(g >= 0 && g <= 0xffff))) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return { family: 6, bytes };
}

/**
 * The address a host names when it is an IP literal in any spelling (the forms above, IPv6 with or
 * without brackets); undefined for a name that needs DNS.
 */
export function parseIp(host: string): Ip | undefined {
  const h = host.trim();
  if (h.includes(':')) return parseIpv6(h);
  return /^[0-9a-fx.]+$/i.test(h) ? parseIpv4(h) : undefined;
}

/** The usual text of an address ("127.0.0.1", "::ffff:7f00:1"), as node:net connects to it. */
export function formatIp(ip: Ip): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0)).toString(16));
  // The longest run of zero groups (two or more) becomes "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** "10.0.0.0/8", "fd00::/8", or a single address (a /32 or /128). */
export function parseCidr(text: string): Cidr | undefined {
  const [addr = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const ip = addr.includes(':') ? parseIpv6(addr) : /^\d{1,3}(\.\d{1,3}){3}$/.test(addr) ? parseIpv4(addr) : undefined;
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  return prefix <= max ? { ip, prefix } : undefined;
}

/** Whether `ip` lies in `cidr` (an IPv4 range never holds an IPv6 address, nor the reverse). */
export function cidrContains(cidr: Cidr, ip: Ip): boolean {
  if (cidr.ip.family !== ip.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((cidr.ip.bytes[i] ?? 0) & mask) !== ((ip.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** Why an address is not one on the public internet. */
export type SpecialRange =
  | 'this_network'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'protocol_assignments'
  | 'discard'
  | 'tunnel';

function ranges(list: [string, SpecialRange][]): [Cidr, SpecialRange][] {
  return list.map(([text, name]) => [parseCidr(text) as Cidr, name]);
}

/** IANA's special-purpose IPv4 registry, and the blocks above it that are no unicast host. */
const IPV4_SPECIAL = ranges([
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'this_network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'protocol_assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'protocol_assignments'],
  ['192.52.193.0/24', 'protocol_assignments'],
  ['192.88.99.0/24', 'tunnel'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'protocol_assignments'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
]);

/** IANA's special-purpose IPv6 registry (blocks that embed an IPv4 address are handled apart). */
const IPV6_SPECIAL = ranges([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  ['::/8', 'reserved'],
  ['100::/64', 'discard'],
  ['2001::/23', 'protocol_assignments'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', 'tunnel'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'site_local'],
  ['ff00::/8', 'multicast'],
]);

const MAPPED = parseCidr('::ffff:0:0/96') as Cidr;
const NAT64 = parseCidr('64:ff9b::/96') as Cidr;

/**
 * The IPv4 address an IPv6 one carries and reaches: an IPv4-mapped address (::ffff:a.b.c.d, which
 * a dual-stack socket connects to over IPv4) or the well-known NAT64 prefix (64:ff9b::a.b.c.d,
 * which a NAT64 gateway forwards to that IPv4 address).
 */
export function embeddedIpv4(ip: Ip): Ip | undefined {
  if (ip.family !== 6 || !(cidrContains(MAPPED, ip) || cidrContains(NAT64, ip))) return undefined;
  return { family: 4, bytes: ip.bytes.slice(12) };
}

/**
 * Which special range an address is in (loopback, private, link-local, unique local, shared
 * CGNAT space, unspecified, multicast, broadcast, documentation, ...), judged by the IPv4 address
 * it carries where it carries one; undefined for an address on the public internet.
 */
export function specialRange(ip: Ip): SpecialRange | undefined {
  const inner = embeddedIpv4(ip);
  if (inner) return specialRange(inner);
  const table = ip.family === 4 ? IPV4_SPECIAL : IPV6_SPECIAL;
  for (const [cidr, name] of table) if (cidrContains(cidr, ip)) return name;
  return undefined;
}

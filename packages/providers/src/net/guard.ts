import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { ProviderError } from '../api/errors.ts';
import {
  cidrContains,
  embeddedIpv4,
  formatIp,
  parseCidr,
  parseIp,
  specialRange,
  type Cidr,
  type Ip,
} from './address.ts';

/** The one answer for every refused address: it names no address, port or what answered there. */
export function addressNotAllowed(): ProviderError {
  return new ProviderError(
    'address_not_allowed',
    'connections to loopback, private and other reserved network addresses are not allowed',
  );
}

/** A checked address to connect to. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Reads an allow-list of private networks: "true" (every address), or comma-separated addresses
 * and CIDR ranges ("192.168.1.0/24, fd00::/8"). Throws naming the first entry that is neither.
 */
export function parseAllowList(text: string): true | Cidr[] {
  if (text.trim().toLowerCase() === 'true') return true;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const cidr = parseCidr(entry);
      if (!cidr) throw new Error(`not an address or a CIDR range: ${entry}`);
      return cidr;
    });
}

/**
 * The outbound-connection guard every address a user supplies goes through (a cloud's server):
 * it refuses loopback, private, link-local, unique-local, shared (CGNAT), unspecified, multicast,
 * broadcast and the other special-purpose addresses (address.ts), in every spelling and after DNS
 * resolution, unless the operator allowed that network. Connections are made to the address that
 * was checked (its `lookup` answers only checked addresses), so a DNS answer that changes between
 * the check and the connection cannot point them elsewhere; every new connection is checked again.
 */
export class OutboundGuard {
  private readonly allowAll: boolean;
  private readonly allowed: readonly Cidr[];

  /** `allow`: true for every address, or the private networks the operator allows. */
  constructor(allow: true | readonly Cidr[] = []) {
    this.allowAll = allow === true;
    this.allowed = allow === true ? [] : allow;
  }

  /** Whether a connection to `ip` may be made. */
  allows(ip: Ip): boolean {
    if (this.allowAll || specialRange(ip) === undefined) return true;
    const inner = embeddedIpv4(ip);
    return this.allowed.some((c) => cidrContains(c, ip) || (inner !== undefined && cidrContains(c, inner)));
  }

  /** Throws `address_not_allowed` when `host` is an IP literal (any spelling) that may not be reached. */
  checkHost(host: string): void {
    const ip = parseIp(host);
    if (ip && !this.allows(ip)) throw addressNotAllowed();
  }

  /**
   * Every address `host` stands for (itself when it is an IP literal, else what DNS answers),
   * each checked: one refused address refuses the host.
   */
  async resolveAll(host: string, family: 0 | 4 | 6 = 0): Promise<CheckedAddress[]> {
    const literal = parseIp(host);
    if (literal) {
      if (!this.allows(literal)) throw addressNotAllowed();
      return [{ address: formatIp(literal), family: literal.family }];
    }
    const answers = await dnsLookup(host, { all: true, family, order: 'verbatim' });
    const out: CheckedAddress[] = [];
    for (const a of answers) {
      const ip = parseIp(a.address);
      if (!ip || !this.allows(ip)) throw addressNotAllowed();
      out.push({ address: formatIp(ip), family: ip.family });
    }
    if (out.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return out;
  }

  /** The first checked address of `host`. */
  async resolve(host: string): Promise<CheckedAddress> {
    return (await this.resolveAll(host))[0] as CheckedAddress;
  }

  /**
   * A `lookup` for node:net, node:tls and node:http connections: it answers only checked
   * addresses, so the socket connects to what was checked. Node skips `lookup` for a host that is
   * already an IP address: pass such hosts through `connectTarget`, which checks them itself.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const opts = options as LookupOptions;
    const family =
      opts.family === 4 || opts.family === 'IPv4' ? 4 : opts.family === 6 || opts.family === 'IPv6' ? 6 : 0;
    this.resolveAll(hostname, family).then(
      (list) => {
        const first = list[0] as CheckedAddress;
        if (opts.all) callback(null, list as LookupAddress[]);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };

  /**
   * Options for `net.connect`, `tls.connect` or `http.request` reaching `host`: an IP literal in
   * any spelling is checked now (throws `address_not_allowed`) and given in its usual form; a
   * name is resolved and checked by `lookup` when the connection is made.
   */
  connectTarget(host: string): { host: string; lookup: LookupFunction } {
    const ip = parseIp(host);
    if (!ip) return { host, lookup: this.lookup };
    if (!this.allows(ip)) throw addressNotAllowed();
    return { host: formatIp(ip), lookup: this.lookup };
  }
}

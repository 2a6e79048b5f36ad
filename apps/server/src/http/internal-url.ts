import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';

/**
 * How the other API processes reach this one when SKYFERRY_INTERNAL_URL is not set: the address
 * it listens on, or, listening on every interface, its first non-internal IPv4 address (a
 * container's or a pod's own address), else loopback.
 */
export function internalUrlOf(address: string | AddressInfo | null, host: string): string {
  const port = typeof address === 'object' && address ? address.port : 0;
  const listen = host.replace(/^\[(.*)\]$/, '$1');
  let name = listen;
  if (listen === '0.0.0.0' || listen === '::' || listen === '') {
    const mine = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    name = mine?.address ?? '127.0.0.1';
  } else if (listen === 'localhost') name = '127.0.0.1';
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`;
}

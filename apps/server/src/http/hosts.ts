import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Code } from '@skyferry/contract';
import type { Config } from '../config.ts';
import { ApiError } from './errors.ts';

/**
 * The name in a Host (or X-Forwarded-Host) value, lower-cased, without port, brackets or a final
 * dot: 'Sky.Example.:8443' is 'sky.example', '[::1]:8080' is '::1'. undefined when malformed.
 */
export function hostNameOf(value: string | undefined): string | undefined {
  const v = value?.trim().toLowerCase();
  if (!v || v.length > 300) return undefined;
  if (v.startsWith('[')) {
    const m = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(v);
    return m?.[1] && isIP(m[1]) === 6 ? m[1] : undefined;
  }
  const m = /^([a-z0-9_.-]+?)\.?(?::\d{1,5})?$/.exec(v);
  return m?.[1] || undefined;
}

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));
}

function isWildcard(listen: string): boolean {
  return listen === '0.0.0.0' || listen === '::' || listen === '0:0:0:0:0:0:0:0';
}

/**
 * Which host names the server answers (the DNS-rebinding guard): loopback names and addresses
 * (they cannot be made to point elsewhere), HOST when it names one address, PUBLIC_URL's host,
 * SKYFERRY_ALLOWED_HOSTS, and, when listening on every interface, any IP address (a page loaded
 * from an IP address is the server's own; only a name can be rebound to it).
 */
export function hostPolicy(config: Config): (name: string) => boolean {
  const listen = config.host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const wildcard = isWildcard(listen);
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of config.allowedHosts) {
    if (entry.startsWith('.')) suffixes.push(entry);
    else exact.add(entry);
  }
  if (!wildcard) exact.add(listen);
  const publicHost = hostNameOf(new URL(config.publicUrl).host);
  if (publicHost) exact.add(publicHost);
  return (name) =>
    isLoopbackName(name) ||
    exact.has(name) ||
    suffixes.some((s) => name === s.slice(1) || name.endsWith(s)) ||
    (wildcard && isIP(name) !== 0);
}

/** The host names a request carries: its Host, and X-Forwarded-Host when a trusted proxy sent it. */
function requestHosts(request: FastifyRequest): Array<string | undefined> {
  const raw = request.headers.host ?? request.headers[':authority'];
  const given = Array.isArray(raw) ? raw[0] : raw;
  // request.host is X-Forwarded-Host only when SKYFERRY_TRUST_PROXY trusts the connecting address.
  return request.host === given ? [given] : [given, request.host];
}

/**
 * Answers 421 (in the envelope) to a request for a host the server is not configured for, so a
 * page on another name that resolves to this server (DNS rebinding) cannot use it. `/healthz`
 * stays open: load balancers and orchestrators probe it by an internal address or name, and it
 * tells nothing beyond liveness and the database kind.
 */
export function installHostCheck(app: FastifyInstance, config: Config): void {
  const allowed = hostPolicy(config);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.url === '/healthz') return;
    for (const value of requestHosts(request)) {
      const name = hostNameOf(value);
      if (name === undefined || !allowed(name)) {
        throw new ApiError(Code.HOST_NOT_ALLOWED, 'host_not_allowed', { host: name ?? '?' });
      }
    }
  });
}

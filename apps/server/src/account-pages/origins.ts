import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';

/** The server's own address as the caller reached it (used when PUBLIC_URL is not set). */
export function selfOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Where links to the server's own pages point: PUBLIC_URL, else the address the request came to. */
export function publicBase(config: Config, request: FastifyRequest): string {
  return config.publicUrlExplicit ? config.publicUrl : selfOrigin(request);
}

function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.origin !== 'null') return u.origin;
    // Custom schemes (a desktop shell's app://host): scheme and host, as the config lists them.
    return u.host ? `${u.protocol}//${u.host}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Origins whose windows may frame the account pages and receive their messages: the server's own
 * (PUBLIC_URL and the address the page was loaded from) and SKYFERRY_ALLOWED_ORIGINS.
 */
export function allowedOrigins(config: Config, request: FastifyRequest): string[] {
  const list = [originOf(publicBase(config, request)), originOf(selfOrigin(request)), ...config.allowedOrigins];
  return [...new Set(list.filter((o): o is string => o !== undefined))];
}

/** The requested client origin when it is allowed; undefined otherwise (nothing is posted then). */
export function allowedClientOrigin(
  config: Config,
  request: FastifyRequest,
  requested: string | undefined,
): string | undefined {
  if (requested === undefined || requested === '') return originOf(publicBase(config, request));
  const origin = originOf(requested);
  return origin && allowedOrigins(config, request).includes(origin) ? origin : undefined;
}

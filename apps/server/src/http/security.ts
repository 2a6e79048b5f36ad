import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * A strict Content-Security-Policy and the usual hardening headers on every response.
 * Styles allow 'unsafe-inline' because component libraries set style attributes; scripts never do.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "frame-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

/** The policy with more origins pages may frame (the operator's external apps). */
export function contentSecurityPolicy(frameOrigins: readonly string[]): string {
  if (frameOrigins.length === 0) return CONTENT_SECURITY_POLICY;
  return CONTENT_SECURITY_POLICY.replace("frame-src 'self'", `frame-src 'self' ${frameOrigins.join(' ')}`);
}

/** Built files first-party apps load from their opaque sandbox origin (module scripts are CORS requests). */
const APP_ASSET = /^\/(assets|apps)\//;

/** Sets the headers on one reply (also used where Fastify answers before any hook runs). */
export function applySecurityHeaders(reply: FastifyReply, url: string, frameOrigins: readonly string[] = []): void {
  if (!reply.hasHeader('content-security-policy'))
    reply.header('content-security-policy', contentSecurityPolicy(frameOrigins));
  if (APP_ASSET.test(url)) reply.header('access-control-allow-origin', '*');
  reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'strict-origin-when-cross-origin');
  reply.header('x-frame-options', 'SAMEORIGIN');
  reply.header('cross-origin-opener-policy', 'same-origin-allow-popups');
  reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=()');
  if (url.startsWith('/api/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
}

export function installSecurityHeaders(app: FastifyInstance, frameOrigins: () => readonly string[] = () => []): void {
  app.addHook('onSend', async (request, reply, payload) => {
    applySecurityHeaders(reply, request.url, frameOrigins());
    return payload;
  });
}

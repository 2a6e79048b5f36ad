import type { CloudIdentity } from '../clouds.ts';
import type { SecretBox } from '../crypto.ts';

/** What a signed download link carries: whose, which cloud, which paths, until when. */
export interface LinkClaims {
  identity: CloudIdentity;
  cloudId: string;
  paths: string[];
  /** The zip's name for folders and several files. */
  name?: string;
  expiresAt: number;
}

interface Wire {
  o: string;
  c: string;
  p: string[];
  n?: string;
  e: number;
}

const PURPOSE = 'download-link';
export const LINK_LIFETIME_MS = 5 * 60_000;

/**
 * Download links a browser can navigate to without headers: the claims in base64url JSON and a MAC
 * under a key derived from the master secret. Short-lived; anyone holding one can fetch what it
 * names until it expires, like any signed URL, so it is issued only to the cloud's owner.
 */
export function signLink(box: SecretBox, claims: LinkClaims): string {
  const o = 'userId' in claims.identity ? `u:${claims.identity.userId}` : `v:${claims.identity.visitorId}`;
  const wire: Wire = { o, c: claims.cloudId, p: claims.paths, e: claims.expiresAt };
  if (claims.name) wire.n = claims.name;
  const body = Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url');
  return `${body}.${box.mac(PURPOSE, body)}`;
}

/** The claims of a valid, unexpired link; undefined otherwise. */
export function verifyLink(box: SecretBox, token: string, now = Date.now()): LinkClaims | undefined {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const body = token.slice(0, dot);
  if (!box.verifyMac(PURPOSE, body, token.slice(dot + 1))) return undefined;
  let wire: Wire;
  try {
    wire = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Wire;
  } catch {
    return undefined;
  }
  if (typeof wire.e !== 'number' || wire.e < now) return undefined;
  if (typeof wire.c !== 'string' || !Array.isArray(wire.p) || typeof wire.o !== 'string') return undefined;
  const identity: CloudIdentity | undefined = wire.o.startsWith('u:')
    ? { kind: 'user', userId: wire.o.slice(2) }
    : wire.o.startsWith('v:')
      ? { kind: 'visitor', visitorId: wire.o.slice(2) }
      : undefined;
  if (!identity) return undefined;
  return { identity, cloudId: wire.c, paths: wire.p.map(String), name: wire.n, expiresAt: wire.e };
}

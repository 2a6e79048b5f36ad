import { createHash, randomBytes } from 'node:crypto';
import { ProviderError, toProviderError } from '../../api/errors.ts';
import type { ProviderContext } from '../../api/registry.ts';
import { parseRetryAfter } from '../../pacer.ts';
import { oauthClientOf, oauthServiceInfo, type OAuthClientCredentials, type OAuthServiceName } from './services.ts';

/**
 * OAuth 2.0 tokens of one connected cloud: the grant calls (RFC 6749 4.1.3 code exchange with the
 * RFC 7636 verifier, 6 refresh, RFC 7009 revocation) and a token source that refreshes ahead of
 * expiry and after a 401, persists refreshed tokens through `ctx.saveState` (the clouds service
 * keeps that state encrypted), and turns `invalid_grant` into `auth_expired` (reauthorise).
 */

export interface OAuthToken {
  access_token: string;
  refresh_token?: string;
  /** When the access token expires, ms since the epoch. */
  expiry?: number;
  /** Lifetime the service gave the access token, seconds. */
  expires_in?: number;
  token_type?: string;
  scope?: string;
  /** OpenID Connect ID token, when the scopes asked for one. */
  id_token?: string;
}

interface TokenEndpointResponse {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number | string;
  token_type?: string;
  scope?: string;
  id_token?: string;
  error?: string;
  error_description?: string;
}

/** PKCE pair (RFC 7636, S256). */
export function createPkce(): { verifier: string; challenge: string; method: 'S256' } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), method: 'S256' };
}

async function tokenRequest(
  tokenUrl: string,
  client: OAuthClientCredentials,
  form: Record<string, string>,
  signal?: AbortSignal,
): Promise<OAuthToken> {
  const body = new URLSearchParams({ ...form, client_id: client.clientId, client_secret: client.clientSecret });
  let res: Response;
  try {
    res = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    throw toProviderError(err);
  }
  const text = await res.text();
  let json: TokenEndpointResponse = {};
  try {
    json = JSON.parse(text) as TokenEndpointResponse;
  } catch {
    // not JSON: handled below by status
  }
  if (!res.ok || !json.access_token) {
    const code = json.error ?? `http_${res.status}`;
    const description = json.error_description ?? text.slice(0, 200);
    if (res.status === 429 || res.status >= 500) {
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
      throw new ProviderError(
        res.status === 429 ? 'rate_limited' : 'server',
        `token endpoint: ${code} ${description}`,
        {
          serviceCode: code,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        },
      );
    }
    if (code === 'invalid_grant') {
      throw new ProviderError('auth_expired', 'The authorization was revoked or has expired; reauthorize this cloud.', {
        serviceCode: code,
      });
    }
    if (code === 'invalid_client' || code === 'unauthorized_client') {
      throw new ProviderError(
        'auth_invalid',
        `The OAuth client was refused (${code}); check the operator's client id and secret.`,
        { serviceCode: code },
      );
    }
    throw new ProviderError('auth_invalid', `token endpoint refused the request: ${code} ${description}`.trim(), {
      serviceCode: code,
    });
  }
  const expiresIn = json.expires_in !== undefined ? Number(json.expires_in) : undefined;
  const token: OAuthToken = { access_token: json.access_token };
  if (json.refresh_token) token.refresh_token = json.refresh_token;
  if (expiresIn !== undefined && Number.isFinite(expiresIn)) {
    token.expires_in = expiresIn;
    token.expiry = Date.now() + expiresIn * 1000;
  }
  if (json.token_type) token.token_type = json.token_type;
  if (json.scope) token.scope = json.scope;
  if (json.id_token) token.id_token = json.id_token;
  return token;
}

/** Exchanges an authorization code (with the PKCE verifier) for tokens. */
export function exchangeCode(
  tokenUrl: string,
  client: OAuthClientCredentials,
  input: { code: string; redirectUri: string; codeVerifier: string },
  signal?: AbortSignal,
): Promise<OAuthToken> {
  return tokenRequest(
    tokenUrl,
    client,
    {
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
      code_verifier: input.codeVerifier,
    },
    signal,
  );
}

export function refreshGrant(
  tokenUrl: string,
  client: OAuthClientCredentials,
  refreshToken: string,
  signal?: AbortSignal,
): Promise<OAuthToken> {
  return tokenRequest(tokenUrl, client, { grant_type: 'refresh_token', refresh_token: refreshToken }, signal);
}

/** Revokes a grant (best effort: Microsoft has no revocation endpoint). */
export async function revokeGrant(
  service: OAuthServiceName,
  client: OAuthClientCredentials,
  token: OAuthToken,
): Promise<boolean> {
  const info = oauthServiceInfo(service);
  if (!info.revokeUrl) return false;
  if (info.revokeStyle === 'dropbox') {
    const res = await fetch(info.revokeUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.access_token}` },
    });
    return res.ok;
  }
  const body = new URLSearchParams({
    token: token.refresh_token ?? token.access_token,
    client_id: client.clientId,
    client_secret: client.clientSecret,
  });
  const res = await fetch(info.revokeUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return res.ok;
}

/** The claims of an OpenID Connect ID token received straight from the token endpoint (no signature check needed then, OIDC Core 3.1.3.7). */
export function idTokenClaims(idToken: string | undefined): Record<string, unknown> {
  if (!idToken) return {};
  const payload = idToken.split('.')[1];
  if (!payload) return {};
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

// Refreshes in flight and recent rotations, per refresh token, shared by every provider instance
// of the process: two instances of one cloud must not both spend a single-use refresh token.
const inflight = new Map<string, Promise<OAuthToken>>();
const rotated = new Map<string, { token: OAuthToken; at: number }>();
const ROTATION_MEMORY_MS = 10 * 60_000;

function rememberRotation(old: string, token: OAuthToken): void {
  const now = Date.now();
  rotated.set(old, { token, at: now });
  for (const [k, v] of rotated) if (now - v.at > ROTATION_MEMORY_MS) rotated.delete(k);
}

export interface TokenSourceOptions {
  service: OAuthServiceName;
  token: OAuthToken;
  /** The cloud's own client (tests, live runs); otherwise the operator's configured client. */
  client?: OAuthClientCredentials;
  /** Token endpoint override (tests); otherwise the service's, with process overrides. */
  tokenUrl?: string;
  ctx?: ProviderContext;
  /** Refresh this long before expiry (default: a fifth of the lifetime, at most 5 minutes). */
  marginMs?: number;
}

export class TokenSource {
  private token: OAuthToken;
  private readonly service: OAuthServiceName;
  private readonly client: OAuthClientCredentials | undefined;
  private readonly tokenUrl: string | undefined;
  private readonly ctx: ProviderContext | undefined;
  private readonly marginMs: number | undefined;
  /** Refreshes done by this source (tests). */
  refreshes = 0;

  constructor(opts: TokenSourceOptions) {
    this.service = opts.service;
    this.token = { ...opts.token };
    this.client = opts.client;
    this.tokenUrl = opts.tokenUrl;
    this.ctx = opts.ctx;
    this.marginMs = opts.marginMs;
  }

  /** The current token (for tests and for the OAuth flow's own checks). */
  current(): OAuthToken {
    return { ...this.token };
  }

  private margin(): number {
    if (this.marginMs !== undefined) return this.marginMs;
    const lifetime = (this.token.expires_in ?? 3600) * 1000;
    return Math.min(5 * 60_000, lifetime / 5);
  }

  /** A valid access token, refreshed first when it expires soon. */
  async accessToken(signal?: AbortSignal): Promise<string> {
    const t = this.token;
    if (t.expiry !== undefined && t.refresh_token && Date.now() >= t.expiry - this.margin()) {
      await this.refresh(signal);
    }
    return this.token.access_token;
  }

  /** Called after a 401 with the token that was refused: refreshes unless another call already did. */
  async afterUnauthorized(refused: string, signal?: AbortSignal): Promise<string> {
    if (this.token.access_token !== refused) return this.token.access_token;
    if (!this.token.refresh_token) {
      throw new ProviderError(
        'auth_expired',
        'The access token was refused and there is no refresh token; reauthorize this cloud.',
        { serviceCode: '401' },
      );
    }
    await this.refresh(signal);
    return this.token.access_token;
  }

  async refresh(signal?: AbortSignal): Promise<void> {
    const old = this.token.refresh_token;
    if (!old) throw new ProviderError('auth_expired', 'No refresh token; reauthorize this cloud.');
    const known = rotated.get(old);
    if (known) {
      this.token = { ...known.token };
      return;
    }
    let p = inflight.get(old);
    if (!p) {
      const client = this.client ?? oauthClientOf(this.service);
      if (!client) {
        throw new ProviderError(
          'auth_expired',
          `No ${this.service} OAuth client is configured on this server to refresh the access token.`,
        );
      }
      const url = this.tokenUrl ?? oauthServiceInfo(this.service).tokenUrl;
      p = refreshGrant(url, client, old, signal).then((fresh) => {
        const next: OAuthToken = { ...fresh, refresh_token: fresh.refresh_token ?? old };
        if (next.refresh_token !== old) rememberRotation(old, next);
        return next;
      });
      inflight.set(old, p);
      p.finally(() => inflight.delete(old)).catch(() => undefined);
    }
    const next = await p;
    this.token = { ...next };
    this.refreshes++;
    if (this.ctx?.saveState) {
      const { id_token: _unused, ...persisted } = next;
      await this.ctx.saveState({ oauth_token: persisted });
    }
  }
}

/** Reads the token of a cloud: the refreshed one kept in state wins over the one in the credentials. */
export function tokenFromCredentials(credentials: Record<string, unknown>, ctx?: ProviderContext): OAuthToken {
  const saved = ctx?.state?.oauth_token as OAuthToken | undefined;
  const fromCreds: OAuthToken = {
    access_token: String(credentials.access_token ?? ''),
    ...(credentials.refresh_token ? { refresh_token: String(credentials.refresh_token) } : {}),
    ...(credentials.expiry !== undefined && credentials.expiry !== '' ? { expiry: Number(credentials.expiry) } : {}),
    ...(credentials.expires_in !== undefined ? { expires_in: Number(credentials.expires_in) } : {}),
    ...(credentials.scope ? { scope: String(credentials.scope) } : {}),
  };
  // A reauthorisation replaces the credentials: its refresh token differs from the saved one's lineage.
  if (saved?.access_token && saved.refresh_token && (saved.expiry ?? 0) >= (fromCreds.expiry ?? 0)) return saved;
  if (!fromCreds.access_token && !fromCreds.refresh_token) {
    throw new ProviderError('auth_invalid', 'No OAuth token in the credentials; connect this cloud again.');
  }
  return fromCreds;
}

/** Client credentials carried by a cloud's own credentials (tests and live runs), if any. */
export function clientFromCredentials(credentials: Record<string, unknown>): OAuthClientCredentials | undefined {
  if (typeof credentials.client_id === 'string' && typeof credentials.client_secret === 'string') {
    return { clientId: credentials.client_id, clientSecret: credentials.client_secret };
  }
  return undefined;
}

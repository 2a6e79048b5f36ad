import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  listen,
  makeRequest,
  sendJson,
  sendText,
  Router,
  type EmuRequest,
  type RunningServer,
} from '../common/http.ts';

/**
 * An emulated OAuth 2.0 authorization server, shared by every service emulator (each real service
 * runs its own, with the same protocol). It follows:
 * - RFC 6749 The OAuth 2.0 Authorization Framework, https://www.rfc-editor.org/rfc/rfc6749
 *   (4.1 authorization code grant, 5.1 token response, 5.2 error response, 6 refreshing a token)
 * - RFC 7636 Proof Key for Code Exchange (PKCE), https://www.rfc-editor.org/rfc/rfc7636 (S256, plain)
 * - RFC 7009 Token Revocation, https://www.rfc-editor.org/rfc/rfc7009
 * - Google: "Using OAuth 2.0 for Web Server Applications",
 *   https://developers.google.com/identity/protocols/oauth2/web-server (access_type=offline,
 *   prompt=consent, refresh tokens not rotated, revocation at /revoke, invalid_grant after revocation)
 * - Microsoft identity platform authorization code flow,
 *   https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow (offline_access,
 *   a new refresh token with every refresh)
 * - Dropbox OAuth guide, https://developers.dropbox.com/oauth-guide (token_access_type=offline,
 *   short-lived access tokens, long-lived refresh tokens)
 * - Box OAuth 2.0, https://developer.box.com/guides/authentication/oauth2/ (refresh tokens are
 *   single use: each refresh returns a new one and the old one stops working)
 *
 * The consent screen is automatic: /authorize approves as `consentUser` (or denies when
 * `denyConsent` is set) and redirects straight back, so a browser or a test can run the whole
 * flow. Each client chooses whether refresh tokens rotate, as its real service does.
 */

export interface OAuthClientConfig {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Each refresh returns a new refresh token and retires the old one (Microsoft, Box). */
  rotateRefreshTokens?: boolean;
}

interface Grant {
  id: string;
  user: string;
  clientId: string;
  scope: string;
  revoked: boolean;
}

interface AuthCode {
  code: string;
  grant: Grant;
  redirectUri: string;
  challenge: string | undefined;
  challengeMethod: string;
  expiresAt: number;
  used: boolean;
}

interface AccessToken {
  grant: Grant;
  expiresAt: number;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  /** OpenID Connect ID token, when the scope asked for openid. */
  id_token?: string;
}

export type VerifyResult = { user: string; clientId: string; scope: string } | 'expired' | 'invalid';

export class OAuthServer {
  private server: RunningServer | undefined;
  private readonly router = new Router();
  private readonly clients = new Map<string, OAuthClientConfig>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, Grant>();
  /** Access token lifetime in seconds (services give about an hour; tests shorten it). */
  accessTokenTtlSeconds = 3600;
  /** The account that approves the consent screen. */
  consentUser = 'user@example.com';
  /** When set, /authorize answers error=access_denied (the user pressed Cancel). */
  denyConsent = false;
  /** Count of token endpoint calls by grant type (tests assert refreshes happened). */
  readonly tokenCalls: Record<string, number> = {};

  constructor() {
    this.router.on('GET', '/authorize', (req, res) => this.authorize(req, res));
    this.router.on('POST', '/token', (req, res) => this.token(req, res));
    this.router.on('POST', '/revoke', (req, res) => this.revokeEndpoint(req, res));
  }

  get url(): string {
    if (!this.server) throw new Error('OAuth server not started');
    return this.server.url;
  }

  get authorizeUrl(): string {
    return `${this.url}/authorize`;
  }

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  get revokeUrl(): string {
    return `${this.url}/revoke`;
  }

  registerClient(client: OAuthClientConfig): void {
    this.clients.set(client.clientId, client);
  }

  async start(): Promise<this> {
    this.server = await listen(async (raw, res, base) => {
      const path = new URL(raw.url ?? '/', base).pathname;
      const found = this.router.match((raw.method ?? 'GET').toUpperCase(), path);
      if (!found) return sendJson(res, 404, { error: 'not_found' });
      await found.handler(makeRequest(raw, found.params, base), res);
    });
    return this;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }

  /** Issues tokens directly, as if the user had completed the flow (for backend tests). */
  issueTokens(user: string, clientId: string, scope = ''): TokenResponse {
    const grant: Grant = { id: randomToken('g'), user, clientId, scope, revoked: false };
    return this.mint(grant, true);
  }

  /** What a service does with a bearer token. */
  verify(token: string): VerifyResult {
    const at = this.accessTokens.get(token);
    if (!at || at.grant.revoked) return 'invalid';
    if (Date.now() >= at.expiresAt) return 'expired';
    return { user: at.grant.user, clientId: at.grant.clientId, scope: at.grant.scope };
  }

  /** Every access token issued so far expires now (refresh tokens keep working). */
  expireAccessTokens(): void {
    for (const at of this.accessTokens.values()) at.expiresAt = 0;
  }

  /** The user removed the app's access: every grant of theirs is revoked (refresh answers invalid_grant). */
  revokeUser(user: string): void {
    for (const grant of this.refreshTokens.values()) if (grant.user === user) grant.revoked = true;
    for (const at of this.accessTokens.values()) if (at.grant.user === user) at.grant.revoked = true;
  }

  /** Every access and refresh token issued so far (to look for them where they must not be). */
  issuedTokens(): string[] {
    return [...this.accessTokens.keys(), ...this.refreshTokens.keys()];
  }

  /** Revokes the grant a token belongs to (RFC 7009: revoking a refresh token revokes its access tokens). */
  revokeToken(token: string): boolean {
    const grant = this.refreshTokens.get(token) ?? this.accessTokens.get(token)?.grant;
    if (!grant) return false;
    grant.revoked = true;
    return true;
  }

  private mint(grant: Grant, withRefresh: boolean): TokenResponse {
    const access = randomToken('at');
    this.accessTokens.set(access, { grant, expiresAt: Date.now() + this.accessTokenTtlSeconds * 1000 });
    const out: TokenResponse = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessTokenTtlSeconds,
      scope: grant.scope,
    };
    if (grant.scope.split(/\s+/).includes('openid')) out.id_token = this.idToken(grant);
    if (withRefresh) {
      const refresh = randomToken('rt');
      this.refreshTokens.set(refresh, grant);
      out.refresh_token = refresh;
    }
    return out;
  }

  /** The account's stable subject identifier. */
  subjectOf(user: string): string {
    return BigInt('0x' + createHash('sha256').update(user).digest('hex').slice(0, 16)).toString();
  }

  /**
   * An OpenID Connect ID token (https://openid.net/specs/openid-connect-core-1_0.html#IDToken):
   * clients that receive it straight from the token endpoint may read it without checking the
   * signature (3.1.3.7), so the emulator does not sign it.
   */
  private idToken(grant: Grant): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    return [
      part({ alg: 'none', typ: 'JWT' }),
      part({
        iss: this.url,
        sub: this.subjectOf(grant.user),
        aud: grant.clientId,
        iat: now,
        exp: now + 3600,
        email: grant.user,
        email_verified: true,
        preferred_username: grant.user,
      }),
      '',
    ].join('.');
  }

  private authorize(req: EmuRequest, res: ServerResponse): void {
    const q = (n: string) => req.query(n);
    const client = this.clients.get(q('client_id') ?? '');
    const redirectUri = q('redirect_uri') ?? '';
    // RFC 6749 4.1.2.1: with a bad client or redirect URI, never redirect; show the error.
    if (!client) return sendText(res, 400, 'Error 401: invalid_client. The OAuth client was not found.');
    if (!client.redirectUris.includes(redirectUri)) {
      return sendText(
        res,
        400,
        'Error 400: redirect_uri_mismatch. The redirect URI does not match the registered ones.',
      );
    }
    const back = new URL(redirectUri);
    const state = q('state');
    if (state !== undefined) back.searchParams.set('state', state);
    const fail = (error: string, description: string) => {
      back.searchParams.set('error', error);
      back.searchParams.set('error_description', description);
      res.writeHead(302, { location: back.toString(), 'content-length': '0' });
      res.end();
    };
    if (q('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const challenge = q('code_challenge');
    const method = q('code_challenge_method') ?? 'plain';
    if (challenge && method !== 'S256' && method !== 'plain') {
      return fail('invalid_request', 'code_challenge_method must be S256 or plain');
    }
    if (this.denyConsent) return fail('access_denied', 'The user denied access');
    const grant: Grant = {
      id: randomToken('g'),
      user: this.consentUser,
      clientId: client.clientId,
      scope: q('scope') ?? '',
      revoked: false,
    };
    const code = randomToken('code');
    this.codes.set(code, {
      code,
      grant,
      redirectUri,
      challenge,
      challengeMethod: method,
      expiresAt: Date.now() + 10 * 60_000,
      used: false,
    });
    back.searchParams.set('code', code);
    res.writeHead(302, { location: back.toString(), 'content-length': '0' });
    res.end();
  }

  private async form(req: EmuRequest): Promise<URLSearchParams> {
    return new URLSearchParams((await req.body()).toString('utf8'));
  }

  /** client_secret_basic or client_secret_post (RFC 6749 2.3.1). */
  private authenticateClient(req: EmuRequest, form: URLSearchParams): OAuthClientConfig | undefined {
    let id = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    const basic = /^Basic\s+(.+)$/i.exec(req.header('authorization') ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const i = decoded.indexOf(':');
      id = decodeURIComponent(decoded.slice(0, i));
      secret = decodeURIComponent(decoded.slice(i + 1));
    }
    const client = id ? this.clients.get(id) : undefined;
    if (!client || client.clientSecret !== secret) return undefined;
    return client;
  }

  private async token(req: EmuRequest, res: ServerResponse): Promise<void> {
    const form = await this.form(req);
    const grantType = form.get('grant_type') ?? '';
    this.tokenCalls[grantType] = (this.tokenCalls[grantType] ?? 0) + 1;
    const error = (status: number, code: string, description: string) =>
      sendJson(res, status, { error: code, error_description: description }, { 'cache-control': 'no-store' });
    const client = this.authenticateClient(req, form);
    if (!client) return error(401, 'invalid_client', 'Client authentication failed');
    const ok = (body: TokenResponse) => sendJson(res, 200, body, { 'cache-control': 'no-store', pragma: 'no-cache' });

    if (grantType === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      if (!code || code.grant.clientId !== client.clientId)
        return error(400, 'invalid_grant', 'Invalid authorization code');
      if (code.used) {
        // RFC 6749 4.1.2: a code used twice revokes what it granted.
        code.grant.revoked = true;
        return error(400, 'invalid_grant', 'Authorization code already used');
      }
      if (Date.now() > code.expiresAt) return error(400, 'invalid_grant', 'Authorization code expired');
      if (form.get('redirect_uri') !== code.redirectUri) return error(400, 'invalid_grant', 'redirect_uri mismatch');
      if (code.challenge) {
        const verifier = form.get('code_verifier');
        if (!verifier) return error(400, 'invalid_request', 'code_verifier required');
        const computed =
          code.challengeMethod === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (computed !== code.challenge) return error(400, 'invalid_grant', 'PKCE verification failed');
      }
      code.used = true;
      return ok(this.mint(code.grant, true));
    }

    if (grantType === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      const grant = this.refreshTokens.get(presented);
      if (!grant || grant.clientId !== client.clientId) return error(400, 'invalid_grant', 'Invalid refresh token');
      if (grant.revoked) return error(400, 'invalid_grant', 'Token has been expired or revoked.');
      if (client.rotateRefreshTokens) {
        this.refreshTokens.delete(presented);
        return ok(this.mint(grant, true));
      }
      return ok(this.mint(grant, false));
    }

    return error(400, 'unsupported_grant_type', `grant_type ${grantType} is not supported`);
  }

  private async revokeEndpoint(req: EmuRequest, res: ServerResponse): Promise<void> {
    const form = await this.form(req);
    const token = form.get('token') ?? req.query('token') ?? '';
    // RFC 7009 2.2: an unknown token is not an error.
    this.revokeToken(token);
    sendJson(res, 200, {});
  }
}

function randomToken(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

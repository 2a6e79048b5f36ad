import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { CLOUD_KIND_INFO, Code, type CloudKindInfo, type MessageKey } from '@skyferry/contract';
import {
  configureOAuthClients,
  createPkce,
  exchangeCode,
  idTokenClaims,
  oauthKindInfo,
  oauthServiceInfo,
  toProviderError,
  type OAuthServiceName,
  type OAuthToken,
} from '@skyferry/providers';
import type { Config } from '../config.ts';
import { ApiError, errors } from '../http/errors.ts';
import type { CloudIdentity, CloudRecord, CloudsService } from './clouds.ts';
import type { SecretBox } from './crypto.ts';

/**
 * Connecting OAuth clouds: the authorization-code grant with PKCE (RFC 6749 4.1, RFC 7636) in a
 * pop-up. `start` seals everything the callback needs (who asked, which kind, the PKCE verifier,
 * the redirect URI, the client origin, a browser nonce, an expiry) into the `state` parameter with
 * the server's secret, so any API process can finish the flow and nothing is stored meanwhile.
 * `callback` opens the state, exchanges the code, learns which account was granted, and connects
 * the cloud (or reauthorizes the one named at start) through the clouds service, which stores the
 * tokens encrypted. The operator's client id and secret come from configuration; refreshing tokens
 * later needs them too, so `configureOAuthClients` hands them to the backends of this process.
 */

const STATE_TTL_MS = 10 * 60_000;
const STATE_AAD = 'oauth-flow-state';

interface FlowState {
  v: 1;
  kind: string;
  alias?: string;
  /** Reauthorize this cloud. */
  cloud?: string;
  owner: { userId: string } | { visitorId: string };
  verifier: string;
  redirectUri: string;
  origin: string;
  /** The browser that started the flow holds this nonce in a cookie (when it shares the server's origin). */
  nonce?: string;
  exp: number;
}

export interface OAuthOutcome {
  ok: boolean;
  state: string;
  /** The client origin the result goes to (undefined when the state could not be read). */
  origin: string | undefined;
  cloud?: CloudRecord;
  reauthorized?: boolean;
  error?: ApiError;
}

export interface OAuthFlowOptions {
  config: Config;
  clouds: CloudsService;
  secrets: SecretBox;
  log: Logger;
  now?: () => number;
}

/** Hands the configured OAuth clients to the backends (token refresh needs the client secret). */
export function configureOAuthFromConfig(config: Config): void {
  configureOAuthClients(config.oauth);
}

function kindInfo(kind: string): CloudKindInfo | undefined {
  return (CLOUD_KIND_INFO as Record<string, CloudKindInfo | undefined>)[kind];
}

/** The stable id of an OAuth account of a kind (so the same account is not bound twice). */
export function oauthCloudId(kind: string, accountId: string): string {
  return createHash('sha256').update(`${kind}\noauth:${accountId}`).digest('hex').slice(0, 32);
}

export class OAuthFlowService {
  private readonly config: Config;
  private readonly clouds: CloudsService;
  private readonly secrets: SecretBox;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(options: OAuthFlowOptions) {
    this.config = options.config;
    this.clouds = options.clouds;
    this.secrets = options.secrets;
    this.log = options.log;
    this.now = options.now ?? Date.now;
    configureOAuthFromConfig(options.config);
  }

  private client(service: OAuthServiceName) {
    return this.config.oauth[service];
  }

  /**
   * Starts a connection: checks the kind is an available OAuth kind (and, for a reauthorisation,
   * that the cloud is the caller's and of that kind), then answers the service's authorization URL.
   */
  async start(
    identity: CloudIdentity,
    input: { kind: string; alias?: string; cloudId?: string },
    ctx: { redirectUri: string; origin: string; bindBrowser: boolean },
  ): Promise<{ authorizeUrl: string; state: string; expiresAt: number; nonce?: string }> {
    const info = kindInfo(input.kind);
    if (!info) throw errors.badRequest('cloud_kind_unknown', { kind: input.kind.slice(0, 64) });
    const oauth = oauthKindInfo(info.kind);
    if (info.auth !== 'oauth' || !oauth) throw errors.badRequest('field_invalid', { field: 'cloud_name' });
    const { available, reason } = this.clouds.availability(info.kind);
    if (!available) throw errors.badRequest('cloud_kind_unavailable', { kind: info.displayName, reason: reason ?? '' });
    const client = this.client(oauth.service);
    if (!client)
      throw errors.badRequest('cloud_kind_unavailable', { kind: info.displayName, reason: 'no OAuth client' });
    if (input.cloudId) {
      const existing = await this.clouds.get(identity, input.cloudId);
      if (existing.kind !== info.kind) throw errors.badRequest('field_invalid', { field: 'cloud_id' });
    }
    const pkce = createPkce();
    const expiresAt = this.now() + STATE_TTL_MS;
    const nonce = ctx.bindBrowser ? randomBytes(16).toString('base64url') : undefined;
    const owner = 'userId' in identity ? { userId: identity.userId } : { visitorId: identity.visitorId };
    const flow: FlowState = {
      v: 1,
      kind: info.kind,
      ...(input.alias ? { alias: input.alias } : {}),
      ...(input.cloudId ? { cloud: input.cloudId } : {}),
      owner,
      verifier: pkce.verifier,
      redirectUri: ctx.redirectUri,
      origin: ctx.origin,
      ...(nonce ? { nonce } : {}),
      exp: expiresAt,
    };
    const state = this.secrets.sealJson(flow, STATE_AAD).ciphertext;
    const endpoints = oauthServiceInfo(oauth.service);
    const url = new URL(endpoints.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.clientId);
    url.searchParams.set('redirect_uri', ctx.redirectUri);
    if (oauth.scopes.length) url.searchParams.set('scope', oauth.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', pkce.challenge);
    url.searchParams.set('code_challenge_method', pkce.method);
    for (const [k, v] of Object.entries(endpoints.authorizeParams)) url.searchParams.set(k, v);
    return { authorizeUrl: url.toString(), state, expiresAt, ...(nonce ? { nonce } : {}) };
  }

  private openState(state: string | undefined): FlowState | undefined {
    if (!state) return undefined;
    try {
      const flow = this.secrets.openJson<FlowState>(state, STATE_AAD);
      if (flow.v !== 1 || typeof flow.exp !== 'number' || flow.exp < this.now()) return undefined;
      return flow;
    } catch {
      return undefined;
    }
  }

  /** Finishes the flow the service redirected back; never throws (the page shows the outcome). */
  async callback(
    query: { code?: string; state?: string; error?: string; error_description?: string },
    browserNonce: string | undefined,
  ): Promise<OAuthOutcome> {
    const stateText = query.state ?? '';
    const flow = this.openState(query.state);
    if (!flow || (flow.nonce !== undefined && flow.nonce !== browserNonce)) {
      return {
        ok: false,
        state: stateText,
        origin: flow?.origin,
        error: new ApiError(Code.BAD_REQUEST, 'oauth_state_invalid'),
      };
    }
    const info = kindInfo(flow.kind)!;
    const fail = (
      key: MessageKey,
      code: number = Code.BAD_REQUEST,
      params: Record<string, string | number> = {},
    ): OAuthOutcome => ({
      ok: false,
      state: stateText,
      origin: flow.origin,
      error: new ApiError(code, key, { kind: info.displayName, ...params }),
    });
    if (query.error) {
      return query.error === 'access_denied'
        ? fail('oauth_denied')
        : fail('oauth_failed', Code.CLOUD_CREDENTIALS_INVALID, { reason: query.error.slice(0, 100) });
    }
    if (!query.code) return fail('oauth_state_invalid');
    const oauth = oauthKindInfo(flow.kind)!;
    const client = this.client(oauth.service);
    if (!client) return fail('cloud_kind_unavailable', Code.BAD_REQUEST, { reason: 'no OAuth client' });
    try {
      const token = await exchangeCode(oauthServiceInfo(oauth.service).tokenUrl, client, {
        code: query.code,
        redirectUri: flow.redirectUri,
        codeVerifier: flow.verifier,
      });
      const account = await this.accountOf(oauth.service, flow.kind, token);
      const credentials: Record<string, string | number> = {
        access_token: token.access_token,
        ...(token.refresh_token ? { refresh_token: token.refresh_token } : {}),
        ...(token.expiry !== undefined ? { expiry: token.expiry } : {}),
        ...(token.expires_in !== undefined ? { expires_in: token.expires_in } : {}),
        ...(token.scope ? { scope: token.scope } : {}),
        account_id: account.id,
        account: account.email ?? account.id,
      };
      const cloudId = oauthCloudId(flow.kind, account.id);
      if (flow.cloud) {
        const existing = await this.clouds.get(flow.owner, flow.cloud);
        if (existing.cloudId !== cloudId) return fail('oauth_other_account');
        const cloud = await this.clouds.reauthorize(flow.owner, flow.cloud, credentials, { trusted: true });
        this.log.info({ cloud: cloud.id, kind: flow.kind }, 'cloud reauthorized through OAuth');
        return { ok: true, state: stateText, origin: flow.origin, cloud, reauthorized: true };
      }
      const cloud = await this.clouds.connect(
        flow.owner,
        { kind: flow.kind, ...(flow.alias ? { alias: flow.alias } : {}), credentials },
        { trusted: true, cloudAccount: account.email ?? account.id, cloudId },
      );
      this.log.info({ cloud: cloud.id, kind: flow.kind }, 'cloud connected through OAuth');
      return { ok: true, state: stateText, origin: flow.origin, cloud };
    } catch (err) {
      if (err instanceof ApiError) return { ok: false, state: stateText, origin: flow.origin, error: err };
      const pe = toProviderError(err);
      this.log.info({ kind: flow.kind, providerCode: pe.code }, 'OAuth code exchange failed');
      return fail(
        'oauth_failed',
        pe.code === 'network' || pe.code === 'server' ? Code.CLOUD_UNAVAILABLE : Code.CLOUD_CREDENTIALS_INVALID,
        {
          reason: pe.serviceCode ?? pe.code,
        },
      );
    }
  }

  /** Which account at the service the tokens belong to. */
  private async accountOf(
    service: OAuthServiceName,
    kind: string,
    token: OAuthToken,
  ): Promise<{ id: string; email?: string }> {
    if (service === 'google' || service === 'microsoft') {
      const claims = idTokenClaims(token.id_token);
      const id = String(claims.oid ?? claims.sub ?? '');
      if (!id) throw new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'oauth_failed', { kind, reason: 'no id_token' });
      const email = claims.email ?? claims.preferred_username;
      return { id, ...(typeof email === 'string' ? { email } : {}) };
    }
    const urls = oauthServiceInfo(service).apiUrls[kind] ?? {};
    const headers = { authorization: `Bearer ${token.access_token}` };
    if (service === 'dropbox') {
      const res = await fetch(
        `${(urls.api_url ?? 'https://api.dropboxapi.com').replace(/\/+$/, '')}/2/users/get_current_account`,
        { method: 'POST', headers },
      );
      if (!res.ok)
        throw new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'oauth_failed', { kind, reason: `account ${res.status}` });
      const acc = (await res.json()) as { account_id?: string; email?: string };
      return { id: String(acc.account_id ?? ''), ...(acc.email ? { email: acc.email } : {}) };
    }
    const res = await fetch(
      `${(urls.api_url ?? 'https://api.box.com').replace(/\/+$/, '')}/2.0/users/me?fields=id,login`,
      { headers },
    );
    if (!res.ok)
      throw new ApiError(Code.CLOUD_CREDENTIALS_INVALID, 'oauth_failed', { kind, reason: `account ${res.status}` });
    const me = (await res.json()) as { id?: string; login?: string };
    return { id: String(me.id ?? ''), ...(me.login ? { email: me.login } : {}) };
  }
}

import { createHash } from 'node:crypto';
import type { ProviderContext } from '../../api/registry.ts';
import { pacerFor } from '../../pacer.ts';
import { ApiClient, type ErrorMapper } from './http.ts';
import { oauthServiceInfo, type OAuthServiceName } from './services.ts';
import { clientFromCredentials, tokenFromCredentials, TokenSource } from './token.ts';

/**
 * Credentials of an OAuth cloud (snake_case, stored encrypted by the clouds service):
 * - access_token, refresh_token, expiry (ms since the epoch), expires_in, scope: the grant;
 * - account_id, account: who it belongs to at the service (set by the OAuth flow);
 * - api_url, upload_url, content_url, token_url: endpoint overrides (tests, emulators);
 * - client_id, client_secret: the cloud's own OAuth client (tests and live runs; normally the
 *   operator's client from configuration is used and never stored with a cloud);
 * - backend settings such as drive_id (a shared drive or a OneDrive drive), chunk_size,
 *   google_docs ("export" or "skip").
 * Refreshed tokens are saved with `ctx.saveState({ oauth_token })` and preferred on the next open.
 */
export interface OAuthSetup {
  tokens: TokenSource;
  api: ApiClient;
  accountKey: string;
  apiUrl: string;
  uploadUrl: string;
  contentUrl: string;
}

export interface OAuthSetupOptions {
  kind: string;
  service: OAuthServiceName;
  /** Prefix of the account key; clouds with equal keys can copy between them on the server. */
  accountPrefix: string;
  defaultApiUrl: string;
  defaultUploadUrl?: string;
  defaultContentUrl?: string;
  mapError: ErrorMapper;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function setupOAuth(
  credentials: Record<string, unknown>,
  ctx: ProviderContext,
  opts: OAuthSetupOptions,
): OAuthSetup {
  const token = tokenFromCredentials(credentials, ctx);
  const info = oauthServiceInfo(opts.service);
  const overrides = info.apiUrls[opts.kind] ?? {};
  const client = clientFromCredentials(credentials);
  const tokenUrl = str(credentials.token_url);
  const tokens = new TokenSource({
    service: opts.service,
    token,
    ...(client ? { client } : {}),
    ...(tokenUrl ? { tokenUrl } : {}),
    ctx,
  });
  const accountId = str(credentials.account_id);
  const fallback = createHash('sha256')
    .update(str(credentials.refresh_token) ?? token.refresh_token ?? token.access_token)
    .digest('hex')
    .slice(0, 16);
  const accountKey = `${opts.accountPrefix}:${accountId ?? `token-${fallback}`}`;
  const pacer = pacerFor(accountKey, {
    minSleepMs: 50,
    maxSleepMs: 8_000,
    retries: 8,
    ...(ctx.rateLimitPerSecond ? { rateLimitPerSecond: ctx.rateLimitPerSecond } : {}),
  });
  const apiOverride = str(credentials.api_url) ?? overrides.api_url;
  const apiUrl = apiOverride ?? opts.defaultApiUrl;
  return {
    tokens,
    api: new ApiClient({ tokens, pacer, mapError: opts.mapError }),
    accountKey,
    apiUrl,
    uploadUrl:
      str(credentials.upload_url) ?? overrides.upload_url ?? (apiOverride ? apiUrl : (opts.defaultUploadUrl ?? apiUrl)),
    contentUrl:
      str(credentials.content_url) ??
      overrides.content_url ??
      (apiOverride ? apiUrl : (opts.defaultContentUrl ?? apiUrl)),
  };
}

/** A number setting from the credentials, or the default. */
export function numberSetting(credentials: Record<string, unknown>, name: string, def: number): number {
  const v = credentials[name];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? n : def;
}

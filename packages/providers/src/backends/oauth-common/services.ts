/**
 * The OAuth 2.0 authorization servers of the cloud services, and what each kind asks for.
 * Sources:
 * - Google: https://developers.google.com/identity/protocols/oauth2/web-server (endpoints,
 *   access_type=offline, prompt=consent, revocation), Drive scopes
 *   https://developers.google.com/drive/api/guides/api-specific-auth, Photos scopes after March 2025
 *   https://developers.google.com/photos/overview/authorization
 * - Microsoft identity platform: https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow
 *   (no RFC 7009 revocation endpoint), Graph permissions https://learn.microsoft.com/graph/permissions-reference
 * - Dropbox: https://developers.dropbox.com/oauth-guide and https://www.dropbox.com/developers/documentation/http/documentation#oauth2-authorize
 *   (token_access_type=offline, /2/auth/token/revoke)
 * - Box: https://developer.box.com/guides/authentication/oauth2/ and
 *   https://developer.box.com/reference/post-oauth2-revoke
 */

export type OAuthServiceName = 'google' | 'microsoft' | 'dropbox' | 'box';

export interface OAuthServiceInfo {
  name: OAuthServiceName;
  authorizeUrl: string;
  tokenUrl: string;
  /** RFC 7009 revocation (Google, Box) or Dropbox's bearer-token revoke call; Microsoft has none. */
  revokeUrl?: string;
  revokeStyle?: 'rfc7009' | 'dropbox';
  /** Extra authorization request parameters. */
  authorizeParams: Record<string, string>;
}

export const OAUTH_SERVICES: Record<OAuthServiceName, OAuthServiceInfo> = {
  google: {
    name: 'google',
    authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    revokeUrl: 'https://oauth2.googleapis.com/revoke',
    revokeStyle: 'rfc7009',
    // offline: a refresh token; consent: a new refresh token on reauthorisation too.
    authorizeParams: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
  },
  microsoft: {
    name: 'microsoft',
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    authorizeParams: { prompt: 'select_account' },
  },
  dropbox: {
    name: 'dropbox',
    authorizeUrl: 'https://www.dropbox.com/oauth2/authorize',
    tokenUrl: 'https://api.dropboxapi.com/oauth2/token',
    revokeUrl: 'https://api.dropboxapi.com/2/auth/token/revoke',
    revokeStyle: 'dropbox',
    authorizeParams: { token_access_type: 'offline' },
  },
  box: {
    name: 'box',
    authorizeUrl: 'https://account.box.com/api/oauth2/authorize',
    tokenUrl: 'https://api.box.com/oauth2/token',
    revokeUrl: 'https://api.box.com/oauth2/revoke',
    revokeStyle: 'rfc7009',
    authorizeParams: {},
  },
};

const GOOGLE = 'https://www.googleapis.com/auth';

/** Which OAuth service and scopes each kind uses. */
export const OAUTH_KINDS: Record<string, { service: OAuthServiceName; scopes: string[] }> = {
  google_drive: { service: 'google', scopes: ['openid', 'email', `${GOOGLE}/drive`] },
  google_drive_shared: { service: 'google', scopes: ['openid', 'email', `${GOOGLE}/drive.readonly`] },
  google_photos: {
    service: 'google',
    scopes: [
      'openid',
      'email',
      `${GOOGLE}/photoslibrary.appendonly`,
      `${GOOGLE}/photoslibrary.readonly.appcreateddata`,
      `${GOOGLE}/photoslibrary.edit.appcreateddata`,
    ],
  },
  onedrive: { service: 'microsoft', scopes: ['offline_access', 'openid', 'email', 'User.Read', 'Files.ReadWrite.All'] },
  onedrive_business: {
    service: 'microsoft',
    scopes: ['offline_access', 'openid', 'email', 'User.Read', 'Files.ReadWrite.All', 'Sites.ReadWrite.All'],
  },
  dropbox: {
    service: 'dropbox',
    scopes: [
      'account_info.read',
      'files.metadata.read',
      'files.metadata.write',
      'files.content.read',
      'files.content.write',
    ],
  },
  dropbox_business: {
    service: 'dropbox',
    scopes: [
      'account_info.read',
      'files.metadata.read',
      'files.metadata.write',
      'files.content.read',
      'files.content.write',
    ],
  },
  box: { service: 'box', scopes: [] },
};

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** Endpoint overrides, for tests and for operators verifying against emulators or proxies. */
export interface OAuthEndpointOverrides {
  authorizeUrl?: string;
  tokenUrl?: string;
  revokeUrl?: string;
  /** Per kind: API base URLs handed to the backend (`api_url`, `upload_url`, `content_url`). */
  apiUrls?: Partial<Record<string, { api_url?: string; upload_url?: string; content_url?: string }>>;
}

const clients = new Map<OAuthServiceName, OAuthClientCredentials>();
const overrides = new Map<OAuthServiceName, OAuthEndpointOverrides>();

/**
 * The operator's OAuth clients, set once per process from configuration (API and worker alike):
 * backends need the client secret to refresh tokens, and it is never stored with a cloud.
 */
export function configureOAuthClients(config: Partial<Record<OAuthServiceName, OAuthClientCredentials>>): void {
  for (const [name, client] of Object.entries(config) as Array<
    [OAuthServiceName, OAuthClientCredentials | undefined]
  >) {
    if (client) clients.set(name, client);
    else clients.delete(name);
  }
}

export function oauthClientOf(service: OAuthServiceName): OAuthClientCredentials | undefined {
  return clients.get(service);
}

/** Points a service's OAuth (and optionally API) endpoints elsewhere, e.g. at local emulators. */
export function setOAuthEndpointOverrides(service: OAuthServiceName, value: OAuthEndpointOverrides | undefined): void {
  if (value) overrides.set(service, value);
  else overrides.delete(service);
}

/** A service's endpoints with any overrides applied. */
export function oauthServiceInfo(
  service: OAuthServiceName,
): OAuthServiceInfo & { apiUrls: NonNullable<OAuthEndpointOverrides['apiUrls']> } {
  const base = OAUTH_SERVICES[service];
  const o = overrides.get(service) ?? {};
  return {
    ...base,
    authorizeUrl: o.authorizeUrl ?? base.authorizeUrl,
    tokenUrl: o.tokenUrl ?? base.tokenUrl,
    ...(o.revokeUrl !== undefined || base.revokeUrl !== undefined ? { revokeUrl: o.revokeUrl ?? base.revokeUrl } : {}),
    apiUrls: o.apiUrls ?? {},
  };
}

export function oauthKindInfo(kind: string): { service: OAuthServiceName; scopes: string[] } | undefined {
  return OAUTH_KINDS[kind];
}

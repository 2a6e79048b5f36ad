import { expect } from 'vitest';
import type { OAuthResultMessage, OAuthStartData } from '@skyferry/contract';
import { setOAuthEndpointOverrides, type OAuthServiceName } from '@skyferry/providers';
import { EMULATED_CLIENTS, startCloudEmulators, type CloudEmulators } from '@skyferry/testing';
import { envelope, startTestApp, type TestApp, type TestAppOptions } from './app.ts';

/**
 * A test app whose OAuth kinds talk to the local emulators (built from the services' published
 * documentation): the emulated authorization server's endpoints and each kind's API base URL are
 * set as process-wide overrides, and the operator's clients are the emulated ones.
 */

export const OAUTH_PUBLIC_URL = 'http://127.0.0.1:18080';
export const OAUTH_REDIRECT = `${OAUTH_PUBLIC_URL}/api/clouds/oauth/callback`;

export interface OAuthTestApp {
  t: TestApp;
  emu: CloudEmulators;
  /** The server's PUBLIC_URL (the redirect URI is <publicUrl>/api/clouds/oauth/callback). */
  publicUrl: string;
  close(): Promise<void>;
}

export async function startOAuthTestApp(
  options: TestAppOptions & { publicUrl?: string; extraRedirectUris?: string[] } = {},
): Promise<OAuthTestApp> {
  const publicUrl = options.publicUrl ?? OAUTH_PUBLIC_URL;
  const emu = await startCloudEmulators({
    redirectUris: [`${publicUrl}/api/clouds/oauth/callback`, ...(options.extraRedirectUris ?? [])],
  });
  const services: Record<OAuthServiceName, Record<string, { api_url: string }>> = {
    google: {
      google_drive: { api_url: emu.googleDrive.url },
      google_drive_shared: { api_url: emu.googleDrive.url },
      google_photos: { api_url: emu.googlePhotos.url },
    },
    microsoft: { onedrive: { api_url: emu.oneDrive.url }, onedrive_business: { api_url: emu.oneDrive.url } },
    dropbox: { dropbox: { api_url: emu.dropbox.url }, dropbox_business: { api_url: emu.dropbox.url } },
    box: { box: { api_url: emu.box.url } },
  };
  for (const [service, apiUrls] of Object.entries(services) as Array<
    [OAuthServiceName, Record<string, { api_url: string }>]
  >) {
    setOAuthEndpointOverrides(service, {
      authorizeUrl: emu.oauth.authorizeUrl,
      tokenUrl: emu.oauth.tokenUrl,
      revokeUrl: emu.oauth.revokeUrl,
      apiUrls,
    });
  }
  const t = await startTestApp({
    ...options,
    env: {
      PUBLIC_URL: publicUrl,
      GOOGLE_CLIENT_ID: EMULATED_CLIENTS.google.clientId,
      GOOGLE_CLIENT_SECRET: EMULATED_CLIENTS.google.clientSecret,
      MICROSOFT_CLIENT_ID: EMULATED_CLIENTS.microsoft.clientId,
      MICROSOFT_CLIENT_SECRET: EMULATED_CLIENTS.microsoft.clientSecret,
      DROPBOX_CLIENT_ID: EMULATED_CLIENTS.dropbox.clientId,
      DROPBOX_CLIENT_SECRET: EMULATED_CLIENTS.dropbox.clientSecret,
      BOX_CLIENT_ID: EMULATED_CLIENTS.box.clientId,
      BOX_CLIENT_SECRET: EMULATED_CLIENTS.box.clientSecret,
      ...options.env,
    },
  });
  return {
    t,
    emu,
    publicUrl,
    async close() {
      await t.close();
      await emu.close();
      for (const s of ['google', 'microsoft', 'dropbox', 'box'] as const) setOAuthEndpointOverrides(s, undefined);
    },
  };
}

/** POST /api/clouds/oauth/start as a same-origin page would (answers the browser-binding cookie too). */
export async function startOAuth(t: TestApp, headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/clouds/oauth/start',
    headers: { ...headers, origin: OAUTH_PUBLIC_URL },
    payload: body,
  });
  return {
    res,
    body: envelope<OAuthStartData>(res),
    cookie: String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '',
  };
}

/** What the pop-up does: follows the authorize URL to the redirect, then loads the callback page. */
export async function runPopup(
  t: TestApp,
  authorizeUrl: string,
  cookie: string,
): Promise<{ result: OAuthResultMessage; html: string; headers: Record<string, unknown> }> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(OAUTH_REDIRECT);
  const page = await t.app.inject({
    method: 'GET',
    url: `${location.pathname}${location.search}`,
    headers: { cookie },
  });
  expect(page.statusCode).toBe(200);
  expect(page.headers['content-type']).toContain('text/html');
  const html = page.body;
  const m = /data-result="([^"]*)"/.exec(html);
  const decoded = (m?.[1] ?? '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  return { result: JSON.parse(decoded) as OAuthResultMessage, html, headers: page.headers };
}

/** Connects a cloud of an OAuth kind as `consentUser` at the service; answers the cloud. */
export async function connectOAuth(
  app: OAuthTestApp,
  headers: Record<string, string>,
  kind: string,
  consentUser: string,
  alias?: string,
) {
  app.emu.oauth.consentUser = consentUser;
  const { body, cookie } = await startOAuth(app.t, headers, { cloud_name: kind, ...(alias ? { alias } : {}) });
  if (body.code !== 0) throw new Error(`start failed: ${body.code} ${body.msg}`);
  const { result } = await runPopup(app.t, body.data.authorize_url, cookie);
  if (!result.ok || !result.cloud) throw new Error(`connect failed: ${result.code} ${result.msg}`);
  return result.cloud;
}

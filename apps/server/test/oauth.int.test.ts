import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, OAUTH_MESSAGE_TYPE, type Cloud, type CloudsMeData } from '@skyferry/contract';
import type { CloudEmulators } from '@skyferry/testing';
import { envelope, type SignedUpUser, type TestApp } from './support/app.ts';
import {
  OAUTH_PUBLIC_URL,
  OAUTH_REDIRECT,
  runPopup,
  startOAuth,
  startOAuthTestApp,
  type OAuthTestApp,
} from './support/oauth.ts';

// The OAuth connection flow end to end: the server's start and callback routes, the emulated
// authorization server (authorization code + PKCE, refresh, revocation) and the service emulators
// (all built from the services' published documentation). The pop-up's browser steps (following the
// authorize redirect, sending the cookie) are made with fetch.

const PUBLIC = OAUTH_PUBLIC_URL;
const REDIRECT = OAUTH_REDIRECT;

describe('OAuth cloud connection flow (emulated authorization server and services)', () => {
  let app: OAuthTestApp;
  let emu: CloudEmulators;
  let t: TestApp;
  let user: SignedUpUser;

  beforeAll(async () => {
    app = await startOAuthTestApp();
    ({ t, emu } = app);
    user = await t.signUp();
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  const start = (body: Record<string, unknown>, headers = user.headers) => startOAuth(t, headers, body);
  const popup = (authorizeUrl: string, cookie: string) => runPopup(t, authorizeUrl, cookie);

  async function clouds(headers = user.headers): Promise<Cloud[]> {
    return envelope<CloudsMeData>(await t.app.inject({ method: 'GET', url: '/api/v2/clouds/me', headers })).data.clouds;
  }

  async function listRoot(cloudId: string) {
    return envelope<{ items: Array<{ name: string }> }>(
      await t.app.inject({
        method: 'POST',
        url: '/api/cloud-manager/list',
        headers: user.headers,
        payload: { cloud_id: cloudId, path: '/', refresh: true },
      }),
    );
  }

  let driveCloud: Cloud;

  it('connects Google Drive: PKCE code grant, tokens stored encrypted, result posted to the exact origin', async () => {
    emu.oauth.consentUser = 'alice@gmail.example';
    const { body, cookie } = await start({ cloud_name: 'google_drive', alias: 'Work drive', origin: PUBLIC });
    expect(body.code).toBe(0);
    const url = new URL(body.data.authorize_url);
    expect(url.origin + url.pathname).toBe(emu.oauth.authorizeUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('scope')).toContain('https://www.googleapis.com/auth/drive');
    expect(cookie).toMatch(/^sf_oauth=/);

    const { result, html, headers } = await popup(body.data.authorize_url, cookie);
    expect(result).toMatchObject({ type: OAUTH_MESSAGE_TYPE, ok: true, state: body.data.state });
    expect(result.cloud).toMatchObject({
      cloud_name: 'google_drive',
      cloud_account: 'alice@gmail.example',
      cloud_alias_name: 'Work drive',
      status: 'authorized',
    });
    expect(html).toContain(`data-origin="${PUBLIC}"`);
    expect(html).toContain('<script src="/api/clouds/oauth/result.js" defer></script>');
    expect(String(headers['content-security-policy'])).toContain("script-src 'self'");
    // Arriving from the service's pages, any other opener policy would cut the pop-up off its opener.
    expect(headers['cross-origin-opener-policy']).toBe('unsafe-none');
    driveCloud = result.cloud!;
    expect((await clouds()).map((c) => c.id)).toContain(driveCloud.id);

    // The page's script posts to the opener at that origin only.
    const script = await t.app.inject({ method: 'GET', url: '/api/clouds/oauth/result.js' });
    expect(script.body).toContain('window.opener.postMessage(result, origin)');
    expect(script.body).not.toContain("'*'");

    // No token in the database file in clear text.
    const wal = `${t.databaseUrl}-wal`;
    const db = Buffer.concat([readFileSync(t.databaseUrl), existsSync(wal) ? readFileSync(wal) : Buffer.alloc(0)]);
    const stored = emu.oauth.tokenCalls.authorization_code;
    expect(stored).toBeGreaterThanOrEqual(1);
    const issued = emu.oauth.issuedTokens();
    expect(issued.length).toBeGreaterThanOrEqual(2);
    expect(issued.filter((token) => db.includes(Buffer.from(token)))).toEqual([]);
    expect(t.logs()).not.toMatch(/rt_[A-Za-z0-9_-]{20}/);
  });

  it('uses the connected cloud, refreshing the access token when it expires', async () => {
    const first = await listRoot(driveCloud.id);
    expect(first.code).toBe(0);
    const refreshes = emu.oauth.tokenCalls.refresh_token ?? 0;
    emu.oauth.expireAccessTokens();
    const again = await listRoot(driveCloud.id);
    expect(again.code).toBe(0);
    expect((emu.oauth.tokenCalls.refresh_token ?? 0) - refreshes).toBe(1);
  });

  it('refuses to bind the same account twice', async () => {
    const { body, cookie } = await start({ cloud_name: 'google_drive', origin: PUBLIC });
    const { result } = await popup(body.data.authorize_url, cookie);
    expect(result.ok).toBe(false);
    expect(result.code).toBe(Code.CLOUD_ALREADY_BOUND);
  });

  it('a revoked grant marks the cloud expired (Reauthorize), it is not deleted; reauthorizing restores it', async () => {
    emu.oauth.revokeUser('alice@gmail.example');
    emu.oauth.expireAccessTokens();
    const failed = await listRoot(driveCloud.id);
    expect(failed.code).toBe(Code.CLOUD_AUTH_EXPIRED);
    const expired = (await clouds()).find((c) => c.id === driveCloud.id);
    expect(expired?.status).toBe('expired');
    expect(expired?.cloud_alias_name).toBe('Work drive');

    // Reauthorizing with another account is refused.
    emu.oauth.consentUser = 'mallory@gmail.example';
    const other = await start({ cloud_name: 'google_drive', cloud_id: driveCloud.id, origin: PUBLIC });
    const refused = await popup(other.body.data.authorize_url, other.cookie);
    expect(refused.result).toMatchObject({ ok: false, code: Code.BAD_REQUEST });
    expect(refused.result.msg).toContain('another');

    emu.oauth.consentUser = 'alice@gmail.example';
    const again = await start({ cloud_name: 'google_drive', cloud_id: driveCloud.id, origin: PUBLIC });
    const { result } = await popup(again.body.data.authorize_url, again.cookie);
    expect(result).toMatchObject({ ok: true, reauthorized: true });
    expect(result.cloud?.id).toBe(driveCloud.id);
    const back = (await clouds()).find((c) => c.id === driveCloud.id);
    expect(back).toMatchObject({ status: 'authorized', cloud_alias_name: 'Work drive' });
    expect((await listRoot(driveCloud.id)).code).toBe(0);
  });

  it('connects every other OAuth kind against its emulator', async () => {
    const kinds = [
      'onedrive',
      'onedrive_business',
      'dropbox',
      'dropbox_business',
      'box',
      'google_photos',
      'google_drive_shared',
    ];
    for (const kind of kinds) {
      emu.oauth.consentUser = `${kind}@example.com`;
      if (kind === 'dropbox_business') emu.dropbox.account(emu.oauth.consentUser, { memberFolder: 'Home' });
      const { body, cookie } = await start({ cloud_name: kind, origin: PUBLIC });
      expect(body.code, kind).toBe(0);
      const { result } = await popup(body.data.authorize_url, cookie);
      expect(result, kind).toMatchObject({
        ok: true,
        cloud: { cloud_name: kind, cloud_account: `${kind}@example.com` },
      });
      expect((await listRoot(result.cloud!.id)).code, kind).toBe(0);
    }
    const dropboxAuth = new URL((await start({ cloud_name: 'dropbox', origin: PUBLIC })).body.data.authorize_url);
    expect(dropboxAuth.searchParams.get('token_access_type')).toBe('offline');
    const msAuth = new URL((await start({ cloud_name: 'onedrive', origin: PUBLIC })).body.data.authorize_url);
    expect(msAuth.searchParams.get('scope')).toContain('offline_access');
  });

  it('a visitor connects a temporary cloud', async () => {
    const v = await t.visitor();
    emu.oauth.consentUser = 'visitor@example.com';
    const { body, cookie } = await start({ cloud_name: 'box', origin: PUBLIC }, v.headers);
    const { result } = await popup(body.data.authorize_url, cookie);
    expect(result).toMatchObject({ ok: true, cloud: { bound: false } });
  });

  it('reports a denied consent, and refuses a tampered state, a missing browser cookie or a foreign origin', async () => {
    emu.oauth.denyConsent = true;
    try {
      const { body, cookie } = await start({ cloud_name: 'dropbox', origin: PUBLIC });
      const { result } = await popup(body.data.authorize_url, cookie);
      expect(result).toMatchObject({ ok: false, code: Code.BAD_REQUEST });
      expect(result.msg).toContain('not granted');
    } finally {
      emu.oauth.denyConsent = false;
    }
    emu.oauth.consentUser = 'someone-new@example.com';
    const { body, cookie } = await start({ cloud_name: 'box', origin: PUBLIC });
    const noCookie = await popup(body.data.authorize_url, '');
    expect(noCookie.result).toMatchObject({ ok: false, code: Code.BAD_REQUEST });
    const tampered = await t.app.inject({
      method: 'GET',
      url: `/api/clouds/oauth/callback?code=x&state=${encodeURIComponent(body.data.state.slice(0, -4) + 'AAAA')}`,
      headers: { cookie },
    });
    expect(tampered.body).toContain('&quot;ok&quot;:false');
    const foreign = await t.app.inject({
      method: 'POST',
      url: '/api/clouds/oauth/start',
      headers: user.headers,
      payload: { cloud_name: 'box', origin: 'https://evil.example' },
    });
    expect(envelope(foreign).code).toBe(Code.BAD_REQUEST);
    const formKind = await start({ cloud_name: 'webdav', origin: PUBLIC });
    expect(formKind.body.code).toBe(Code.BAD_REQUEST);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, OAUTH_MESSAGE_TYPE, type OAuthResultMessage } from '@skyferry/contract';
import { envelope, type SignedUpUser } from './support/app.ts';
import { OAUTH_PUBLIC_URL, startOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';

// The desktop client's cloud sign-in (RFC 8252): the service's pages run in the system browser and
// redirect to the client's loopback address; the client then loads the server's callback with the
// query it received, from its own window (which holds the sign-in's browser cookie).

const LOOPBACK = 'http://127.0.0.1:47219/oauth/callback';

describe('OAuth through the desktop loopback redirect', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;

  beforeAll(async () => {
    app = await startOAuthTestApp({ extraRedirectUris: [LOOPBACK] });
    user = await app.t.signUp();
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  it('sends the service to the loopback address and connects the cloud from the relayed query', async () => {
    app.emu.oauth.consentUser = 'desk@example.com';
    const { body, cookie } = await startOAuth(app.t, user.headers, {
      cloud_name: 'dropbox',
      origin: OAUTH_PUBLIC_URL,
      redirect_uri: LOOPBACK,
    });
    expect(body.code).toBe(0);
    expect(new URL(body.data.authorize_url).searchParams.get('redirect_uri')).toBe(LOOPBACK);

    // The system browser: the service redirects to the client's loopback listener.
    const res = await fetch(body.data.authorize_url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(LOOPBACK);

    // The client's window loads the server's callback with that query (and its cookie).
    const page = await app.t.app.inject({
      method: 'GET',
      url: `/api/clouds/oauth/callback${location.search}`,
      headers: { cookie },
    });
    expect(page.statusCode).toBe(200);
    const m = /data-result="([^"]*)"/.exec(page.body);
    const result = JSON.parse((m?.[1] ?? '').replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as OAuthResultMessage;
    expect(result).toMatchObject({ type: OAUTH_MESSAGE_TYPE, ok: true, state: body.data.state });
    expect(result.cloud).toMatchObject({ cloud_name: 'dropbox', cloud_account: 'desk@example.com' });
  });

  it('refuses a redirect that is not a loopback address of the client', async () => {
    for (const redirect of [
      'https://evil.example/oauth/callback',
      'http://192.168.1.20:47219/oauth/callback',
      'http://localhost:47219/oauth/callback',
      'http://127.0.0.1/oauth/callback',
      'http://127.0.0.1:47219/api/clouds/oauth/callback',
      'http://127.0.0.1:47219/oauth/callback?next=https://evil.example',
      'http://user@127.0.0.1:47219/oauth/callback',
      'https://127.0.0.1:47219/oauth/callback',
    ]) {
      const { res } = await startOAuth(app.t, user.headers, {
        cloud_name: 'dropbox',
        origin: OAUTH_PUBLIC_URL,
        redirect_uri: redirect,
      });
      expect(res.statusCode, redirect).toBe(400);
      const answer = envelope(res);
      expect(answer.code, redirect).toBe(Code.BAD_REQUEST);
      expect(answer.msg, redirect).toContain('redirect_uri');
    }
  });
});

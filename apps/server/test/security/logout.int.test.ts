import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from '../support/app.ts';

/**
 * Issue 34 (smaller items) and issue 44: logging out ends the server session however the client
 * sends it. The browser paths (the account page's sign-out, the sign-out frame, the web app's own
 * logout) are e2e/journeys/logout.e2e.test.ts; here the call itself.
 */
describe('logout', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const me = async (token: string) =>
    JSON.parse(
      (await t.app.inject({ method: 'GET', url: '/api/users/me', headers: { authorization: `Bearer ${token}` } })).body,
    ).code as number;
  const autoLogin = async (u: SignedUpUser) =>
    JSON.parse(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v2/authorizations',
          payload: { grant_type: 'auto_login', auto_login_token: u.autoLoginToken },
        })
      ).body,
    ).code as number;

  it('a JSON content type with an empty body succeeds and ends the session (issue 44)', async () => {
    const u = await t.signUp();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/account/logout',
      headers: { ...u.headers, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ code: 0, data: { ended: true } });
    expect(await me(u.accessToken)).toBe(Code.UNAUTHENTICATED);
    // The auto-login token of that session is dead too.
    expect(await autoLogin(u)).toBe(Code.REFRESH_REJECTED);
  });

  it('also with a JSON content type, whitespace only, and no body at all', async () => {
    for (const payload of ['  \n', undefined]) {
      const u = await t.signUp();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/account/logout',
        headers: { ...u.headers, 'content-type': 'application/json; charset=utf-8' },
        ...(payload === undefined ? {} : { payload }),
      });
      expect([res.statusCode, JSON.parse(res.body).data?.ended]).toEqual([200, true]);
      expect(await me(u.accessToken)).toBe(Code.UNAUTHENTICATED);
    }
  });

  it('with only the auto-login token (the access token long expired), ends that session', async () => {
    const u = await t.signUp();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/account/logout',
      headers: { authorization: 'Bearer sk_at_expired' },
      payload: { auto_login_token: u.autoLoginToken },
    });
    expect(JSON.parse(res.body)).toMatchObject({ code: 0, data: { ended: true } });
    expect(await autoLogin(u)).toBe(Code.REFRESH_REJECTED);
    expect(await me(u.accessToken)).toBe(Code.UNAUTHENTICATED);
  });

  it('a body that is not JSON is still a clear 400, and other JSON calls keep refusing an empty body', async () => {
    const u = await t.signUp();
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/account/logout',
      headers: { ...u.headers, 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect([bad.statusCode, JSON.parse(bad.body).code]).toEqual([400, Code.BAD_REQUEST]);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/account/login',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect([login.statusCode, JSON.parse(login.body).msg]).toEqual([400, 'The request body is not valid JSON.']);
    // A prototype-poisoning body is refused as by every other route.
    const poisoned = await t.app.inject({
      method: 'POST',
      url: '/api/account/logout',
      headers: { ...u.headers, 'content-type': 'application/json' },
      payload: '{"__proto__": {"x": 1}}',
    });
    expect(poisoned.statusCode).toBe(400);
    expect(await me(u.accessToken)).toBe(0);
  });
});

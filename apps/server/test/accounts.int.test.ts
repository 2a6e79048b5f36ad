import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type AuthorizationData, type CloudsMeData, type InitData, type UsersMeData } from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from './support/visitor-clouds.ts';

interface Reply<T> {
  status: number;
  code: number;
  msg: string;
  data: T;
}

function client(t: () => TestApp) {
  return async function call<T = unknown>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    options: { headers?: Record<string, string>; body?: unknown } = {},
  ): Promise<Reply<T>> {
    const res = await t().app.inject({
      method,
      url,
      headers: options.headers,
      ...(options.body === undefined ? {} : { payload: options.body as Record<string, unknown> }),
    });
    const env = JSON.parse(res.body) as { code: number; msg: string; data: T };
    return { status: res.statusCode, ...env };
  };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`accounts over HTTP [${dialect}]`, () => {
    let t: TestApp;
    let dav: VisitorClouds;
    const call = client(() => t);
    beforeAll(async () => {
      [t, dav] = await Promise.all([startTestApp({ dialect, env: LOOPBACK_CLOUDS_ENV }), VisitorClouds.start()]);
    });
    afterAll(async () => {
      await t?.close();
      await dav?.stop();
    });

    const me = (headers: Record<string, string>) => call<UsersMeData>('GET', '/api/users/me', { headers });
    const refresh = (refresh_token: string, username?: string) =>
      call<AuthorizationData>('POST', '/api/v2/authorizations', {
        body: { grant_type: 'refresh_token', refresh_token, ...(username ? { username } : {}) },
      });
    const autoLogin = (auto_login_token: string, username?: string) =>
      call<AuthorizationData>('POST', '/api/v2/authorizations', {
        body: { grant_type: 'auto_login', auto_login_token, ...(username ? { username } : {}) },
      });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    it('signs up: tokens, uid, user info, packets, subscriptions and licence offers', async () => {
      const res = await call<AuthorizationData>('POST', '/api/account/signup', {
        body: { email: '  New.Person@Example.COM ', password: 'a long enough password' },
      });
      expect(res.status).toBe(200);
      expect(res.code).toBe(0);
      const d = res.data;
      expect(d.token_type).toBe('Bearer');
      expect(d.expires_in).toBe(3600);
      expect(d.access_token).toMatch(/^sk_at_/);
      expect(d.refresh_token).toMatch(/^sk_rt_/);
      expect(d.auto_login_token).toMatch(/^sk_al_/);
      expect(d.uid).toBeTruthy();
      expect(d.user_info.email).toBe('new.person@example.com');
      // Billing off: every account is premium with no cap. No SMTP_URL here: completion e-mails start off.
      expect(d.user_info).toMatchObject({ type: 1, expired: 0, is_paid: true, remind_me: 0 });
      expect(d.user_info.expire * 1000).toBeGreaterThan(Date.now() + 50 * 365 * 86_400_000);
      expect(d.my_data_packet).toEqual({ base: [], additional: [] });
      expect(d.licenses.map((l) => l.id)).toEqual(['month', 'quarter', 'year']);
      const who = await me(bearer(d.access_token));
      expect(who.code).toBe(0);
      expect(who.data.user_info.email).toBe('new.person@example.com');
      expect(Object.keys(who.data).sort()).toEqual(['my_data_packet', 'my_subscribe', 'user_info']);
      expect(who.data.my_subscribe).toEqual([]);
      // The password is kept only as an Argon2id hash (PHC string with the configured cost).
      const row = await t.ctx.db.kysely
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', d.uid)
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$[A-Za-z0-9+/]{16,}\$[A-Za-z0-9+/]{32,}$/);
      expect(row.password_hash).not.toContain('a long enough password');
    });

    it('refuses a second account with the same e-mail, malformed e-mails and short passwords', async () => {
      const u = await t.signUp();
      const dup = await call('POST', '/api/account/signup', {
        body: { email: u.email.toUpperCase(), password: 'another password' },
      });
      expect(dup.status).toBe(409);
      expect(dup.msg).toBe('An account with this email already exists.');
      const bad = await call('POST', '/api/account/signup', {
        body: { email: 'not-an-email', password: 'long enough pw' },
      });
      expect(bad.code).toBe(Code.EMAIL_FORMAT);
      expect(bad.msg).toBe('Email format error.');
      const short = await call('POST', '/api/account/signup', {
        body: { email: 'short@example.com', password: 'short' },
      });
      expect(short.status).toBe(400);
      expect(short.msg).toBe('The password must have at least 8 characters.');
    });

    it('signs in with e-mail and password (any case), each sign-in a new session', async () => {
      const u = await t.signUp(undefined, 'password one two');
      const ok = await call<AuthorizationData>('POST', '/api/account/login', {
        body: { email: u.email.toUpperCase(), password: 'password one two' },
      });
      expect(ok.code).toBe(0);
      expect(ok.data.uid).toBe(u.uid);
      expect(ok.data.access_token).not.toBe(u.accessToken);
      expect((await me(bearer(ok.data.access_token))).code).toBe(0);
      expect((await me(u.headers)).code).toBe(0);
      const wrong = await call('POST', '/api/account/login', {
        body: { email: u.email, password: 'password one three' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.msg).toBe('The email or password is incorrect.');
      const nobody = await call('POST', '/api/account/login', {
        body: { email: 'nobody@example.com', password: 'whatever123' },
      });
      expect(nobody.msg).toBe('The email or password is incorrect.');
    });

    it('answers 140013 (HTTP 401) for a missing, unknown, expired or malformed access token', async () => {
      const missing = await me({});
      expect([missing.status, missing.code]).toEqual([401, Code.UNAUTHENTICATED]);
      const unknown = await me(bearer('sk_at_doesnotexist'));
      expect([unknown.status, unknown.code]).toEqual([401, Code.UNAUTHENTICATED]);
      const garbage = await me({ authorization: 'Bearer a b c' });
      expect(garbage.code).toBe(Code.UNAUTHENTICATED);
      const u = await t.signUp();
      await t.ctx.db.kysely
        .updateTable('access_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('user_id', '=', u.uid)
        .execute();
      const expired = await me(u.headers);
      expect([expired.status, expired.code]).toEqual([401, Code.UNAUTHENTICATED]);
    });

    it('rotates refresh tokens: the new pair works, the used token is spent', async () => {
      const u = await t.signUp();
      const first = await refresh(u.refreshToken, u.email);
      expect(first.code).toBe(0);
      expect(first.data.uid).toBe(u.uid);
      expect(first.data.refresh_token).not.toBe(u.refreshToken);
      expect(first.data.auto_login_token).toBe(u.autoLoginToken);
      expect((await me(bearer(first.data.access_token))).code).toBe(0);
      const second = await refresh(first.data.refresh_token);
      expect(second.code).toBe(0);
      expect((await me(bearer(second.data.access_token))).code).toBe(0);
    });

    it('detects refresh-token reuse: 230011, and the whole session is revoked', async () => {
      const u = await t.signUp();
      const other = await call<AuthorizationData>('POST', '/api/account/login', {
        body: { email: u.email, password: u.password },
      });
      const rotated = await refresh(u.refreshToken);
      expect(rotated.code).toBe(0);
      // The spent token comes back (stolen copy): everything of that session stops working.
      const reuse = await refresh(u.refreshToken);
      expect([reuse.status, reuse.code]).toEqual([401, Code.REFRESH_REJECTED]);
      expect((await refresh(rotated.data.refresh_token)).code).toBe(Code.REFRESH_REJECTED);
      expect((await me(bearer(rotated.data.access_token))).code).toBe(Code.UNAUTHENTICATED);
      expect((await me(u.headers)).code).toBe(Code.UNAUTHENTICATED);
      expect((await autoLogin(u.autoLoginToken)).code).toBe(Code.REFRESH_REJECTED);
      // The user's other session is untouched.
      expect((await me(bearer(other.data.access_token))).code).toBe(0);
      expect((await refresh(other.data.refresh_token)).code).toBe(0);
    });

    it('rejects unknown, forged and mismatched grants with 230011', async () => {
      expect((await refresh('sk_rt_unknown')).code).toBe(Code.REFRESH_REJECTED);
      expect((await autoLogin('sk_al_abc.def')).code).toBe(Code.REFRESH_REJECTED);
      const u = await t.signUp();
      const [sessionId] = u.autoLoginToken.slice('sk_al_'.length).split('.');
      expect((await autoLogin(`sk_al_${sessionId}.forgedmac`)).code).toBe(Code.REFRESH_REJECTED);
      const mismatch = await refresh(u.refreshToken, 'someone.else@example.com');
      expect(mismatch.code).toBe(Code.REFRESH_REJECTED);
      // The uid is accepted as the username too.
      const v = await t.signUp();
      expect((await refresh(v.refreshToken, v.uid)).code).toBe(0);
    });

    it('signs in again with the auto-login token: a fresh chain; the previous refresh token is retired', async () => {
      const u = await t.signUp();
      const again = await autoLogin(u.autoLoginToken, u.email);
      expect(again.code).toBe(0);
      expect(again.data.uid).toBe(u.uid);
      expect(again.data.auto_login_token).toBe(u.autoLoginToken);
      expect((await me(bearer(again.data.access_token))).code).toBe(0);
      expect((await refresh(u.refreshToken)).code).toBe(Code.REFRESH_REJECTED);
      // Retired, not reused: the session lives on.
      expect((await refresh(again.data.refresh_token)).code).toBe(0);
      // An expired auto-login credential is refused.
      await t.ctx.db.kysely
        .updateTable('sessions')
        .set({ auto_login_expires_at: Date.now() - 1 })
        .where('user_id', '=', u.uid)
        .execute();
      expect((await autoLogin(u.autoLoginToken)).code).toBe(Code.REFRESH_REJECTED);
    });

    it('logs out: access, refresh and auto-login tokens of that session stop working; others stay', async () => {
      const u = await t.signUp();
      const second = await call<AuthorizationData>('POST', '/api/account/login', {
        body: { email: u.email, password: u.password },
      });
      const out = await call<{ ended: boolean }>('POST', '/api/account/logout', { headers: u.headers });
      expect(out.code).toBe(0);
      expect(out.data.ended).toBe(true);
      expect((await me(u.headers)).code).toBe(Code.UNAUTHENTICATED);
      expect((await refresh(u.refreshToken)).code).toBe(Code.REFRESH_REJECTED);
      expect((await autoLogin(u.autoLoginToken)).code).toBe(Code.REFRESH_REJECTED);
      expect((await me(bearer(second.data.access_token))).code).toBe(0);
      // Logging out twice is harmless.
      const twice = await call<{ ended: boolean }>('POST', '/api/account/logout', { headers: u.headers });
      expect([twice.code, twice.data.ended]).toEqual([0, false]);
      // Without an access token, the refresh token in the body names the session.
      const byBody = await call<{ ended: boolean }>('POST', '/api/account/logout', {
        body: { refresh_token: second.data.refresh_token },
      });
      expect(byBody.data.ended).toBe(true);
      expect((await me(bearer(second.data.access_token))).code).toBe(Code.UNAUTHENTICATED);
      // GET works too (the spec's logout endpoint is a GET).
      const third = await call<AuthorizationData>('POST', '/api/account/login', {
        body: { email: u.email, password: u.password },
      });
      const viaGet = await call<{ ended: boolean }>('GET', '/api/account/logout', {
        headers: bearer(third.data.access_token),
      });
      expect(viaGet.data.ended).toBe(true);
      expect((await me(bearer(third.data.access_token))).code).toBe(Code.UNAUTHENTICATED);
    });

    it('slows failed sign-ins per account and address (5 at once), even with the right password, never elsewhere', async () => {
      const u = await t.signUp();
      for (let i = 0; i < 5; i++) {
        const r = await call('POST', '/api/account/login', {
          body: { email: u.email, password: `wrong password ${i}` },
        });
        expect(r.msg).toBe('The email or password is incorrect.');
      }
      // The last attempt dated to now: the next meets the whole first wait, however slow the machine.
      await t.ctx.db.kysely
        .updateTable('rate_limits')
        .set({ reset_at: Date.now() + 60 * 60_000 })
        .where('key', 'like', 'signin:pair:%')
        .execute();
      const blocked = await call('POST', '/api/account/login', { body: { email: u.email, password: u.password } });
      expect([blocked.status, blocked.code]).toEqual([429, Code.RATE_LIMITED]);
      expect(blocked.msg).toBe(
        'Too many failed sign-ins from here for this account. Please wait 1 seconds and try again.',
      );
      // Another account from the same address still signs in, and so does this one from elsewhere.
      const v = await t.signUp();
      expect((await call('POST', '/api/account/login', { body: { email: v.email, password: v.password } })).code).toBe(
        0,
      );
      const elsewhere = await call('POST', '/api/account/login', {
        headers: { 'x-forwarded-for': '192.0.2.200' },
        body: { email: u.email, password: u.password },
      });
      expect(elsewhere.code).toBe(0);
      // After the wait, the account signs in again here too (more in test/security/lockout.int.test.ts).
      await t.ctx.db.kysely
        .updateTable('rate_limits')
        .set({ reset_at: Date.now() - 1 })
        .execute();
      expect((await call('POST', '/api/account/login', { body: { email: u.email, password: u.password } })).code).toBe(
        0,
      );
    });

    it('limits failed sign-ins per address (50 per 15 minutes) across accounts', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      const headers = { 'x-forwarded-for': '203.0.113.7' };
      for (let i = 0; i < 50; i++) {
        const r = await t.app.inject({
          method: 'POST',
          url: '/api/account/login',
          headers,
          payload: { email: `spray${i}@example.com`, password: 'guess123456' },
        });
        expect(JSON.parse(r.body).code).toBe(400);
      }
      const u = await t.signUp();
      const r = await t.app.inject({
        method: 'POST',
        url: '/api/account/login',
        headers,
        payload: { email: u.email, password: u.password },
      });
      expect(JSON.parse(r.body).code).toBe(Code.RATE_LIMITED);
      const elsewhere = await t.app.inject({
        method: 'POST',
        url: '/api/account/login',
        headers: { 'x-forwarded-for': '203.0.113.8' },
        payload: { email: u.email, password: u.password },
      });
      expect(JSON.parse(elsewhere.body).code).toBe(0);
    });

    it('limits sign-ups per address (20 an hour), except from the machine itself', async () => {
      const headers = { 'x-forwarded-for': '198.51.100.23' };
      const signUp = (i: number) =>
        t.app.inject({
          method: 'POST',
          url: '/api/account/signup',
          headers,
          payload: { email: `many${i}.${dialect}@example.com`, password: 'long enough pw' },
        });
      for (let i = 0; i < 20; i++) expect(JSON.parse((await signUp(i)).body).code).toBe(0);
      const over = await signUp(20);
      expect([over.statusCode, JSON.parse(over.body).code]).toEqual([429, Code.RATE_LIMITED]);
      // Loopback callers are not counted.
      await t.signUp();
    });

    it('counts a caller that connects directly by its own address, whatever X-Forwarded-For says', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      // Not a trusted proxy (only loopback is, by default): a new forged address on every attempt.
      const direct = (i: number, url: string, payload: Record<string, string>) =>
        t.app.inject({
          method: 'POST',
          url,
          remoteAddress: '192.0.2.44',
          headers: { 'x-forwarded-for': `10.9.${Math.floor(i / 250)}.${i % 250}` },
          payload,
        });
      for (let i = 0; i < 50; i++) {
        const r = await direct(i, '/api/account/login', { email: `forged${i}@example.com`, password: 'guess123456' });
        expect(JSON.parse(r.body).code).toBe(400);
      }
      const u = await t.signUp();
      const blocked = await direct(50, '/api/account/login', { email: u.email, password: u.password });
      expect([blocked.statusCode, JSON.parse(blocked.body).code]).toEqual([429, Code.RATE_LIMITED]);
      // Claiming to be the machine itself does not lift the sign-up limit either.
      const signUp = (i: number) =>
        t.app.inject({
          method: 'POST',
          url: '/api/account/signup',
          remoteAddress: '192.0.2.45',
          headers: { 'x-forwarded-for': '127.0.0.1' },
          payload: { email: `forged-signup${i}.${dialect}@example.com`, password: 'long enough pw' },
        });
      for (let i = 0; i < 20; i++) expect(JSON.parse((await signUp(i)).body).code).toBe(0);
      expect(JSON.parse((await signUp(20)).body).code).toBe(Code.RATE_LIMITED);
    });

    it('counts an IPv6 caller by its /64, so a fresh address for every attempt does not help', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      const login = (ip: string, email: string, password: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/account/login',
          headers: { 'x-forwarded-for': ip },
          payload: { email, password },
        });
      for (let i = 0; i < 50; i++) {
        const r = await login(`2001:db8:7:7::${(i + 1).toString(16)}`, `v6spray${i}@example.com`, 'guess123456');
        expect(JSON.parse(r.body).code).toBe(400);
      }
      const u = await t.signUp();
      const sameNetwork = await login('2001:db8:7:7:aaaa:bbbb:cccc:dddd', u.email, u.password);
      expect(JSON.parse(sameNetwork.body).code).toBe(Code.RATE_LIMITED);
      const otherNetwork = await login('2001:db8:7:8::1', u.email, u.password);
      expect(JSON.parse(otherNetwork.body).code).toBe(0);
    });

    it('saves the notification e-mail and remind_me; users/me shows them; bad addresses get the spec message', async () => {
      const u = await t.signUp();
      const saved = await call('POST', '/api/users/notify-email', {
        headers: u.headers,
        body: { notify_email: 'Alerts@Example.org', remind_me: 0 },
      });
      expect(saved.code).toBe(0);
      expect(saved.msg).toBe('Notification settings saved.');
      const info = (await me(u.headers)).data.user_info;
      expect([info.notify_email, info.remind_me]).toEqual(['alerts@example.org', 0]);
      expect(await t.ctx.users.notifySettings(u.uid)).toEqual({ email: 'alerts@example.org', remindMe: false });
      const bad = await call('POST', '/api/users/notify-email', {
        headers: u.headers,
        body: { notify_email: 'nope', remind_me: 1 },
      });
      expect([bad.status, bad.code, bad.msg]).toEqual([400, Code.EMAIL_FORMAT, 'Email format error.']);
      const empty = await call('POST', '/api/users/notify-email', {
        headers: u.headers,
        body: { notify_email: ' ', remind_me: 1 },
      });
      expect([empty.status, empty.msg]).toEqual([400, 'Email cannot be empty']);
      const german = await t.app.inject({
        method: 'POST',
        url: '/api/users/notify-email',
        headers: { ...u.headers, 'x-language': 'de' },
        payload: { notify_email: 'a@example.org', remind_me: 1 },
      });
      expect(JSON.parse(german.body).msg).not.toBe('Notification settings saved.');
      expect(
        (await call('POST', '/api/users/notify-email', { body: { notify_email: 'a@b.co', remind_me: 1 } })).code,
      ).toBe(Code.UNAUTHENTICATED);
    });

    it('init: every field, account page URLs for the allowed client origin, the visitor token echoed back', async () => {
      const first = await call<InitData>('GET', '/api/v2/init');
      expect(first.code).toBe(0);
      const d = first.data;
      expect(Object.keys(d).sort()).toEqual(
        [
          'billing_mode',
          'licenses',
          'mail_delivery',
          'mandatory_upgrade',
          'popup_nps_rules',
          'service_notice',
          'sign_in_url',
          'sign_in_url_disable_cookies',
          'sign_out_url',
          'sign_out_url_disable_cookies',
          'temp_token',
          'wopi_url',
        ].sort(),
      );
      expect(d.billing_mode).toBe('off');
      expect(d.service_notice).toBeNull();
      expect(d.popup_nps_rules.interval_day).toBeTypeOf('number');
      expect(d.temp_token).toMatch(/^sk_vt_/);
      const signIn = new URL(d.sign_in_url);
      expect(signIn.pathname).toBe('/account/signin');
      expect(signIn.searchParams.get('origin')).toBe('http://localhost');
      expect(new URL(d.sign_out_url).pathname).toBe('/account/signout');
      expect(new URL(d.sign_in_url_disable_cookies).searchParams.get('cookies')).toBe('0');
      const page = await t.app.inject({ method: 'GET', url: signIn.pathname + signIn.search });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('data-origin="http://localhost"');
      // The same visitor stays the same visitor.
      const again = await call<InitData>('GET', '/api/v2/init', { headers: { 'x-temp-authorization': d.temp_token } });
      expect(again.data.temp_token).toBe(d.temp_token);
      const stale = await call<InitData>('GET', '/api/v2/init', { headers: { 'x-temp-authorization': 'sk_vt_gone' } });
      expect(stale.data.temp_token).not.toBe('sk_vt_gone');
      // A foreign origin is not used; the page would not post to it.
      const evil = await call<InitData>('GET', '/api/v2/init?origin=https%3A%2F%2Fevil.example');
      expect(new URL(evil.data.sign_in_url).searchParams.get('origin')).toBe('http://localhost');
    });

    it('visitor: a temporary identity, temporary clouds, kept apart from accounts', async () => {
      const token = await call<{ token_type: string; access_token: string }>('GET', '/api/token');
      expect(token.data.token_type).toBe('Bearer');
      const v = { 'x-temp-authorization': token.data.access_token };
      const connected = { data: await dav.connect(t, v, { alias: 'My stuff' }) };
      expect([connected.data.type, connected.data.bound]).toEqual([1, false]);
      const list = await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: v });
      expect(list.data.clouds).toEqual([]);
      expect(list.data.temp_clouds.map((c) => c.id)).toEqual([connected.data.id]);
      // Another visitor sees nothing of it.
      const w = await t.visitor();
      expect((await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: w.headers })).data.temp_clouds).toEqual(
        [],
      );
      // No identity at all, or a bad one: 140013.
      expect((await call('GET', '/api/v2/clouds/me')).code).toBe(Code.UNAUTHENTICATED);
      expect((await call('GET', '/api/v2/clouds/me', { headers: { 'x-temp-authorization': 'sk_vt_nope' } })).code).toBe(
        Code.UNAUTHENTICATED,
      );
      // Visitors cannot bind or read account data.
      expect(
        (await call('POST', '/api/clouds/bind', { headers: v, body: { relation_id: connected.data.id } })).code,
      ).toBe(Code.UNAUTHENTICATED);
      expect((await me(v)).code).toBe(Code.UNAUTHENTICATED);
    });

    it('temporary clouds unused for 30 days expire', async () => {
      const v = await t.visitor();
      const c = { data: await dav.connect(t, v.headers) };
      await t.ctx.db.kysely
        .updateTable('clouds')
        .set({ last_used_at: Date.now() - 31 * 86_400_000 })
        .where('id', '=', c.data.id)
        .execute();
      expect((await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: v.headers })).data.temp_clouds).toEqual(
        [],
      );
      expect(await t.ctx.clouds.purgeUnusedTemporary()).toBeGreaterThanOrEqual(1);
      const row = await t.ctx.db.kysely
        .selectFrom('clouds')
        .select('id')
        .where('id', '=', c.data.id)
        .executeTakeFirst();
      expect(row).toBeUndefined();
    });

    it('binds the 5 most recently used of 7 temporary clouds after sign-in and discards the rest', async () => {
      const v = await t.visitor();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await dav.connect(t, v.headers, { alias: `temp ${i}` })).id);
      // Used at distinct times: cloud 3 most recently, then 6, 1, 5, 0, 2, 4.
      const order = [3, 6, 1, 5, 0, 2, 4];
      const now = Date.now();
      for (const [rank, index] of order.entries()) {
        await t.ctx.db.kysely
          .updateTable('clouds')
          .set({ last_used_at: now - rank * 60_000 })
          .where('id', '=', ids[index] ?? '')
          .execute();
      }
      const u: SignedUpUser = await t.signUp();
      const both = { ...u.headers, ...v.headers };
      const before = await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: both });
      expect(before.data.clouds).toEqual([]);
      expect(before.data.temp_clouds).toHaveLength(7);
      const bind = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
        headers: both,
        body: { relation_id: ids.join(','), sign_in_nonce: u.signInNonce },
      });
      expect(bind.code).toBe(0);
      const expected = order.slice(0, 5).map((i) => ids[i]);
      expect(bind.data.bound).toEqual(expected);
      expect(bind.data.discarded.sort()).toEqual(
        order
          .slice(5)
          .map((i) => ids[i])
          .sort(),
      );
      const after = await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: both });
      expect(after.data.clouds.map((c) => c.id)).toEqual(expected);
      expect(after.data.clouds.every((c) => c.bound && c.type === 0)).toBe(true);
      expect(after.data.clouds.map((c) => c.cloud_alias_name)).toEqual(order.slice(0, 5).map((i) => `temp ${i}`));
      expect(after.data.temp_clouds).toEqual([]);
      // The visitor has nothing left.
      expect((await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: v.headers })).data.temp_clouds).toEqual(
        [],
      );
    });

    it('only the visitor’s own use counts for which clouds are bound: the app’s background reads (/transfer, /manage) do not', async () => {
      const v = await t.visitor();
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await dav.connect(t, v.headers, { alias: `temp ${i}` })).id);
      // Cloud 0 was used longest ago, cloud 5 last.
      const now = Date.now();
      for (const [i, id] of ids.entries()) {
        await t.ctx.db.kysely
          .updateTable('clouds')
          .set({ last_used_at: now - (6 - i) * 60_000 })
          .where('id', '=', id)
          .execute();
      }
      const lastUsed = async (id: string) =>
        (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: v.headers })).data.temp_clouds.find(
          (c) => c.id === id,
        )?.last_used_at;
      const before = await lastUsed(ids[0] ?? '');
      // /transfer shows the first cloud's tree and /manage refreshes its space on their own.
      const tree = await call('POST', '/api/cloud-manager/list', {
        headers: v.headers,
        body: { cloud_id: ids[0], path: '/', background: true },
      });
      expect(tree.code).toBe(0);
      expect(
        (
          await call('POST', '/api/cloud-manager/info', {
            headers: v.headers,
            body: { cloud_id: ids[0], background: true },
          })
        ).code,
      ).toBe(0);
      expect(await lastUsed(ids[0] ?? '')).toBe(before);

      const u: SignedUpUser = await t.signUp();
      const both = { ...u.headers, ...v.headers };
      const bind = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
        headers: both,
        body: { relation_id: ids.join(','), sign_in_nonce: u.signInNonce },
      });
      expect(bind.code).toBe(0);
      expect(bind.data.bound).toEqual([5, 4, 3, 2, 1].map((i) => ids[i]));
      expect(bind.data.discarded).toEqual([ids[0]]);

      // Browsing a folder is the user's own use: it counts.
      const mine = bind.data.bound[4] ?? '';
      const bound = async () =>
        (await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: u.headers })).data.clouds;
      const was = (await bound()).find((c) => c.id === mine)?.last_used_at ?? 0;
      await new Promise((r) => setTimeout(r, 5));
      expect(
        (await call('POST', '/api/cloud-manager/list', { headers: u.headers, body: { cloud_id: mine, path: '/' } }))
          .code,
      ).toBe(0);
      expect((await bound()).find((c) => c.id === mine)?.last_used_at).toBeGreaterThan(was);
    });

    it('binding names only the chosen clouds; the others are discarded; an empty relation_id discards all', async () => {
      const v = await t.visitor();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await dav.connect(t, v.headers)).id);
      const u = await t.signUp();
      const bind = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
        headers: { ...u.headers, ...v.headers },
        body: { relation_id: ids[1] ?? '', sign_in_nonce: u.signInNonce },
      });
      expect(bind.data.bound).toEqual([ids[1]]);
      expect(bind.data.discarded.sort()).toEqual([ids[0], ids[2]].sort());
      const w = await t.visitor();
      await dav.connect(t, w.headers);
      const none = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
        headers: { ...u.headers, ...w.headers },
        body: { relation_id: '', sign_in_nonce: u.signInNonce },
      });
      expect([none.data.bound.length, none.data.discarded.length]).toEqual([0, 1]);
      expect((await call<CloudsMeData>('GET', '/api/v2/clouds/me', { headers: u.headers })).data.clouds).toHaveLength(
        1,
      );
    });

    it('binding skips a cloud the account already has', async () => {
      const url = await dav.folder();
      const u = await t.signUp();
      await dav.connect(t, u.headers, { url });
      const v = await t.visitor();
      const temp = { data: await dav.connect(t, v.headers, { url }) };
      const bind = await call<{ bound: string[]; discarded: string[] }>('POST', '/api/clouds/bind', {
        headers: { ...u.headers, ...v.headers },
        body: { relation_id: temp.data.id, sign_in_nonce: u.signInNonce },
      });
      expect(bind.data).toEqual({ bound: [], discarded: [temp.data.id] });
    });
  });
}

describe('completion e-mails start on only where the server can send mail', () => {
  it.each([
    ['without SMTP_URL: off, and init says mail cannot be sent', {}, 0, false],
    ['with SMTP_URL: on', { SMTP_URL: 'smtp://127.0.0.1:2525' }, 1, true],
  ] as const)('%s', async (_what, env, remind, delivery) => {
    const t = await startTestApp({ env });
    try {
      const call = client(() => t);
      const init = await call<InitData>('GET', '/api/v2/init');
      expect(init.data.mail_delivery).toBe(delivery);
      const u = await t.signUp();
      const info = await call<UsersMeData>('GET', '/api/users/me', { headers: u.headers });
      expect(info.data.user_info.remind_me).toBe(remind);
      // Either way the user may change it.
      const on = await call('POST', '/api/users/notify-email', {
        headers: u.headers,
        body: { notify_email: 'me@example.org', remind_me: 1 },
      });
      expect(on.code).toBe(0);
    } finally {
      await t.close();
    }
  });
});

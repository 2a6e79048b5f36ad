import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Code,
  type AccountSessionsData,
  type AuthorizationData,
  type ChangePasswordData,
  type Cloud,
  type CreateTaskData,
  type DeleteAccountData,
  type FieldErrorsData,
} from '@skyferry/contract';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { linkIn, outbox, waitForMail, TestSmtp, type ReadMail } from './support/mail.ts';
import { caller, connectLocal } from './support/tasks.ts';

const PASSWORD = 'correct horse battery staple';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The token of a mailed link to an account page. */
const tokenOf = (link: string) => new URL(link).searchParams.get('token') ?? '';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`account basics over HTTP [${dialect}]`, () => {
    let t: TestApp;
    /** An account whose address others cannot take. */
    let existing: SignedUpUser;
    const call = caller(() => t);
    const mails = () => outbox(t.dataDir);
    const mailTo = (to: string, subject: string) => waitForMail(mails, (m) => m.to === to && m.subject === subject);

    beforeAll(async () => {
      t = await startTestApp({ dialect });
      existing = await t.signUp(undefined, PASSWORD);
    });
    afterAll(async () => {
      await t?.close();
    });

    const signIn = (email: string, password: string, userAgent = 'TestBrowser/1.0') =>
      call<AuthorizationData>('POST', '/api/account/login', {
        headers: { 'user-agent': userAgent },
        body: { email, password },
      });
    const me = (token: string) => call('GET', '/api/users/me', { headers: bearer(token) });
    const refresh = (token: string) =>
      call('POST', '/api/v2/authorizations', { body: { grant_type: 'refresh_token', refresh_token: token } });

    it('sign-up names every field problem at once, each in the caller’s language', async () => {
      const res = await call<FieldErrorsData>('POST', '/api/account/signup', {
        headers: { 'x-language': 'de' },
        body: { email: 'not an address', password: 'short' },
      });
      expect(res.status).toBe(400);
      expect(res.code).toBe(Code.EMAIL_FORMAT);
      expect(res.msg).toBe('Ungültiges E-Mail-Format.');
      expect(res.data.fields).toEqual({
        email: 'Ungültiges E-Mail-Format.',
        password: 'Das Passwort muss mindestens 8 Zeichen haben.',
      });
      const empty = await call<FieldErrorsData>('POST', '/api/account/signup', { body: { email: '', password: '' } });
      expect(Object.keys(empty.data.fields).sort()).toEqual(['email', 'password']);
    });

    it('changes the password: the current one is needed, other sessions end, this one stays', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const other = await signIn(user.email, PASSWORD, 'OtherDevice/2.0');
      expect(other.code).toBe(0);
      const change = (current_password: string, new_password: string, headers: Record<string, string> = {}) =>
        call<ChangePasswordData>('POST', '/api/account/password', {
          headers: { ...user.headers, ...headers },
          body: { current_password, new_password },
        });

      const wrong = await change('not my password', 'a brand new password', { 'x-language': 'fr' });
      expect([wrong.status, wrong.code, wrong.msg]).toEqual([
        403,
        Code.PASSWORD_INCORRECT,
        'Le mot de passe est incorrect.',
      ]);
      const short = await change(PASSWORD, 'short');
      expect([short.status, short.msg]).toEqual([400, 'The password must have at least 8 characters.']);
      const same = await change(PASSWORD, PASSWORD);
      expect([same.status, same.msg]).toEqual([400, 'The new password must differ from the current one.']);
      // Nothing changed yet: the other device still works.
      expect((await me(other.data.access_token)).code).toBe(0);

      const ok = await change(PASSWORD, 'a brand new password');
      expect(ok.code).toBe(0);
      expect(ok.data).toEqual({ ended_sessions: 1 });
      expect(ok.msg).toBe('Your password has been changed. Your other devices have been signed out.');
      expect((await me(user.accessToken)).code).toBe(0);
      expect((await me(other.data.access_token)).code).toBe(Code.UNAUTHENTICATED);
      expect((await refresh(other.data.refresh_token)).code).toBe(Code.REFRESH_REJECTED);
      expect((await refresh(user.refreshToken)).code).toBe(0);
      expect((await signIn(user.email, PASSWORD)).code).toBe(Code.BAD_REQUEST);
      expect((await signIn(user.email, 'a brand new password')).code).toBe(0);
      const notice = await mailTo(user.email, 'Your Skyferry password was changed');
      expect(notice.text).toContain(user.email);
    });

    it('guesses of the current password are slowed down like sign-ins', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const guess = () =>
        call('POST', '/api/account/password', {
          headers: user.headers,
          body: { current_password: 'guess', new_password: 'whatever new one' },
        });
      for (let i = 0; i < 5; i++) expect((await guess()).code).toBe(Code.PASSWORD_INCORRECT);
      const slowed = await guess();
      expect([slowed.status, slowed.code]).toEqual([429, Code.RATE_LIMITED]);
    });

    it('changes the e-mail by a link mailed to the new address; the old address is told', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const newEmail = `moved.${Date.now()}@example.org`;
      const ask = (new_email: string, password = PASSWORD) =>
        call<{ sent_to: string }>('POST', '/api/account/email', {
          headers: user.headers,
          body: { new_email, password },
        });
      expect((await ask(newEmail, 'wrong')).code).toBe(Code.PASSWORD_INCORRECT);
      expect((await ask(existing.email)).code).toBe(Code.CONFLICT);
      expect((await ask(user.email)).status).toBe(400);
      expect((await ask('nope')).code).toBe(Code.EMAIL_FORMAT);

      const res = await ask(`  ${newEmail.toUpperCase()} `);
      expect(res.code).toBe(0);
      expect(res.data).toEqual({ sent_to: newEmail });
      expect(res.msg).toBe(`We have sent a link to ${newEmail}. Open it to confirm your new address.`);
      // Nothing changes until the link is opened.
      expect((await signIn(user.email, PASSWORD)).code).toBe(0);
      const told = await mailTo(user.email, 'Your Skyferry email address is being changed');
      expect(told.text).toContain(newEmail);
      const confirm = await mailTo(newEmail, 'Confirm your new Skyferry email address');
      const link = linkIn(confirm.text);
      expect(link).toMatch(/\/account\/confirm-email\?token=sk_ec_/);
      expect(confirm.html).toContain('Confirm the new address');

      // Opening the link shows the address and changes nothing (a mail scanner may open it).
      const page = await t.app.inject({ method: 'GET', url: link.replace(/^https?:\/\/[^/]+/, '') });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(newEmail);
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect((await signIn(user.email, PASSWORD)).code).toBe(0);

      const done = await call<{ email: string }>('POST', '/api/account/email/confirm', {
        body: { token: tokenOf(link) },
      });
      expect(done.code).toBe(0);
      expect(done.data).toEqual({ email: newEmail });
      expect((await signIn(newEmail, PASSWORD)).code).toBe(0);
      expect((await signIn(user.email, PASSWORD)).code).toBe(Code.BAD_REQUEST);
      // Sessions go on: a client naming the account by its id refreshes as before.
      const grant = await call('POST', '/api/v2/authorizations', {
        body: { grant_type: 'refresh_token', refresh_token: user.refreshToken, username: user.uid },
      });
      expect(grant.code).toBe(0);
      const changed = await mailTo(user.email, 'Your Skyferry email address was changed');
      expect(changed.text).toContain(newEmail);
      const again = await call('POST', '/api/account/email/confirm', { body: { token: tokenOf(link) } });
      expect([again.status, again.code]).toEqual([410, Code.ACCOUNT_LINK_INVALID]);
    });

    it('forgotten password: the same answer for every address, a single-use link that expires, stored as a hash', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const second = await signIn(user.email, PASSWORD, 'Phone/1');
      const forgot = (email: string) =>
        t.app.inject({ method: 'POST', url: '/api/account/password/forgot', payload: { email } });
      const known = await forgot(user.email.toUpperCase());
      const unknown = await forgot(`nobody.${Date.now()}@example.com`);
      expect(known.statusCode).toBe(200);
      expect(unknown.statusCode).toBe(known.statusCode);
      expect(unknown.body).toBe(known.body);
      expect(JSON.parse(known.body)).toEqual({
        code: 0,
        msg: 'If an account uses this address, a link to set a new password has been sent to it.',
        data: null,
      });
      const mail = await mailTo(user.email, 'Set a new Skyferry password');
      expect(mail.text).toContain('60 minutes');
      const link = linkIn(mail.text);
      const token = tokenOf(link);
      expect(token).toMatch(/^sk_pr_/);
      // Only the hash is kept.
      const rows = await t.ctx.db.kysely.selectFrom('account_tokens').selectAll().execute();
      expect(rows.some((r) => r.token_hash === sha256(token))).toBe(true);
      expect(JSON.stringify(rows)).not.toContain(token);

      const page = await t.app.inject({ method: 'GET', url: `/account/reset?token=${token}&lang=en` });
      expect(page.body).toContain(user.email);
      expect(page.body).toContain('id="token"');

      const reset = (new_password: string, tok = token) =>
        call('POST', '/api/account/password/reset', { body: { token: tok, new_password } });
      // A password the rule refuses leaves the link usable.
      expect((await reset('short')).status).toBe(400);
      const ok = await reset('my new long password');
      expect(ok.code).toBe(0);
      expect(ok.msg).toBe('Your new password is set. Sign in with it.');
      // Every session ended.
      expect((await me(user.accessToken)).code).toBe(Code.UNAUTHENTICATED);
      expect((await me(second.data.access_token)).code).toBe(Code.UNAUTHENTICATED);
      expect((await signIn(user.email, 'my new long password')).code).toBe(0);
      const used = await reset('another long password');
      expect([used.status, used.code]).toEqual([410, Code.ACCOUNT_LINK_INVALID]);
      const usedPage = await t.app.inject({ method: 'GET', url: `/account/reset?token=${token}&lang=en` });
      expect(usedPage.body).toContain('This link has expired or has already been used.');
      expect(usedPage.body).not.toContain('id="token"');

      // A link past its hour no longer works.
      await forgot(user.email);
      const second_ = await waitForMail(
        mails,
        (m) => m.to === user.email && m.subject === 'Set a new Skyferry password' && !m.text.includes(token),
      );
      const late = tokenOf(linkIn(second_.text));
      await t.ctx.db.kysely
        .updateTable('account_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('token_hash', '=', sha256(late))
        .execute();
      expect((await reset('a late new password', late)).code).toBe(Code.ACCOUNT_LINK_INVALID);
      expect((await reset('a made up token', 'sk_pr_' + 'x'.repeat(43))).code).toBe(Code.ACCOUNT_LINK_INVALID);
    });

    it('limits forgotten-password mails per address asked for and per network address', async () => {
      const target = `flooded.${Date.now()}@example.com`;
      const ask = (email: string, remoteAddress = '203.0.113.7') =>
        t.app.inject({ method: 'POST', url: '/api/account/password/forgot', payload: { email }, remoteAddress });
      for (let i = 0; i < 3; i++) expect((await ask(target, `198.51.100.${i + 1}`)).statusCode).toBe(200);
      const fourth = await ask(target, '198.51.100.99');
      expect(fourth.statusCode).toBe(429);
      expect(JSON.parse(fourth.body).code).toBe(Code.RATE_LIMITED);
      for (let i = 0; i < 20; i++) expect((await ask(`spray${i}.${Date.now()}@example.com`)).statusCode).toBe(200);
      expect((await ask(`one.more.${Date.now()}@example.com`)).statusCode).toBe(429);
    });

    it('lists the sessions with device, address and times, and revokes one or every other', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const phone = await signIn(user.email, PASSWORD, 'Mozilla/5.0 (iPhone) Mobile Safari');
      const laptop = await signIn(user.email, PASSWORD, 'Mozilla/5.0 (X11; Linux) Firefox/140.0');
      const list = await call<AccountSessionsData>('GET', '/api/account/sessions', {
        headers: bearer(laptop.data.access_token),
      });
      expect(list.code).toBe(0);
      expect(list.data.items).toHaveLength(3);
      const current = list.data.items.filter((s) => s.current);
      expect(current).toHaveLength(1);
      expect(current[0]?.user_agent).toBe('Mozilla/5.0 (X11; Linux) Firefox/140.0');
      const iphone = list.data.items.find((s) => s.user_agent.includes('iPhone'));
      expect(iphone).toMatchObject({ ip: '127.0.0.1', current: false });
      expect(iphone?.created_at).toBeGreaterThan(Date.now() - 60_000);
      expect(iphone?.last_used_at).toBeGreaterThanOrEqual(iphone?.created_at ?? 0);

      // Someone else's session is not found; the phone's is ended.
      const stranger = await t.signUp(undefined, PASSWORD);
      const theirs = await call<AccountSessionsData>('GET', '/api/account/sessions', { headers: stranger.headers });
      const theirId = theirs.data.items[0]?.id ?? '';
      expect(
        (await call('DELETE', `/api/account/sessions/${theirId}`, { headers: bearer(laptop.data.access_token) }))
          .status,
      ).toBe(404);
      expect((await me(stranger.accessToken)).code).toBe(0);
      const revoke = await call('DELETE', `/api/account/sessions/${iphone?.id ?? ''}`, {
        headers: bearer(laptop.data.access_token),
      });
      expect(revoke.code).toBe(0);
      expect((await me(phone.data.access_token)).code).toBe(Code.UNAUTHENTICATED);
      expect((await refresh(phone.data.refresh_token)).code).toBe(Code.REFRESH_REJECTED);

      const others = await call<{ ended: number }>('POST', '/api/account/sessions/revoke-others', {
        headers: bearer(laptop.data.access_token),
      });
      expect(others.data).toEqual({ ended: 1 });
      expect((await me(user.accessToken)).code).toBe(Code.UNAUTHENTICATED);
      expect((await me(laptop.data.access_token)).code).toBe(0);
      const left = await call<AccountSessionsData>('GET', '/api/account/sessions', {
        headers: bearer(laptop.data.access_token),
      });
      expect(left.data.items.map((s) => s.current)).toEqual([true]);
    });

    it('deletes an account with its clouds’ credentials, tasks, scans and sessions, after the password', async () => {
      const user = await t.signUp(undefined, PASSWORD);
      const src: Cloud = await connectLocal(call, user.headers, t.makeLocalFolder(), 'Source');
      const dst: Cloud = await connectLocal(call, user.headers, t.makeLocalFolder(), 'Target');
      const task = await call<CreateTaskData>('POST', '/api/tasks', {
        headers: user.headers,
        body: {
          task_type: 0,
          from_cloud: { cloud_id: src.id, paths: ['/'] },
          to_cloud: { cloud_id: dst.id, path: '/' },
        },
      });
      expect(task.code, task.msg).toBe(0);
      const scan = await call('POST', '/api/cleanup/run', { headers: user.headers, body: { cloud_id: src.id } });
      expect(scan.code, scan.msg).toBe(0);
      const other = await signIn(user.email, PASSWORD);
      const db = t.ctx.db.kysely;
      const count = async (table: 'clouds' | 'tasks' | 'cleanup_tasks' | 'sessions' | 'users', column = 'user_id') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where(column as 'user_id', '=', user.uid)
              .executeTakeFirstOrThrow()
          ).n,
        );
      expect(await count('clouds')).toBe(2);
      expect(await count('tasks')).toBe(1);

      const wrong = await call('POST', '/api/account/delete', { headers: user.headers, body: { password: 'nope' } });
      expect(wrong.code).toBe(Code.PASSWORD_INCORRECT);
      expect(await count('users', 'id')).toBe(1);

      const res = await call<DeleteAccountData>('POST', '/api/account/delete', {
        headers: { ...user.headers, 'x-language': 'ja' },
        body: { password: PASSWORD },
      });
      expect(res.code).toBe(0);
      expect(res.msg).toBe('アカウントを削除しました。');
      expect(res.data).toEqual({ successor_email: null });
      for (const table of ['clouds', 'tasks', 'cleanup_tasks', 'sessions'] as const)
        expect(await count(table), table).toBe(0);
      expect(await count('users', 'id')).toBe(0);
      expect((await me(other.data.access_token)).code).toBe(Code.UNAUTHENTICATED);
      expect((await signIn(user.email, PASSWORD)).code).toBe(Code.BAD_REQUEST);
      // The address is free again.
      expect(
        (await call('POST', '/api/account/signup', { body: { email: user.email, password: PASSWORD } })).code,
      ).toBe(0);
    });

    it('the last operator names a successor before deleting their account', async () => {
      // A fresh install: the first sign-up is its operator; the others are users.
      const fresh = await startTestApp({ dialect });
      const freshCall = caller(() => fresh);
      try {
        const first = await fresh.signUp(undefined, PASSWORD, { operator: false });
        const del = (body: Record<string, unknown>) =>
          freshCall<DeleteAccountData>('POST', '/api/account/delete', { headers: first.headers, body });
        const heir = await fresh.signUp(undefined, PASSWORD, { operator: false });
        const alone = await del({ password: PASSWORD });
        expect([alone.status, alone.code]).toEqual([409, Code.OPERATOR_SUCCESSOR_REQUIRED]);
        expect(alone.msg).toContain('only operator');
        const unknown = await del({ password: PASSWORD, successor_email: 'nobody@example.com' });
        expect([unknown.status, unknown.msg]).toEqual([
          400,
          'No other account of this server uses the address nobody@example.com.',
        ]);
        expect((await del({ password: PASSWORD, successor_email: first.email })).status).toBe(400);

        const users = () =>
          freshCall<{ items: Array<{ email: string; role: string }> }>('GET', '/api/operator/users', {
            headers: heir.headers,
          });
        expect((await users()).code).toBe(Code.OPERATOR_REQUIRED);
        const ok = await del({ password: PASSWORD, successor_email: heir.email.toUpperCase() });
        expect(ok.code).toBe(0);
        expect(ok.data).toEqual({ successor_email: heir.email });
        const list = await users();
        expect(list.code).toBe(0);
        expect(list.data.items.map((u) => [u.email, u.role])).toEqual([[heir.email, 'operator']]);
      } finally {
        await fresh.close();
      }
    });

    it('the only account of an install may go; the next sign-up is the operator', async () => {
      const fresh = await startTestApp({ dialect });
      try {
        const only = await fresh.signUp(undefined, PASSWORD, { operator: false });
        expect(only.data.user_info.role).toBe('operator');
        const res = await fresh.app.inject({
          method: 'POST',
          url: '/api/account/delete',
          headers: only.headers,
          payload: { password: PASSWORD },
        });
        expect(JSON.parse(res.body).code).toBe(0);
        const next = await fresh.signUp(undefined, PASSWORD, { operator: false });
        expect(next.data.user_info.role).toBe('operator');
        const later = await fresh.signUp(undefined, PASSWORD, { operator: false });
        expect(later.data.user_info.role).toBe('user');
      } finally {
        await fresh.close();
      }
    });

    it('every account call needs a signed-in user and answers bad input with a 4xx envelope', async () => {
      const visitor = await t.visitor();
      for (const [method, url] of [
        ['POST', '/api/account/password'],
        ['POST', '/api/account/email'],
        ['GET', '/api/account/sessions'],
        ['POST', '/api/account/sessions/revoke-others'],
        ['DELETE', '/api/account/sessions/abc'],
        ['POST', '/api/account/delete'],
      ] as const) {
        const body = {
          current_password: PASSWORD,
          new_password: 'a new long password',
          new_email: 'x@example.com',
          password: PASSWORD,
        };
        const res = await call(method, url, { headers: visitor.headers, body: method === 'POST' ? body : undefined });
        expect([res.status, res.code], url).toEqual([401, Code.UNAUTHENTICATED]);
      }
      const user = await t.signUp(undefined, PASSWORD);
      const bad = await call('POST', '/api/account/password', { headers: user.headers, body: { current_password: 1 } });
      expect(bad.status).toBe(400);
      const huge = await call('POST', '/api/account/password/reset', {
        body: { token: 'x'.repeat(600), new_password: 'y' },
      });
      expect(huge.status).toBe(400);
      const openapi = JSON.parse((await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).body) as {
        paths: Record<string, unknown>;
      };
      for (const path of [
        '/api/account/password',
        '/api/account/email',
        '/api/account/email/confirm',
        '/api/account/password/forgot',
        '/api/account/password/reset',
        '/api/account/sessions',
        '/api/account/sessions/{id}',
        '/api/account/sessions/revoke-others',
        '/api/account/delete',
      ]) {
        expect(openapi.paths[path], path).toBeDefined();
      }
    });
  });
}

describe('account e-mails through SMTP_URL', () => {
  let t: TestApp;
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await TestSmtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://files.example.org' } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.stop();
  });

  it('mails the reset link to a real SMTP server, in the language asked in, pointing at PUBLIC_URL', async () => {
    const user = await t.signUp(undefined, PASSWORD);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/account/password/forgot',
      headers: { 'x-language': 'de' },
      payload: { email: user.email },
    });
    expect(JSON.parse(res.body).msg).toBe(
      'Wenn ein Konto diese Adresse verwendet, wurde ein Link zum Festlegen eines neuen Passworts an sie gesendet.',
    );
    const mail: ReadMail = await waitForMail(
      () => smtp.received,
      (m) => m.to === user.email,
    );
    expect(mail.subject).toBe('Neues Skyferry-Passwort festlegen');
    const link = linkIn(mail.text);
    expect(link).toMatch(/^https:\/\/files\.example\.org\/account\/reset\?token=sk_pr_[\w-]+&lang=de$/);
    expect(outbox(t.dataDir)).toEqual([]);
    const reset = await t.app.inject({
      method: 'POST',
      url: '/api/account/password/reset',
      payload: { token: tokenOf(link), new_password: 'ein neues langes Passwort' },
    });
    expect(JSON.parse(reset.body).code).toBe(0);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type AuthorizationData, type CloudsMeData } from '@skyferry/contract';
import { startTestApp, type TestApp, type TestVisitor } from '../support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from '../support/visitor-clouds.ts';

/**
 * Issue 34, finding 4 (sign-in forgery): a `/callback-login#data=...` link someone else made must
 * not replace the session, and must never lead to the visitor's clouds being bound into that
 * other account. The browser side (the nonce check in the web app) is the journey
 * e2e/journeys/sign-in-forgery.e2e.test.ts; here the server's part: the account pages carry the
 * client's sign-in nonce through, and POST /api/clouds/bind moves clouds only into a session that
 * this browser signed in to moments ago, proved by that nonce.
 */

const nonce = () => randomBytes(32).toString('base64url');

describe('sign-in forgery', () => {
  let t: TestApp;
  let clouds: VisitorClouds;
  beforeAll(async () => {
    t = await startTestApp({ env: LOOPBACK_CLOUDS_ENV });
    clouds = await VisitorClouds.start();
  });
  afterAll(async () => {
    await t?.close();
    await clouds?.stop();
  });

  async function call<T>(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: object) {
    const res = await t.app.inject({
      method,
      url,
      headers,
      ...(body ? { payload: body as Record<string, unknown> } : {}),
    });
    return { status: res.statusCode, ...(JSON.parse(res.body) as { code: number; msg: string; data: T }) };
  }

  async function signIn(email: string, password: string, signInNonce?: string) {
    const res = await call<AuthorizationData>(
      'POST',
      '/api/account/login',
      {},
      {
        email,
        password,
        ...(signInNonce ? { sign_in_nonce: signInNonce } : {}),
      },
    );
    expect(res.code).toBe(0);
    return res.data;
  }

  /** A visitor (the victim before signing in) with a connected temporary cloud. */
  async function victimWithCloud(): Promise<{ visitor: TestVisitor; cloudId: string }> {
    const visitor = await t.visitor();
    const cloud = await clouds.connect(t, visitor.headers, { alias: 'Victim photos' });
    return { visitor, cloudId: cloud.id };
  }

  const tempClouds = async (visitor: TestVisitor) =>
    (await call<CloudsMeData>('GET', '/api/v2/clouds/me', visitor.headers)).data.temp_clouds.map((c) => c.id);

  it('the account pages carry the client’s nonce into the sign-in, its result and the sibling page', async () => {
    const n = nonce();
    const page = await t.app.inject({ method: 'GET', url: `/account/signin?lang=en&nonce=${n}` });
    expect(page.body).toContain(`data-nonce="${n}"`);
    expect(page.body).toContain(`href="/account/signup?lang=en&amp;nonce=${n}"`);
    // Anything but a well-formed nonce is dropped, never reflected.
    const evil = await t.app.inject({
      method: 'GET',
      url: `/account/signin?lang=en&nonce=${encodeURIComponent('"><script>alert(1)</script>')}`,
    });
    expect(evil.body).toContain('data-nonce=""');
    expect(evil.body).not.toContain('<script>alert(1)');
    const script = (await t.app.inject({ method: 'GET', url: '/account/assets/account.js' })).body;
    expect(script).toContain('sign_in_nonce: nonce');
    expect(script).toContain("post({ type: 'login_success', data: body.data, nonce: nonce })");
    expect(script).toContain("'&nonce=' + encodeURIComponent(nonce)");
  });

  it('a session keeps only the hash of its sign-in nonce', async () => {
    const victim = await t.signUp();
    const n = nonce();
    const data = await signIn(victim.email, victim.password, n);
    const row = await t.ctx.db.kysely
      .selectFrom('sessions as s')
      .innerJoin('access_tokens as a', 'a.session_id', 's.id')
      .select('s.sign_in_nonce_hash')
      .where('a.token_hash', '=', createHash('sha256').update(data.access_token).digest('hex'))
      .executeTakeFirstOrThrow();
    expect(row.sign_in_nonce_hash).toBe(createHash('sha256').update(n).digest('hex'));
  });

  it('the attacker’s tokens, put in the victim’s browser by a forged link, cannot take the victim’s clouds', async () => {
    const { visitor, cloudId } = await victimWithCloud();
    const attacker = await t.signUp();
    const browserNonce = nonce();
    // The attacker signed in on their own machine: without a nonce, or with one of their own.
    for (const forged of [
      await signIn(attacker.email, attacker.password),
      await signIn(attacker.email, attacker.password, nonce()),
    ]) {
      const headers = { authorization: `Bearer ${forged.access_token}`, ...visitor.headers };
      for (const body of [
        { relation_id: cloudId },
        { relation_id: cloudId, sign_in_nonce: browserNonce },
        // Discarding is refused too: nothing of the visitor's is touched.
        { relation_id: '', sign_in_nonce: browserNonce },
      ]) {
        const res = await call('POST', '/api/clouds/bind', headers, body);
        expect([res.status, res.code]).toEqual([403, Code.BIND_REQUIRES_SIGN_IN]);
        expect(res.msg).toBe(
          'To keep these cloud drives, sign in again in this browser and associate them right away.',
        );
      }
      const mine = await call<CloudsMeData>('GET', '/api/v2/clouds/me', {
        authorization: `Bearer ${forged.access_token}`,
      });
      expect(mine.data.clouds).toEqual([]);
    }
    expect(await tempClouds(visitor)).toEqual([cloudId]);
  });

  it('the account this browser just signed in to, with its nonce, binds them', async () => {
    const { visitor, cloudId } = await victimWithCloud();
    const victim = await t.signUp();
    const browserNonce = nonce();
    const session = await signIn(victim.email, victim.password, browserNonce);
    const res = await call<{ bound: string[] }>(
      'POST',
      '/api/clouds/bind',
      { authorization: `Bearer ${session.access_token}`, ...visitor.headers },
      { relation_id: cloudId, sign_in_nonce: browserNonce },
    );
    expect(res.code).toBe(0);
    expect(res.data.bound).toEqual([cloudId]);
  });

  it('only moments after the sign-in: a session over 30 minutes old no longer binds', async () => {
    const { visitor, cloudId } = await victimWithCloud();
    const victim = await t.signUp();
    const browserNonce = nonce();
    const session = await signIn(victim.email, victim.password, browserNonce);
    await t.ctx.db.kysely
      .updateTable('sessions')
      .set({ created_at: Date.now() - 31 * 60_000 })
      .where('sign_in_nonce_hash', '=', createHash('sha256').update(browserNonce).digest('hex'))
      .execute();
    const res = await call(
      'POST',
      '/api/clouds/bind',
      { authorization: `Bearer ${session.access_token}`, ...visitor.headers },
      { relation_id: cloudId, sign_in_nonce: browserNonce },
    );
    expect(res.code).toBe(Code.BIND_REQUIRES_SIGN_IN);
    expect(await tempClouds(visitor)).toEqual([cloudId]);
  });

  it('a malformed nonce is a 400, not a 5xx', async () => {
    const victim = await t.signUp();
    const res = await call(
      'POST',
      '/api/account/login',
      {},
      {
        email: victim.email,
        password: victim.password,
        sign_in_nonce: 'short',
      },
    );
    expect([res.status, res.code]).toEqual([400, Code.BAD_REQUEST]);
  });
});

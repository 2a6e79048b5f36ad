import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type InitData } from '@skyferry/contract';
import { startTestApp, type TestApp } from '../support/app.ts';
import { LOOPBACK_CLOUDS_ENV, VisitorClouds } from '../support/visitor-clouds.ts';

/**
 * Issue 34 (smaller items): visitor identities were unlimited (200 in 1.1 s, a row each). New ones
 * are limited per address (loopback exempt, as sign-ups), and idle ones are forgotten: without a
 * cloud after a day unseen, with clouds (and those clouds' credentials) after 30 days.
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`visitor identities [${dialect}]`, () => {
    let t: TestApp;
    let dav: VisitorClouds;
    beforeAll(async () => {
      t = await startTestApp({ dialect, env: LOOPBACK_CLOUDS_ENV });
      dav = await VisitorClouds.start();
    });
    afterAll(async () => {
      await t?.close();
      await dav?.stop();
    });

    const visitorRows = async () =>
      Number(
        (
          await t.ctx.db.kysely
            .selectFrom('visitors')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const token = (from?: string) =>
      t.app.inject({ method: 'GET', url: '/api/token', headers: from ? { 'x-forwarded-for': from } : {} });

    it('an address gets at most 60 new identities an hour; then 429, and init carries on without one', async () => {
      const before = await visitorRows();
      const answers = [];
      for (let i = 0; i < 70; i++) answers.push(await token('203.0.113.77'));
      expect(answers.slice(0, 60).every((r) => r.statusCode === 200)).toBe(true);
      const over = answers[60]!;
      expect([over.statusCode, JSON.parse(over.body).code]).toEqual([429, Code.RATE_LIMITED]);
      expect(await visitorRows()).toBe(before + 60);
      // Start-up still works from there: no new identity, no error.
      const init = await t.app.inject({
        method: 'GET',
        url: '/api/v2/init',
        headers: { 'x-forwarded-for': '203.0.113.77' },
      });
      expect(init.statusCode).toBe(200);
      expect((JSON.parse(init.body).data as InitData).temp_token).toBe('');
      // Another address is counted on its own.
      expect((await token('203.0.113.78')).statusCode).toBe(200);
      // The machine itself (a desktop install, the tests) is not limited.
      for (let i = 0; i < 70; i++) expect((await token()).statusCode).toBe(200);
      // After the hour, the address gets new ones again.
      await t.ctx.db.kysely
        .updateTable('rate_limits')
        .set({ reset_at: Date.now() - 1 })
        .where('key', 'like', 'visitor:%')
        .execute();
      expect((await token('203.0.113.77')).statusCode).toBe(200);
    });

    it('a signed-in user’s start-up makes no visitor identity', async () => {
      const u = await t.signUp();
      const before = await visitorRows();
      for (let i = 0; i < 5; i++) {
        const init = await t.app.inject({ method: 'GET', url: '/api/v2/init', headers: u.headers });
        expect((JSON.parse(init.body).data as InitData).temp_token).toBe('');
      }
      expect(await visitorRows()).toBe(before);
    });

    it('forgets a visitor without clouds a day after it was last seen, one with clouds (and their credentials) after 30', async () => {
      const idle = await t.visitor();
      const recent = await t.visitor();
      const withCloud = await t.visitor();
      const abandoned = await t.visitor();
      const connect = async (headers: Record<string, string>) => (await dav.connect(t, headers)).id;
      const kept = await connect(withCloud.headers);
      const gone = await connect(abandoned.headers);
      const idOf = async (tempToken: string) => (await t.ctx.tokens.authenticateVisitor(tempToken)) ?? '';
      const age = async (tempToken: string, days: number) =>
        t.ctx.db.kysely
          .updateTable('visitors')
          .set({ last_seen_at: Date.now() - days * 86_400_000 })
          .where('id', '=', await idOf(tempToken))
          .execute();
      const ids = {
        idle: await idOf(idle.tempToken),
        recent: await idOf(recent.tempToken),
        withCloud: await idOf(withCloud.tempToken),
        abandoned: await idOf(abandoned.tempToken),
      };
      await age(idle.tempToken, 1.1);
      await age(recent.tempToken, 0.5);
      await age(withCloud.tempToken, 2);
      await age(abandoned.tempToken, 31);
      // Their clouds count as used recently: only the visitor's own disuse decides here.
      await t.ctx.db.kysely.updateTable('clouds').set({ last_used_at: Date.now() }).execute();

      expect(await t.ctx.tokens.purgeIdleVisitors()).toBeGreaterThanOrEqual(2);
      const left = new Set((await t.ctx.db.kysely.selectFrom('visitors').select('id').execute()).map((r) => r.id));
      expect([ids.idle, ids.recent, ids.withCloud, ids.abandoned].map((id) => left.has(id))).toEqual([
        false,
        true,
        true,
        false,
      ]);
      const clouds = (await t.ctx.db.kysely.selectFrom('clouds').select('id').execute()).map((r) => r.id);
      expect(clouds).toContain(kept);
      expect(clouds).not.toContain(gone);
      // A forgotten identity is refused, like any unknown one.
      const refused = await t.app.inject({ method: 'GET', url: '/api/v2/clouds/me', headers: idle.headers });
      expect(JSON.parse(refused.body).code).toBe(Code.UNAUTHENTICATED);
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@skyferry/contract';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createTestContext, type TestContext } from '../support/context.ts';
import type { App } from '../../src/http/app-types.ts';
import { SIGN_IN_LIMITS } from '../../src/services/accounts.ts';

/**
 * Issue 34, finding 5 (lock-out by anyone): wrong passwords slow down the (account, address) pair
 * that sent them and never lock the owner out from elsewhere; an address has a cap across
 * accounts (spraying), except loopback, which counts per account only. The counters live in the
 * database, so every API process sees the same ones.
 */

const STRANGER = '203.0.113.50';
const OWNER_ELSEWHERE = '198.51.100.60';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`sign-in limits [${dialect}]`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ dialect });
    });
    afterAll(async () => {
      await t?.close();
    });

    /** Sign in over HTTP, from an address a trusted (loopback) proxy forwards, or from loopback itself. */
    async function signIn(email: string, password: string, from?: string, app: App = t.app) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/account/login',
        headers: from ? { 'x-forwarded-for': from } : {},
        payload: { email, password },
      });
      const body = JSON.parse(res.body) as { code: number; msg: string };
      return { status: res.statusCode, code: body.code, msg: body.msg };
    }

    /** Moves every sign-in pair's last attempt `ms` into the past (time passing). */
    async function wait(ms: number) {
      const rows = await t.ctx.db.kysely
        .selectFrom('rate_limits')
        .selectAll()
        .where('key', 'like', 'signin:pair:%')
        .execute();
      for (const row of rows) {
        await t.ctx.db.kysely
          .updateTable('rate_limits')
          .set({ reset_at: row.reset_at - ms })
          .where('key', '=', row.key)
          .execute();
      }
    }

    /**
     * Dates every sign-in pair's last attempt to now, so the next attempt meets the whole wait
     * however long the password check before it took on a busy machine.
     */
    async function justTried() {
      await t.ctx.db.kysely
        .updateTable('rate_limits')
        .set({ reset_at: Date.now() + SIGN_IN_LIMITS.pair.windowMs })
        .where('key', 'like', 'signin:pair:%')
        .execute();
    }

    const waitSeconds = (msg: string) => Number(/wait (\d+) seconds/.exec(msg)?.[1] ?? NaN);

    it('a stranger’s wrong passwords slow that stranger down; the owner signs in from elsewhere at once', async () => {
      const owner = await t.signUp();
      const answers = [];
      for (let i = 0; i < 20; i++) {
        if (i >= 5) await justTried();
        answers.push(await signIn(owner.email, `guess ${i}`, STRANGER));
      }
      expect(answers.slice(0, 5).map((a) => a.code)).toEqual([400, 400, 400, 400, 400]);
      expect(answers.slice(5).every((a) => a.status === 429 && a.code === Code.RATE_LIMITED)).toBe(true);
      expect(answers[5]?.msg).toBe(
        'Too many failed sign-ins from here for this account. Please wait 1 seconds and try again.',
      );
      // The owner, from another address and from the machine itself, is not affected at all.
      expect((await signIn(owner.email, owner.password, OWNER_ELSEWHERE)).code).toBe(0);
      expect((await signIn(owner.email, owner.password)).code).toBe(0);
      // A wrong guess by the owner elsewhere is just a wrong password.
      expect((await signIn(owner.email, 'typo', OWNER_ELSEWHERE)).msg).toBe('The email or password is incorrect.');
    });

    it('slows down with a growing wait rather than locking, and the right password works once it is over', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      const owner = await t.signUp();
      for (let i = 0; i < 5; i++) expect((await signIn(owner.email, `guess ${i}`, STRANGER)).code).toBe(400);
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) {
        await justTried();
        const blocked = await signIn(owner.email, `guess again ${i}`, STRANGER);
        expect(blocked.status).toBe(429);
        waits.push(waitSeconds(blocked.msg));
        await wait(waits[i]! * 1000);
        // Once waited, one more attempt is checked (and fails).
        expect((await signIn(owner.email, `guess again ${i}`, STRANGER)).code).toBe(400);
      }
      expect(waits).toEqual([1, 2, 4, 8, 16]);
      // Long waits are told in minutes, and never exceed 15 of them.
      await wait(32_000);
      for (let i = 0; i < 6; i++) {
        await signIn(owner.email, `more ${i}`, STRANGER);
        await wait(20 * 60_000);
      }
      const long = await signIn(owner.email, 'more', STRANGER);
      await justTried();
      const longer = await signIn(owner.email, 'more', STRANGER);
      expect(long.code).toBe(400);
      expect(longer.msg).toMatch(/Too many sign-in attempts, please try again in 1[45] minutes\./);
      // Even the owner from that same address gets in after the wait, and the pair starts over.
      await wait(15 * 60_000);
      expect((await signIn(owner.email, owner.password, STRANGER)).code).toBe(0);
      for (let i = 0; i < 5; i++) expect((await signIn(owner.email, `fresh ${i}`, STRANGER)).code).toBe(400);
    });

    it('parallel guesses cannot slip past the wait', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      const owner = await t.signUp();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => signIn(owner.email, `parallel ${i}`, STRANGER)),
      );
      expect(answers.filter((a) => a.code === 400)).toHaveLength(5);
      expect(answers.filter((a) => a.code === Code.RATE_LIMITED)).toHaveLength(15);
    });

    it('loopback counts per account only: failures across many accounts do not block the desktop', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      for (let i = 0; i < 60; i++) {
        expect((await signIn(`nobody${i}.${dialect}@example.com`, 'guess123456')).code).toBe(400);
      }
      const u = await t.signUp();
      expect((await signIn(u.email, u.password)).code).toBe(0);
      // One account guessed at from loopback is slowed there, not any other account.
      for (let i = 0; i < 5; i++) await signIn(u.email, `wrong ${i}`);
      await justTried();
      expect((await signIn(u.email, u.password)).code).toBe(Code.RATE_LIMITED);
      const v = await t.signUp();
      expect((await signIn(v.email, v.password)).code).toBe(0);
    });

    it('still caps an address across accounts (password spraying), not loopback', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      for (let i = 0; i < 50; i++) {
        expect((await signIn(`spray${i}.${dialect}@example.com`, 'guess123456', STRANGER)).code).toBe(400);
      }
      const u = await t.signUp();
      expect((await signIn(u.email, u.password, STRANGER)).code).toBe(Code.RATE_LIMITED);
      expect((await signIn(u.email, u.password, OWNER_ELSEWHERE)).code).toBe(0);
    });

    it('keeps the counters in the database: a second API process sees the same ones', async () => {
      await t.ctx.db.kysely.deleteFrom('rate_limits').execute();
      let other: TestContext | undefined;
      try {
        other = await createTestContext({ dialect, env: { DATABASE_URL: t.databaseUrl } });
        const second = await other.buildApp();
        const owner = await t.signUp();
        for (let i = 0; i < 5; i++) expect((await signIn(owner.email, `guess ${i}`, STRANGER)).code).toBe(400);
        await justTried();
        expect((await signIn(owner.email, owner.password, STRANGER, second)).code).toBe(Code.RATE_LIMITED);
        expect((await signIn(owner.email, owner.password, OWNER_ELSEWHERE, second)).code).toBe(0);
      } finally {
        await other?.cleanup();
      }
    });
  });
}

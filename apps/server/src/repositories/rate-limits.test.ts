import { expect, it } from 'vitest';
import { describeEachDialect } from '@skyferry/db/testing';
import { RateLimitsRepository, slowDownDelay } from './rate-limits.ts';

describeEachDialect('RateLimitsRepository', (getDb) => {
  it('counts hits in a fixed window, starts over after it, and resets on demand', async () => {
    const repo = new RateLimitsRepository(getDb().kysely);
    const t0 = 1_000_000;
    expect(await repo.get('k', t0)).toEqual({ count: 0, resetAt: t0 });
    await repo.hit('k', 60_000, t0);
    await repo.hit('k', 60_000, t0 + 10);
    await Promise.all([repo.hit('k', 60_000, t0 + 20), repo.hit('k', 60_000, t0 + 30)]);
    expect(await repo.get('k', t0 + 100)).toEqual({ count: 4, resetAt: t0 + 60_000 });
    expect((await repo.get('k', t0 + 60_000)).count).toBe(0);
    await repo.hit('k', 60_000, t0 + 60_001);
    expect(await repo.get('k', t0 + 60_002)).toEqual({ count: 1, resetAt: t0 + 120_001 });
    await repo.reset('k');
    expect((await repo.get('k', t0 + 60_003)).count).toBe(0);
    await repo.hit('other', 10, t0);
    await repo.purgeExpired(t0 + 11);
    expect((await repo.get('other', t0)).count).toBe(0);
  });

  it('admits attempts under a growing delay, one at a time however many arrive together', async () => {
    const repo = new RateLimitsRepository(getDb().kysely);
    const policy = { windowMs: 60_000, free: 2, baseDelayMs: 1_000, maxDelayMs: 4_000 };
    expect([0, 1, 2, 3, 4, 5, 9].map((n) => slowDownDelay(n, policy))).toEqual([
      0, 0, 1_000, 2_000, 4_000, 4_000, 4_000,
    ]);
    const t0 = 5_000_000;
    expect(await repo.admit('p', policy, t0)).toBe(0);
    expect(await repo.admit('p', policy, t0 + 10)).toBe(0);
    // The third must wait a second after the second; nothing is counted while it waits.
    expect(await repo.admit('p', policy, t0 + 500)).toBe(510);
    expect(await repo.admit('p', policy, t0 + 900)).toBe(110);
    expect(await repo.admit('p', policy, t0 + 1_010)).toBe(0);
    expect(await repo.admit('p', policy, t0 + 1_011)).toBe(1_999);
    // After the window the count starts over.
    expect(await repo.admit('p', policy, t0 + 1_010 + 60_000)).toBe(0);
    expect((await repo.get('p', t0 + 1_010 + 60_001)).count).toBe(1);
    // Parallel attempts on a fresh key: exactly `free` are admitted.
    const answers = await Promise.all(Array.from({ length: 10 }, () => repo.admit('q', policy, t0)));
    expect(answers.filter((w) => w === 0)).toHaveLength(2);
  });
});

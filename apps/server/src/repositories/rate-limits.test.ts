import { expect, it } from 'vitest';
import { describeEachDialect } from '@skyferry/db/testing';
import { RateLimitsRepository } from './rate-limits.ts';

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
});

import { describe, expect, it } from 'vitest';
import { ALL_CLOUD_FLAGS, CloudFlag } from '@skyferry/contract';
import { refreshSpaceStaggered, staggerDelay } from './space.ts';

describe('space refresh', () => {
  it('waits a random 1 to 2 s', () => {
    expect(staggerDelay(() => 0)).toBe(1000);
    expect(staggerDelay(() => 0.999999)).toBe(2000);
    expect(staggerDelay(() => 0.5)).toBeGreaterThan(1000);
  });

  it('refreshes one cloud after another, each after its own delay, skipping clouds without usage detail and expired ones', async () => {
    const timers: number[] = [];
    const refreshed: string[] = [];
    const clouds = [
      { id: 'a', flags: ALL_CLOUD_FLAGS, status: 'authorized' },
      { id: 'b', flags: ALL_CLOUD_FLAGS & ~CloudFlag.usingDetail, status: 'authorized' },
      { id: 'c', flags: ALL_CLOUD_FLAGS, status: 'expired' },
      { id: 'd', flags: ALL_CLOUD_FLAGS, status: 'authorized' },
    ];
    const pending: Array<() => void> = [];
    refreshSpaceStaggered(clouds, async (c) => void refreshed.push(c.id), {
      random: () => 0.25,
      setTimer: (fn, ms) => {
        timers.push(ms);
        pending.push(fn);
        return pending.length;
      },
    });
    while (pending.length > 0) {
      pending.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(refreshed).toEqual(['a', 'd']);
    expect(timers).toEqual([1250, 1250]);
  });
});

import { describe, expect, it } from 'vitest';
import { mapLimit } from './map-limit.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapLimit', () => {
  it('keeps at most `limit` under way and gives the results in order', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 3, async (n, i) => {
      running++;
      most = Math.max(most, running);
      await tick(n * 3);
      running--;
      return `${i}:${n}`;
    });
    expect(out).toEqual(['0:5', '1:1', '2:4', '3:2', '4:3', '5:0']);
    expect(most).toBe(3);
  });

  it('after a failure starts nothing more, and throws the first failure once those under way settle', async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const err = await mapLimit([0, 1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      await tick(n === 0 ? 1 : 20);
      settled.push(n);
      if (n === 0) throw new Error('first');
      if (n === 1) throw new Error('second');
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('first');
    expect(started).toEqual([0, 1]);
    expect(settled.sort()).toEqual([0, 1]);
  });

  it('an empty list resolves at once', async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
  });
});

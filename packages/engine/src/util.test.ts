import { describe, expect, it } from 'vitest';
import { poolSent } from './util.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('poolSent', () => {
  it('runs items in order, n sending and at most 2n under way, each freeing its place once sent', async () => {
    let sending = 0;
    let underWay = 0;
    const max = { sending: 0, underWay: 0 };
    const started: number[] = [];
    await poolSent(
      [0, 1, 2, 3, 4, 5, 6, 7],
      2,
      async (i, sent) => {
        started.push(i);
        underWay++;
        sending++;
        max.underWay = Math.max(max.underWay, underWay);
        max.sending = Math.max(max.sending, sending);
        await tick(5);
        sending--;
        sent();
        await tick(30); // the answer
        underWay--;
      },
      () => false,
    );
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(max.sending).toBe(2);
    expect(max.underWay).toBe(4);
  });

  it('starts nothing once stopped, and throws a failure that escapes only after the rest settled', async () => {
    const settled: number[] = [];
    let stopped = false;
    const run = poolSent(
      [0, 1, 2, 3, 4],
      2,
      async (i) => {
        await tick(i === 0 ? 5 : 20);
        if (i === 0) throw new Error('refused');
        settled.push(i);
      },
      () => stopped,
    );
    await expect(run).rejects.toThrow('refused');
    // Item 1 was under way when item 0 failed, and was waited for; no item started after.
    expect(settled).toEqual([1]);

    const ran: number[] = [];
    await poolSent(
      [0, 1, 2, 3],
      1,
      async (i) => {
        ran.push(i);
        if (i === 1) stopped = true;
      },
      () => stopped,
    );
    expect(ran).toEqual([0, 1]);
  });
});

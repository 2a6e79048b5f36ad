import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// A process that keeps about 20 MB alive while it makes ten times as much garbage that lives a
// while (as a task's items do), and prints the largest heap V8 reserved on the way.
const CHURN = `
await import(process.argv[1]);
let most = 0;
const live = [];
for (let round = 0; round < 60; round++) {
  const batch = Array.from({ length: 20000 }, (_, i) => ({ i, name: 'file-' + round + '-' + i, size: i * 7 }));
  live.push(batch);
  if (live.length > 8) live.shift();
  most = Math.max(most, process.memoryUsage().heapTotal);
  await new Promise((r) => setImmediate(r));
}
console.log(most);
`;

// A process with the guard at LIMIT bytes, checking every 50 ms, at most one collection each
// EVERY ms: prints how many full collections were forced (asked for, not V8’s own) in 600 ms (1.5 s
// with GROW).
const GUARDED = `
const { constants, PerformanceObserver } = await import('node:perf_hooks');
const { guardHeap } = await import(process.argv[1]);
let forced = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR && e.detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forced++;
}).observe({ entryTypes: ['gc'] });
const stop = guardHeap(Number(process.env.LIMIT), Number(process.env.EVERY), 50);
// GROW: about 5 MB more kept alive every 50 ms.
const held = [];
const grow = process.env.GROW ? setInterval(() => held.push(Array.from({ length: 50000 }, (_, i) => ({ i, s: 'x' + i }))), 50) : undefined;
await new Promise((r) => setTimeout(r, process.env.GROW ? 1500 : 600));
clearInterval(grow);
stop();
await new Promise((r) => setTimeout(r, 50));
console.log(forced);
`;

function run(script: string, env: Record<string, string>): string {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, join(import.meta.dirname, 'heap.ts')], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

const largestHeap = (mode: string) => Number(run(CHURN, { SKYFERRY_HEAP: mode }));

describe('the server heap policy (heap.ts)', () => {
  it('keeps the heap small with SKYFERRY_HEAP=size, and V8’s larger one with speed', () => {
    const size = largestHeap('size');
    const speed = largestHeap('speed');
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(speed * 0.7);
  }, 60_000);

  it('asks for a full collection once the heap in use passes the guard’s limit, at most one in its time', () => {
    const forced = (limit: number, every: number, grow = '') =>
      Number(run(GUARDED, { SKYFERRY_HEAP: 'speed', LIMIT: String(limit), EVERY: String(every), GROW: grow }));
    // Any heap is past a limit of 1 byte: one collection, then none in its time.
    expect(forced(1, 30_000)).toBe(1);
    // With no time between, none again either while the heap has not doubled since (this process
    // makes no garbage), where a check every 50 ms would otherwise ask at each one.
    expect(forced(1, 0)).toBe(1);
    // A heap that keeps growing is asked again each time it has doubled.
    expect(forced(1, 0, '1')).toBeGreaterThanOrEqual(3);
    // Under the limit: none.
    expect(forced(2 ** 40, 0)).toBe(0);
  }, 60_000);
});

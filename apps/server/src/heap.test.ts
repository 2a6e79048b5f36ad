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

function largestHeap(mode: 'size' | undefined): number {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', CHURN, join(import.meta.dirname, 'heap.ts')], {
    env: { ...process.env, SKYFERRY_HEAP: mode ?? '' },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout.trim());
}

describe('the server heap policy (heap.ts)', () => {
  it('keeps the heap small with SKYFERRY_HEAP=size, and V8’s larger one by default', () => {
    const size = largestHeap('size');
    const speed = largestHeap(undefined);
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(speed * 0.7);
  }, 60_000);
});

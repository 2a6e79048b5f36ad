/**
 * How the server's processes hold their JavaScript heap, set before anything else is loaded (the
 * first import of main.ts and worker.ts). A task of many small files makes garbage quickly, and
 * every page V8 takes for its heap stays with the process once the garbage is gone, so the largest
 * heap of a run is the process's resident size from then on (docs/benchmarks/scale.md).
 *
 * - `balanced` (the default): V8's collector, with two bounds. After a full collection the old
 *   generation grows by 20 % of what it kept before the next one (V8 lets it grow to up to four
 *   times that), and once the heap in use passes 256 MiB a full collection is asked for (at most
 *   one every 30 s): V8 otherwise lets a busy process's first heap grow to several hundred MiB
 *   before it collects at all.
 * - `size`: V8's `--optimize-for-size` (a small young generation, memory-reducing collections):
 *   the smallest heap, for much more time in the collector.
 * - `speed`: V8's defaults.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export type HeapMode = 'balanced' | 'size' | 'speed';

export const heapMode: HeapMode =
  process.env.SKYFERRY_HEAP === 'size' || process.env.SKYFERRY_HEAP === 'speed'
    ? process.env.SKYFERRY_HEAP
    : 'balanced';

/** Heap in use past which `balanced` asks for a full collection. */
export const GUARD_BYTES = 256 * 2 ** 20;
/** At most one asked-for collection in this time. */
const GUARD_EVERY_MS = 30_000;

/**
 * Checks the heap in use each second and asks for a full collection once it passes `limitBytes`
 * and twice what the last one kept (then not again for `everyMs`). V8's `gc` function is taken from a context made while it is
 * exposed, and exposed nowhere else. Returns a stop function.
 */
export function guardHeap(limitBytes = GUARD_BYTES, everyMs = GUARD_EVERY_MS, checkMs = 1000): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  setFlagsFromString('--no-expose-gc');
  if (typeof gc !== 'function') return () => undefined;
  let last = -Infinity;
  // What the last asked-for collection kept: a heap that much of is live is not asked again until
  // it has doubled (a full collection of a large live heap holds the event loop for long).
  let kept = 0;
  const timer = setInterval(() => {
    if (getHeapStatistics().used_heap_size < Math.max(limitBytes, 2 * kept)) return;
    const now = performance.now();
    if (now - last < everyMs) return;
    last = now;
    (gc as () => void)();
    kept = getHeapStatistics().used_heap_size;
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}

if (heapMode === 'size') setFlagsFromString('--optimize-for-size');
if (heapMode === 'balanced') {
  setFlagsFromString('--heap-growing-percent=20');
  guardHeap();
}

/**
 * How the server's processes hold their JavaScript heap, set before anything else is loaded (the
 * first import of main.ts and worker.ts). SKYFERRY_HEAP=size has V8 favour a small heap (it
 * collects sooner, with a small young generation): a million-file task then peaks at about a
 * third of the resident size it reaches with V8's defaults, which let the heap grow to several times
 * what is live, for more time in the collector (docs/benchmarks/scale.md). The default, `speed`,
 * keeps V8's defaults.
 */
import { setFlagsFromString } from 'node:v8';

export const heapMode: 'size' | 'speed' = process.env.SKYFERRY_HEAP === 'size' ? 'size' : 'speed';
if (heapMode === 'size') setFlagsFromString('--optimize-for-size');

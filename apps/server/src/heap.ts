/**
 * How the server's processes hold their JavaScript heap, set before anything else is loaded (the
 * first import of main.ts and worker.ts). By default V8 favours a small heap: it collects sooner,
 * with a small young generation. A million-file task then peaks at a fraction of the resident size
 * it reaches with V8's defaults (which let the heap grow to several times what is live), for more
 * time in the collector. SKYFERRY_HEAP=speed keeps V8's defaults, for machines with memory to spare.
 */
import { setFlagsFromString } from 'node:v8';

export const heapMode: 'size' | 'speed' = process.env.SKYFERRY_HEAP === 'speed' ? 'speed' : 'size';
if (heapMode === 'size') setFlagsFromString('--optimize-for-size');

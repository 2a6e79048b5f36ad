/**
 * Loaded into the API process by `npm run bench:api` (node --import): measures, inside the
 * server, how long each request takes from its arrival to its last byte, and the event-loop delay,
 * so the report can tell the server's own time from the time a crowded machine adds.
 * The bench asks for a reset after its warm-up and for the figures at the end (IPC messages).
 */
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';

const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
let times: number[] = [];
// Turns of the event loop held longer than 50 ms: when (ms since the reset) and how long, to tell
// where in a task they fall (its start, its walk, its end).
let since = performance.now();
let stalls: { atMs: number; ms: number }[] = [];
let lastTick = performance.now();
// The process's memory each second, and the sample where its resident size was largest: how much of
// it is V8's heap (in use, and reserved), buffers and native memory.
type MemorySample = NodeJS.MemoryUsage & { atMs: number };
let memory: { peak?: MemorySample; maxHeapUsed: number; maxHeapTotal: number; maxExternal: number } = {
  maxHeapUsed: 0,
  maxHeapTotal: 0,
  maxExternal: 0,
};
setInterval(() => {
  const m = process.memoryUsage();
  memory.maxHeapUsed = Math.max(memory.maxHeapUsed, m.heapUsed);
  memory.maxHeapTotal = Math.max(memory.maxHeapTotal, m.heapTotal);
  memory.maxExternal = Math.max(memory.maxExternal, m.external);
  if (!memory.peak || m.rss > memory.peak.rss) memory.peak = { ...m, atMs: Math.round(performance.now() - since) };
  if (process.env.BENCH_MEMORY_LOG)
    appendFileSync(
      process.env.BENCH_MEMORY_LOG,
      `${Math.round(performance.now() - since)} ${[m.rss, m.heapUsed, m.heapTotal].map((x) => Math.round(x / 1048576)).join(' ')}\n`,
    );
}, 1000).unref();
setInterval(() => {
  const now = performance.now();
  if (now - lastTick > 60) stalls.push({ atMs: Math.round(lastTick - since), ms: Math.round(now - lastTick - 10) });
  lastTick = now;
}, 10).unref();
// Garbage-collection pauses (main thread), to tell them from the rest of the event-loop delay.
let gc = { count: 0, totalMs: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.count++;
    gc.totalMs += e.duration;
    gc.maxMs = Math.max(gc.maxMs, e.duration);
  }
}).observe({ entryTypes: ['gc'] });

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'request') {
    const res = args[1] as http.ServerResponse;
    const t0 = performance.now();
    res.once('finish', () => times.push(performance.now() - t0));
  }
  return Reflect.apply(emit, this, [event, ...args]) as boolean;
} as typeof emit;

process.on('message', (message: { type?: string }) => {
  if (message.type === 'probe-reset') {
    times = [];
    stalls = [];
    memory = { maxHeapUsed: 0, maxHeapTotal: 0, maxExternal: 0 };
    since = performance.now();
    gc = { count: 0, totalMs: 0, maxMs: 0 };
    loop.reset();
  } else if (message.type === 'probe-report') {
    const sorted = [...times].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
    process.send?.({
      type: 'probe-report',
      count: sorted.length,
      p50: at(50),
      p90: at(90),
      p99: at(99),
      max: sorted[sorted.length - 1] ?? 0,
      loopMeanMs: loop.mean / 1e6,
      loopP99Ms: loop.percentile(99) / 1e6,
      loopMaxMs: loop.max / 1e6,
      loopP50Ms: loop.percentile(50) / 1e6,
      gcCount: gc.count,
      gcTotalMs: gc.totalMs,
      gcMaxMs: gc.maxMs,
      stalls: stalls.slice(0, 50),
      memory,
    });
  }
});

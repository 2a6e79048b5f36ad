/**
 * Loaded into the API process by `npm run bench:api` (node --import): measures, inside the
 * server, how long each request takes from its arrival to its last byte, and the event-loop delay,
 * so the report can tell the server's own time from the time a crowded machine adds.
 * The bench asks for a reset after its warm-up and for the figures at the end (IPC messages).
 */
import http from 'node:http';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';

const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();
let times: number[] = [];
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
    });
  }
});

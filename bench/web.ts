/**
 * First-load benchmark of the web app: the real server and the built app in Debian's Chromium,
 * its network throttled through the DevTools protocol (Network.emulateNetworkConditions), opening
 * /transfer as a first-time visitor. Per network profile and cache state (cold: a new browser
 * context; warm: the same context again) it prints the median of 5 runs of
 *   - first paint: the first pixels,
 *   - first useful paint: the app's header and menu painted (Element Timing on the first header
 *     title painted: the app shell's, which the server sends for the sidebar layout's routes, or
 *     the app's own when the page has none or the app replaced it before it was painted),
 *   - app running: the header React rendered painted (the app's scripts have run; it replaces the
 *     server's shell with the same markup),
 *   - screen: the page's heading painted (start-up answered, the screen's chunk loaded),
 *   - the compressed JavaScript requested before the first header and before the app's own header
 *     were in the page, and all bytes received until the screen showed (Resource Timing's
 *     transferSize: headers and body, 0 from cache),
 *   - layout shift after the first useful paint (the sum of 'layout-shift' entries, as CLS),
 *   - the renderer main thread's CPU time until the app's header painted (thread ticks: the page's
 *     own work, which the wall-clock figures include along with any wait for a CPU on a busy machine).
 *
 *   npm run build && npm run bench:web
 *   BENCH_RUNS=3 npm run bench:web
 *
 * Exits 1 when a target is missed (BENCH_NO_FAIL=1: 0). Not part of CI: timings depend on the machine.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { launchBrowser } from '../e2e/support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../e2e/support/server.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ROUTE = '/transfer';

interface Profile {
  name: string;
  /** Bytes per second each way; 0: not throttled. */
  throughput: number;
  /** Added to every request, in ms. */
  latency: number;
}

const PROFILES: Profile[] = [
  { name: 'loopback', throughput: 0, latency: 0 },
  { name: '10 Mbit/s, 40 ms', throughput: 10_000_000 / 8, latency: 40 },
  { name: '1.6 Mbit/s, 150 ms', throughput: 1_600_000 / 8, latency: 150 },
];

const TARGETS = {
  /** First useful paint, cold, per profile name. */
  usefulPaintMs: { loopback: 400, '1.6 Mbit/s, 150 ms': 1500 } as Record<string, number>,
  /** Compressed JavaScript before the first useful paint (cold). */
  jsBeforePaintBytes: 200 * 1024,
  /** Layout shift after the first useful paint. */
  cls: 0,
};

interface Sample {
  /** Main-thread CPU time from the response to (just after) the app's own header painted. */
  cpu: number;
  firstPaint: number;
  usefulPaint: number;
  app: number;
  screen: number;
  jsBeforePaint: number;
  jsBeforeApp: number;
  bytes: number;
  cls: number;
  encodings: string[];
}

/** What the page records about itself (installed before any of its scripts run). */
interface PageBench {
  paints: Record<string, number>;
  elements: Record<string, number>;
  /** When a header was first in the page (performance.now()): the server's shell, or the app's own. */
  shellInDom?: number;
  /** When the app (React) first put its own header in the page. */
  appInDom?: number;
  shifts: Array<{ value: number; startTime: number; hadRecentInput: boolean; moved?: string[] }>;
}

/** Runs in the page before its own scripts: marks the header title and the page heading for Element Timing. */
function instrument(): void {
  type Entry = { name: string; startTime: number; identifier?: string; renderTime?: number; loadTime?: number };
  type Shift = {
    value: number;
    startTime: number;
    hadRecentInput: boolean;
    sources?: Array<{ node?: { outerHTML?: string; textContent?: string }; previousRect: object; currentRect: object }>;
  };
  const g = globalThis as unknown as {
    __bench: PageBench;
    PerformanceObserver: new (cb: (list: { getEntries(): Entry[] }) => void) => { observe(o: object): void };
    MutationObserver: new (cb: () => void) => { observe(target: unknown, o: object): void };
    document: {
      querySelector(s: string): {
        hasAttribute(n: string): boolean;
        getAttribute(n: string): string | null;
        setAttribute(n: string, v: string): void;
      } | null;
    };
    performance: { now(): number };
  };
  const bench: PageBench = { paints: {}, elements: {}, shifts: [] };
  g.__bench = bench;
  new g.PerformanceObserver((list) => {
    for (const e of list.getEntries()) bench.paints[e.name] = e.startTime;
  }).observe({ type: 'paint', buffered: true });
  new g.PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.identifier && !(e.identifier in bench.elements))
        bench.elements[e.identifier] = e.renderTime || e.loadTime || e.startTime;
  }).observe({ type: 'element', buffered: true });
  new g.PerformanceObserver((list) => {
    for (const e of list.getEntries() as unknown as Shift[])
      bench.shifts.push({
        value: e.value,
        startTime: e.startTime,
        hadRecentInput: e.hadRecentInput,
        // What moved (BENCH_SHIFTS=1 prints it).
        moved: (e.sources ?? []).map(
          (src) =>
            `${(src.node?.outerHTML ?? src.node?.textContent ?? '?').slice(0, 160)} ${JSON.stringify(src.previousRect)} -> ${JSON.stringify(src.currentRect)}`,
        ),
      });
  }).observe({ type: 'layout-shift', buffered: true });
  // Mutation callbacks run before the next paint, so the marks are in place when the element is painted.
  const mark = (selector: string, id: string) => {
    const el = g.document.querySelector(selector);
    if (!el || el.hasAttribute('elementtiming')) return;
    el.setAttribute('elementtiming', id);
  };
  // The header's title: `shell` when the server sent it, `app` when React drew it (React keeps its
  // fiber on the elements it creates). When the app's scripts come from the cache, the app may
  // replace the server's header before that was ever painted: then the app's is the first painted.
  const byReact = (el: object) => Object.keys(el).some((k) => k.startsWith('__reactFiber'));
  const markHeader = () => {
    const el = g.document.querySelector('header h1');
    if (!el || el.hasAttribute('elementtiming')) return;
    const app = byReact(el);
    if (!app && bench.shellInDom !== undefined) return;
    el.setAttribute('elementtiming', app ? 'app' : 'shell');
    bench.shellInDom ??= g.performance.now();
    if (app) bench.appInDom = g.performance.now();
  };
  new g.MutationObserver(() => {
    markHeader();
    mark('main h2', 'screen');
    // The document, not its root element: this runs before the root element exists.
  }).observe(g.document, { childList: true, subtree: true });
}

/** The page's DevTools session with its network throttled (none: not throttled). */
async function devtools(page: Page, profile: Profile | null): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  // CPU time (thread ticks), not wall time: the page's own work whatever else the machine runs.
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
  if (!profile) return cdp;
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: profile.latency,
    downloadThroughput: profile.throughput || -1,
    uploadThroughput: profile.throughput || -1,
  });
  return cdp;
}

/** CPU time the page's renderer main thread has used so far, in ms. */
async function mainThreadMs(cdp: CDPSession): Promise<number> {
  const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> };
  return (metrics.find((m) => m.name === 'ThreadTime')?.value ?? NaN) * 1000;
}

/** Opens the route once and reads the page's figures when its screen has shown and the network is quiet. */
async function load(page: Page, url: string, cdp: CDPSession): Promise<Sample> {
  await page.goto(url, { waitUntil: 'commit' });
  const cpuAtStart = await mainThreadMs(cdp);
  const painted = (what: string) =>
    page.waitForFunction(
      (id: string) => {
        const b = (globalThis as unknown as { __bench?: PageBench }).__bench;
        return b !== undefined && id in b.elements;
      },
      what,
      { timeout: 60_000, polling: 20 },
    );
  await painted('app');
  const cpu = (await mainThreadMs(cdp)) - cpuAtStart;
  await painted('screen');
  await page.waitForLoadState('networkidle');
  // Let late work (tips, the QR panel) settle so shifts it causes are counted.
  await page.waitForTimeout(1000);
  const figures = await page.evaluate(() => {
    type Resource = { name: string; startTime: number; transferSize: number; responseEnd: number };
    const g = globalThis as unknown as {
      __bench: PageBench;
      performance: { getEntriesByType(t: string): Resource[] };
    };
    const b = g.__bench;
    const resources = [...g.performance.getEntriesByType('navigation'), ...g.performance.getEntriesByType('resource')];
    // The first header painted: the server's, or the app's when there was none (or it never got painted).
    const usefulPaint = Math.min(b.elements.shell ?? Infinity, b.elements.app as number);
    const screen = b.elements.screen as number;
    // What a render needed was asked for before it; the screen's chunks come after.
    const jsBefore = (at: number) =>
      resources.filter((r) => /\.js(\?|$)/.test(r.name) && r.startTime < at).reduce((s, r) => s + r.transferSize, 0);
    return {
      firstPaint: b.paints['first-contentful-paint'] ?? b.paints['first-paint'] ?? NaN,
      usefulPaint,
      app: b.elements.app as number,
      screen,
      jsBeforePaint: jsBefore(b.shellInDom ?? usefulPaint),
      jsBeforeApp: jsBefore(b.appInDom ?? NaN),
      bytes: resources.filter((r) => r.responseEnd <= screen).reduce((s, r) => s + r.transferSize, 0),
      cls: b.shifts.filter((s) => !s.hadRecentInput && s.startTime > usefulPaint).reduce((sum, s) => sum + s.value, 0),
      shifts: b.shifts.filter((s) => s.startTime > usefulPaint),
      encodings: [],
    };
  });
  const { shifts, ...rest } = figures;
  // BENCH_SHIFTS=1: what moved after the first useful paint.
  if (process.env.BENCH_SHIFTS === '1')
    for (const s of shifts)
      console.error(`  shift ${s.value.toFixed(5)} at ${Math.round(s.startTime)} ms: ${(s.moved ?? []).join('; ')}`);
  return { ...rest, cpu };
}

async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(instrument);
  return context;
}

/** Cold: a new context (empty cache, no connections, a first-time visitor) per run. */
async function cold(browser: Browser, server: RunningSkyferry, profile: Profile): Promise<Sample> {
  const context = await newContext(browser);
  try {
    const page = await context.newPage();
    const cdp = await devtools(page, profile);
    const encodings = new Set<string>();
    page.on('response', (r) => {
      if (r.url().includes('/assets/') && r.url().endsWith('.js'))
        void r
          .allHeaders()
          .then((h) => encodings.add(h['content-encoding'] ?? 'identity'))
          // A response still arriving when the run's context closes has nothing left to read.
          .catch(() => undefined);
    });
    const sample = await load(page, server.url + ROUTE, cdp);
    return { ...sample, encodings: [...encodings] };
  } finally {
    await context.close();
  }
}

/** Warm: the same context opened the route before (its cache, storage and connections), then again. */
async function warm(browser: Browser, server: RunningSkyferry, profile: Profile): Promise<Sample> {
  const context = await newContext(browser);
  try {
    const first = await context.newPage();
    await load(first, server.url + ROUTE, await devtools(first, null));
    await first.close();
    const page = await context.newPage();
    return await load(page, server.url + ROUTE, await devtools(page, profile));
  } finally {
    await context.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const ms = (v: number) => `${Math.round(v)} ms`;
const kb = (v: number) => `${(v / 1024).toFixed(1)} KB`;

async function main(): Promise<void> {
  // SKYFERRY_WEB_DIST (read by the server too) measures another build, e.g. an older one.
  const dist = resolve(process.env.SKYFERRY_WEB_DIST ?? resolve(import.meta.dirname, '../apps/web/dist'), 'index.html');
  if (!existsSync(dist)) throw new Error(`No built web app at ${dist}: run \`npm run build\` first.`);
  const server = await startSkyferry({ LOG_LEVEL: 'error' });
  const browser = await launchBrowser();
  const rows: string[][] = [];
  const missed: string[] = [];
  try {
    for (const profile of PROFILES) {
      for (const [cache, run] of [
        ['cold', cold],
        ['warm', warm],
      ] as const) {
        const samples: Sample[] = [];
        for (let i = 0; i < RUNS; i += 1) samples.push(await run(browser, server, profile));
        const m = (pick: (s: Sample) => number) => median(samples.map(pick));
        const row = {
          firstPaint: m((s) => s.firstPaint),
          usefulPaint: m((s) => s.usefulPaint),
          app: m((s) => s.app),
          cpu: m((s) => s.cpu),
          screen: m((s) => s.screen),
          js: m((s) => s.jsBeforePaint),
          jsApp: m((s) => s.jsBeforeApp),
          bytes: m((s) => s.bytes),
          cls: Math.max(...samples.map((s) => s.cls)),
        };
        const encodings = [...new Set(samples.flatMap((s) => s.encodings))].join('/') || '-';
        rows.push([
          profile.name,
          cache,
          ms(row.firstPaint),
          ms(row.usefulPaint),
          ms(row.app),
          ms(row.cpu),
          ms(row.screen),
          kb(row.js),
          kb(row.jsApp),
          kb(row.bytes),
          row.cls.toFixed(3),
          encodings,
        ]);
        console.log(`  ${profile.name}, ${cache}: done`);
        if (cache === 'cold') {
          const target = TARGETS.usefulPaintMs[profile.name];
          if (target !== undefined && row.usefulPaint >= target)
            missed.push(`${profile.name}: first useful paint ${ms(row.usefulPaint)} (target < ${target} ms)`);
          if (row.js >= TARGETS.jsBeforePaintBytes)
            missed.push(`${profile.name}: ${kb(row.js)} of JavaScript before first useful paint (target < 200 KB)`);
        }
        if (row.cls > TARGETS.cls)
          missed.push(`${profile.name}, ${cache}: layout shift ${row.cls.toFixed(3)} after first paint`);
      }
    }
  } finally {
    await browser.close();
    await server.stop();
  }
  const head = [
    'network',
    'cache',
    'first paint',
    'first useful paint',
    'app running',
    'main-thread CPU to app',
    'screen',
    'JS before useful paint',
    'JS before app',
    'bytes until screen',
    'CLS after paint (max)',
    'JS encoding',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `\nGET ${ROUTE} as a first-time visitor, 1440x900, median of ${RUNS} runs (${dist}; load average ${load})\n`,
  );
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log(
    `\nTargets: first useful paint < 400 ms on loopback and < 1.5 s at 1.6 Mbit/s + 150 ms (cold); < 200 KB of` +
      ' compressed JavaScript before it; no layout shift after it.',
  );
  if (missed.length > 0) {
    console.log(`Missed:\n  ${missed.join('\n  ')}`);
    if (process.env.BENCH_NO_FAIL !== '1') process.exitCode = 1;
  } else {
    console.log('All targets met.');
  }
}

await main();

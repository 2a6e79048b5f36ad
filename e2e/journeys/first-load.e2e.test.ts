/**
 * The first load in Chromium: outside the sidebar layout index.html draws the shell's outline
 * before any script runs (its routes get the app shell itself: app-shell.e2e.test.ts); the
 * scripts come compressed; what the app needs before it draws its own header and menu is under
 * 200 KB of compressed JavaScript; the first screen shows without the other screens' and the
 * dialogs' chunks (a screen's come when its route is opened) and with one language's translations;
 * and nothing on the page moves once the shell has shown (no layout shift, at Lighthouse's precision), on a first visit with
 * the banner, the QR panel, the tips and a service notice, on a desktop and on a phone.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { quietShell } from '../support/shell.ts';

let server: RunningSkyferry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const scripts: Array<{ url: string; name: string; encoding: string }> = [];

/** Screens and dialogs that the transfer screen must not fetch (their chunks are named after their modules). */
const OTHER_SCREENS = [
  'ManagePage',
  'ExplorerPage',
  'PhotosPage',
  'SlimPage',
  'SlimExplore',
  'SettingsPanel',
  'ConnectCloudDialog',
  'TransmissionListDialog',
];
const OTHER_LANGUAGES = ['ar', 'br', 'de', 'es', 'fr', 'it', 'ja', 'ko', 'nl'];

const chunkName = (url: string) => new URL(url).pathname.replace(/^\/assets\//, '').replace(/-[\w-]{8}\.js$/, '');

beforeAll(async () => {
  // A service notice: it shows above the screen once start-up has answered.
  [server, browser] = await Promise.all([
    startSkyferry({ SKYFERRY_SERVICE_NOTICE: 'Maintenance on Sunday from 8 to 9.' }),
    launchBrowser(),
  ]);
  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await quietShell(context);
  // When the app first puts its own header in the page (mutation callbacks run before the next
  // paint); React keeps its fiber on the elements it creates, the server's shell has none.
  await context.addInitScript(() => {
    const g = globalThis as unknown as {
      __appAt?: number;
      document: { querySelector(s: string): object | null };
      performance: { now(): number };
      MutationObserver: new (cb: () => void) => { observe(t: unknown, o: object): void; disconnect(): void };
    };
    const observer = new g.MutationObserver(() => {
      const h1 = g.document.querySelector('header h1');
      if (g.__appAt === undefined && h1 && Object.keys(h1).some((k) => k.startsWith('__reactFiber')))
        g.__appAt = g.performance.now();
    });
    observer.observe(g.document, { childList: true, subtree: true });
  });
  page = await context.newPage();
  page.on('response', (res) => {
    if (!new URL(res.url()).pathname.endsWith('.js')) return;
    scripts.push({
      url: res.url(),
      name: chunkName(res.url()),
      encoding: res.headers()['content-encoding'] ?? 'identity',
    });
  });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

it('index.html draws the outline of the shell before any script runs (outside the sidebar layout)', async () => {
  const res = await fetch(server.url + '/survey', { headers: { 'accept-encoding': 'br' } });
  expect(res.headers.get('content-encoding')).toBe('br');
  const html = await res.text();
  const body = html.slice(html.indexOf('<body'));
  expect(body.indexOf('class="sf-boot"')).toBeGreaterThan(0);
  // The outline comes before the stylesheets, which hold back only what follows them.
  expect(body.indexOf('class="sf-boot"')).toBeLessThan(body.indexOf('rel="stylesheet"'));
});

it('the transfer screen loads without the other screens, compressed, under 200 KB before the app draws its header', async () => {
  await page.goto(server.url + '/transfer');
  await page.getByTestId('migrate-page').waitFor();
  // What was fetched to show the screen (the dialogs' chunks are fetched a while later, when idle).
  const names = scripts.map((s) => s.name);
  expect(names).toContain('TransferPage');
  expect(names.filter((n) => OTHER_SCREENS.includes(n))).toEqual([]);
  expect(names).toContain('en');
  expect(names.filter((n) => OTHER_LANGUAGES.includes(n))).toEqual([]);
  // Brotli for every script worth compressing (the build leaves the smallest ones as they are).
  const sizes = await page.evaluate(() =>
    (
      globalThis as unknown as {
        performance: {
          getEntriesByType(
            t: string,
          ): Array<{ name: string; startTime: number; transferSize: number; decodedBodySize: number }>;
        };
      }
    ).performance
      .getEntriesByType('resource')
      .filter((r) => r.name.endsWith('.js'))
      .map((r) => ({ name: r.name, startTime: r.startTime, transferSize: r.transferSize, decoded: r.decodedBodySize })),
  );
  for (const r of sizes.filter((x) => x.decoded > 1024))
    expect(scripts.find((x) => x.url === r.name)?.encoding, r.name).toBe('br');
  const appAt = await page.evaluate(() => (globalThis as unknown as { __appAt?: number }).__appAt);
  expect(appAt).toBeGreaterThan(0);
  const before = sizes.filter((r) => r.startTime < (appAt as number));
  const bytes = before.reduce((sum, r) => sum + r.transferSize, 0);
  expect(bytes).toBeGreaterThan(50 * 1024);
  expect(bytes).toBeLessThan(200 * 1024);
});

it('another screen’s chunk comes when its route is opened', async () => {
  await page.getByRole('link', { name: 'Manage' }).click();
  await page.getByTestId('home').waitFor();
  expect(scripts.map((s) => s.name)).toContain('ManagePage');
});

it.each([
  ['desktop', 1440, 900],
  ['phone', 390, 844],
])('nothing moves after the shell shows (%s, first visit, with a service notice)', async (_name, width, height) => {
  const fresh = await browser.newContext({ viewport: { width, height } });
  await fresh.addInitScript(() => {
    type Shift = {
      value: number;
      startTime: number;
      hadRecentInput: boolean;
      moved?: string[];
      sources?: Array<{
        node?: { outerHTML?: string; textContent?: string };
        previousRect: object;
        currentRect: object;
      }>;
    };
    const g = globalThis as unknown as {
      __shifts: Shift[];
      __shellAt?: number;
      document: { querySelector(s: string): unknown };
      performance: { now(): number };
      PerformanceObserver: new (cb: (l: { getEntries(): unknown[] }) => void) => { observe(o: object): void };
      MutationObserver: new (cb: () => void) => { observe(t: unknown, o: object): void };
    };
    g.__shifts = [];
    new g.PerformanceObserver((l) =>
      g.__shifts.push(
        ...(l.getEntries() as Shift[]).map((e) => ({
          value: e.value,
          startTime: e.startTime,
          hadRecentInput: e.hadRecentInput,
          // What moved, so that a failure names it.
          moved: (e.sources ?? []).map((src) =>
            [
              (src.node?.outerHTML ?? src.node?.textContent ?? '?').slice(0, 120),
              JSON.stringify(src.previousRect),
              JSON.stringify(src.currentRect),
            ].join(' '),
          ),
        })),
      ),
    ).observe({
      type: 'layout-shift',
      buffered: true,
    });
    new g.MutationObserver(() => {
      if (g.__shellAt === undefined && g.document.querySelector('header h1')) g.__shellAt = g.performance.now();
    }).observe(g.document, { childList: true, subtree: true });
  });
  try {
    const p = await fresh.newPage();
    await p.goto(server.url + '/transfer');
    await p.getByTestId('migrate-page').waitFor();
    await p.getByTestId('service-notice').waitFor();
    await p.waitForLoadState('networkidle');
    await p.waitForTimeout(1000);
    const shifts = await p.evaluate(() => {
      const g = globalThis as unknown as {
        __shifts: Array<{ value: number; startTime: number; moved: string[] }>;
        __shellAt: number;
      };
      return g.__shifts.filter((s) => s.startTime >= g.__shellAt).map((s) => [s.value, ...s.moved]);
    });
    // Lighthouse-style: the layout shift after the shell, at Lighthouse's precision (three
    // decimals), is 0.000; the message names whatever moved.
    const total = shifts.reduce((sum, [value]) => sum + Number(value), 0);
    expect(total, JSON.stringify(shifts)).toBeLessThan(0.0005);
  } finally {
    await fresh.close();
  }
});

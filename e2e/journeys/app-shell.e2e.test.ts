/**
 * The app shell: for the sidebar layout's routes the server sends the page with the app's header
 * and menu already in it, in the user's language (the app's language cookie, else the browser's
 * Accept-Language; right to left for Arabic) and for a visitor or a signed-in user, so they are on
 * screen before any script has run, on a desktop and on a phone. When the scripts run, the app
 * draws the same header and menu in the same places (nothing moves), and the menu works.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { quietShell } from '../support/shell.ts';

let server: RunningSkyferry;
let browser: Browser;

const LOCALES = join(import.meta.dirname, '../../apps/web/src/i18n/locales');
const MENU_KEYS = ['transfer', 'sync', 'manage', 'slim', 'tasks'] as const;

/** The interface's own words for the menu and the visitor's badge in a language. */
function words(lang: string): { menu: string[]; badge: string } {
  const read = (ns: string) => JSON.parse(readFileSync(join(LOCALES, lang, `${ns}.json`), 'utf8')) as never;
  const common = read('common') as { nav: Record<string, string> };
  const shell = read('shell') as { visitor: { badge: string } };
  return { menu: MENU_KEYS.map((k) => common.nav[k] as string), badge: shell.visitor.badge };
}

/** The visible text of an HTML page's #root, roughly (tags dropped). */
function rootText(html: string): string {
  const root = html.slice(html.indexOf('<div id="root">'));
  return root
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

beforeAll(async () => {
  [server, browser] = await Promise.all([startSkyferry(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('the page the server sends', () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(server.url + path, { headers: { 'accept-encoding': 'br', ...headers } });

  it.each([
    ['en', 'en-US,en;q=0.9', 'ltr'],
    ['ar', 'ar-EG,ar;q=0.9,en;q=0.5', 'rtl'],
    ['ja', 'ja', 'ltr'],
  ])('has the header and menu in the browser’s language (%s)', async (lang, acceptLanguage, dir) => {
    const res = await get('/transfer', { 'accept-language': acceptLanguage });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('br');
    expect(res.headers.get('vary')?.toLowerCase()).toContain('accept-language');
    const html = await res.text();
    expect(html).toContain(`<html lang="${lang}" dir="${dir}"`);
    const text = rootText(html);
    expect(html).toMatch(/<header[^>]*>/);
    expect(html).toMatch(/<h1[^>]*>Skyferry<\/h1>/);
    for (const label of words(lang).menu) expect(text).toContain(label);
    // A first visit: the visitor's badge.
    expect(text).toContain(words(lang).badge);
    // The stylesheets the shell is drawn with hold back its paint: they are in the head.
    expect(html.indexOf('rel="stylesheet"')).toBeLessThan(html.indexOf('</head>'));
  });

  it('follows the language the app last used (its cookie) over the browser’s', async () => {
    const html = await (await get('/tasks/abc', { 'accept-language': 'en', cookie: 'sf_lang=de' })).text();
    expect(html).toContain('<html lang="de" dir="ltr"');
    for (const label of words('de').menu) expect(rootText(html)).toContain(label);
    // The page's menu entry is the highlighted one.
    expect(html.match(/<a [^>]*aria-current="page"[^>]*>/g)).toEqual([expect.stringContaining('href="/tasks"')]);
  });

  it('has a signed-in user’s header, without the visitor’s badge, when the app says someone is signed in', async () => {
    const html = await (await get('/manage', { cookie: 'sf_account=member; sf_lang=fr' })).text();
    for (const label of words('fr').menu) expect(rootText(html)).toContain(label);
    expect(rootText(html)).not.toContain(words('fr').badge);
    expect(html).toContain('data-testid="user-icon"');
  });

  it('keeps the outline for pages outside the sidebar layout', async () => {
    const html = await (await get('/callback-login', { 'accept-language': 'ar' })).text();
    expect(html).toContain('class="sf-boot"');
    expect(html).not.toMatch(/<header/);
  });
});

/** A context whose scripts wait until `release()`: the page shows what the server sent until then. */
async function heldScripts(context: BrowserContext): Promise<() => Promise<void>> {
  const held: Route[] = [];
  let released = false;
  await context.route('**/assets/*.js', (route) => (released ? route.continue() : void held.push(route)));
  return async () => {
    released = true;
    await Promise.all(held.splice(0).map((r) => r.continue()));
  };
}

type Box = { x: number; y: number; width: number; height: number };

/** Where the header's title, its icons and the menu's entries are (those on screen). */
function layout(page: Page): Promise<Record<string, Box>> {
  return page.evaluate(() => {
    type El = { getBoundingClientRect(): Box; getAttribute(n: string): string | null; textContent: string | null };
    const d = (globalThis as unknown as { document: { querySelectorAll(s: string): El[] } }).document;
    const boxes: Record<string, Box> = {};
    const add = (name: string, el: El) => {
      const { x, y, width, height } = el.getBoundingClientRect();
      if (width > 0 && height > 0) boxes[name] = { x, y, width, height };
    };
    d.querySelectorAll('header h1, header img').forEach((el, i) => add(`header-${i}`, el));
    d.querySelectorAll('header button, header a').forEach((el, i) =>
      add(`header-control-${i}-${el.getAttribute('aria-label') ?? el.textContent}`, el),
    );
    d.querySelectorAll('nav a').forEach((el) => add(`menu-${el.getAttribute('href')}`, el));
    return boxes;
  });
}

/** Whether React drew the header's title (its elements carry React's fiber); false: the server's shell. */
function appHeader(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const h1 = (
      globalThis as unknown as { document: { querySelector(s: string): object | null } }
    ).document.querySelector('header h1');
    return h1 !== null && Object.keys(h1).some((k) => k.startsWith('__reactFiber'));
  });
}

describe.each([
  ['desktop', 'en', 1440, 900],
  ['phone', 'en', 390, 844],
  ['desktop, Arabic', 'ar', 1440, 900],
])('in Chromium (%s)', (name, lang, width, height) => {
  let context: BrowserContext;
  let page: Page;
  let shellBoxes: Record<string, Box>;

  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width, height }, locale: lang });
    await quietShell(context);
    await context.addInitScript(() => {
      const g = globalThis as unknown as {
        __shifts: number[];
        PerformanceObserver: new (cb: (l: { getEntries(): unknown[] }) => void) => { observe(o: object): void };
      };
      g.__shifts = [];
      new g.PerformanceObserver((l) =>
        g.__shifts.push(...(l.getEntries() as Array<{ value: number }>).map((e) => e.value)),
      ).observe({ type: 'layout-shift', buffered: true });
    });
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
  });

  it('shows the header and menu before any script has run', async () => {
    const release = await heldScripts(context);
    // Module scripts hold back DOMContentLoaded: wait for the header itself.
    await page.goto(server.url + '/transfer', { waitUntil: 'commit' });
    const { menu } = words(lang);
    await page.locator('header h1').waitFor();
    expect(await appHeader(page)).toBe(false);
    expect(await page.locator('header h1').isVisible()).toBe(true);
    const dir = await page.evaluate(
      () => (globalThis as unknown as { document: { documentElement: { dir: string } } }).document.documentElement.dir,
    );
    expect(dir).toBe(lang === 'ar' ? 'rtl' : 'ltr');
    if (width < 768) {
      // Phones: the menu is a drawer behind the header's menu button.
      expect(await page.getByTestId('nav-burger').isVisible()).toBe(true);
      expect(await page.locator('nav').isVisible()).toBe(false);
    } else {
      for (const label of menu)
        expect(await page.locator('nav').getByText(label, { exact: true }).isVisible()).toBe(true);
      expect(await page.locator('nav a[aria-current="page"]').getAttribute('href')).toBe('/transfer');
      const nav = await page.locator('nav').boundingBox();
      // The sidebar on the reading side: left, or right for Arabic.
      if (lang === 'ar') expect(nav!.x).toBeGreaterThan(width / 2);
      else expect(nav!.x).toBe(0);
    }
    await screenshot(page, `app-shell-${name.replace(/\W+/g, '-')}-before-scripts`);
    shellBoxes = await layout(page);
    expect(Object.keys(shellBoxes).length).toBeGreaterThan(width < 768 ? 3 : 8);
    await release();
  });

  it('the app then draws the same header and menu in the same places', async () => {
    await expect.poll(() => appHeader(page), { timeout: 30_000, interval: 50 }).toBe(true);
    expect(await layout(page)).toEqual(shellBoxes);
    await page.getByTestId('migrate-page').waitFor();
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => (globalThis as unknown as { __shifts: number[] }).__shifts)).toEqual([]);
  });

  it('the menu works, without loading the page again', async () => {
    await page.evaluate(() => ((globalThis as unknown as { __samePage: boolean }).__samePage = true));
    if (width < 768) {
      await page.getByTestId('nav-burger').click();
      await page
        .getByRole('dialog')
        .getByRole('link', { name: words(lang).menu[2] })
        .click();
    } else {
      await page
        .locator('nav')
        .getByRole('link', { name: words(lang).menu[2] })
        .click();
    }
    await page.getByTestId('home').waitFor();
    expect(new URL(page.url()).pathname).toBe('/manage');
    expect(await page.evaluate(() => (globalThis as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
  });
});

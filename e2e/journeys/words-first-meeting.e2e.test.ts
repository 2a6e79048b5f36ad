import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, visitorToken } from '../support/shell.ts';

// Words and first meeting, in a real browser: a visitor's first visit (tips that do not block the
// page, the header saying they are not signed in and their clouds are temporary), the settings
// dialog leaving the address bar alone, the connect picker (usable kinds first, the others last
// with a reason for users), and Arabic (names of kinds translated, a table's headers over their
// values, sizes and dates reading as written, long left-to-right names cut at their right end).

let server: RunningSkyferry;
let browser: Browser;
let dav: RcloneServer;
const LONG = 'Documents and a very long folder name that has to be cut somewhere';

beforeAll(async () => {
  dav = await startRcloneServe('webdav');
  const auth = `Basic ${Buffer.from(`${dav.username}:${dav.password}`).toString('base64')}`;
  for (const path of ['alpha', `alpha/${encodeURIComponent(LONG)}`]) {
    expect((await fetch(dav.url + path, { method: 'MKCOL', headers: { authorization: auth } })).status).toBe(201);
  }
  const put = await fetch(dav.url + 'alpha/report-2024.pdf', {
    method: 'PUT',
    headers: { authorization: auth },
    body: 'x'.repeat(12_345),
  });
  expect(put.ok).toBe(true);
  server = await startSkyferry({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await dav?.stop();
});

/** A context whose pages start with the banner and the QR panel closed, the tips not yet seen. */
async function firstVisit(language?: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((lang: string | null) => {
    const d = new Date();
    const pad = (n: number) => String(n).padStart(2, '0');
    localStorage.setItem('skyferry.qr_closed_at', JSON.stringify(Date.now()));
    localStorage.setItem(
      'skyferry.banner_closed_on',
      JSON.stringify(`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`),
    );
    if (lang) localStorage.setItem('Language', lang);
  }, language ?? null);
  return context;
}

/** Connects the WebDAV folder as the visitor's temporary cloud and opens it in the explorer. */
async function openAlpha(page: Page): Promise<void> {
  const temp = await visitorToken(page);
  const res = await page.request.post(server.url + '/api/clouds', {
    headers: { 'x-temp-authorization': temp },
    data: {
      cloud_name: 'webdav',
      alias: 'Alpha',
      credentials: { url: `${dav.url}alpha/`, username: dav.username, password: dav.password },
    },
  });
  expect(((await res.json()) as { code: number }).code).toBe(0);
  await page.reload();
  await page.getByTestId('cloud-row').first().locator('a').click();
  await page.locator(`[data-testid="file-row"][data-name="${LONG}"]`).waitFor();
}

const box = async (locator: Locator) => {
  const b = await locator.boundingBox();
  if (!b) throw new Error('not on screen');
  return b;
};

/** Whether the first character of an element's text is inside its box (a cut end, not a cut start). */
const startVisible = (locator: Locator) =>
  locator.evaluate((el) => {
    const g = globalThis as unknown as {
      document: {
        createRange(): {
          setStart(n: unknown, o: number): void;
          setEnd(n: unknown, o: number): void;
          getBoundingClientRect(): { left: number; right: number };
        };
      };
    };
    const walker = (el as unknown as { firstChild: unknown }).firstChild;
    let node = walker as { nodeType: number; firstChild: unknown } | null;
    while (node && node.nodeType !== 3) node = node.firstChild as typeof node;
    if (!node) return false;
    const range = g.document.createRange();
    range.setStart(node, 0);
    range.setEnd(node, 1);
    const ch = range.getBoundingClientRect();
    const r = (el as unknown as { getBoundingClientRect(): { left: number; right: number } }).getBoundingClientRect();
    const e = el as unknown as { scrollWidth: number; clientWidth: number };
    return { cut: e.scrollWidth > e.clientWidth, inside: ch.left >= r.left - 1 && ch.right <= r.right + 1 };
  });

describe('first meeting', () => {
  it('tips on a first visit leave the page usable; the header says the visitor is not signed in, with temporary clouds', async () => {
    const context = await firstVisit();
    const page = await context.newPage();
    await page.goto(server.url + '/transfer');
    await page.getByTestId('tip-panel').waitFor();
    const badge = page.getByTestId('visitor-badge');
    expect(await badge.textContent()).toBe('Not signed in');
    expect(await page.locator(`[id="${await badge.getAttribute('aria-describedby')}"]`).textContent()).toContain(
      'Cloud drives you connect now are temporary',
    );
    await screenshot(page, 'words-first-visit');
    // While the tip shows, the rest of the page works: the menu navigates.
    await page.getByRole('link', { name: 'Sync', exact: true }).click();
    await page.waitForURL('**/sync');
    await openUserPanel(page);
    expect(await page.getByTestId('visitor-notice').textContent()).toContain('temporary');
    await context.close();
  });

  it('the settings dialog leaves the address bar and the history alone', async () => {
    const context = await firstVisit();
    await quietShell(context);
    const page = await context.newPage();
    const address = `${server.url}/sync?from=bookmark`;
    await page.goto(address);
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    const history = await page.evaluate(
      () => (globalThis as unknown as { history: { length: number } }).history.length,
    );
    await openUserPanel(page);
    await page.locator('[data-entry="settings"]').click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.waitFor();
    for (const tab of ['Language', 'Export Setting', 'Transfer defaults', 'General']) {
      await dialog.getByRole('tab', { name: tab }).click();
      expect(page.url()).toBe(address);
    }
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(page.url()).toBe(address);
    expect(await page.evaluate(() => (globalThis as unknown as { history: { length: number } }).history.length)).toBe(
      history,
    );
    await context.close();
  });

  it('the connect picker lists the usable kinds first, the others last, greyed, with a reason for users', async () => {
    const context = await firstVisit();
    await quietShell(context);
    const page = await context.newPage();
    await page.goto(server.url + '/transfer');
    await page.getByRole('button', { name: 'Add cloud drive' }).first().click();
    const dialog = page.getByTestId('connect-dialog');
    await dialog.getByTestId('kind-webdav').waitFor();
    const kinds = await dialog
      .locator('[data-testid^="kind-"]')
      .evaluateAll((els) =>
        els.map((el) => (el as unknown as { dataset: { unavailable?: string } }).dataset.unavailable === 'true'),
      );
    const firstUnavailable = kinds.indexOf(true);
    expect(firstUnavailable).toBeGreaterThan(0);
    expect(kinds.slice(firstUnavailable).every(Boolean)).toBe(true);
    expect(await dialog.getByTestId('kind-google_drive').textContent()).toContain('Not set up on this server.');
    expect(await dialog.getByTestId('kind-google_drive').isDisabled()).toBe(true);
    // Never an environment variable's name.
    expect(await dialog.textContent()).not.toMatch(/[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}/);
    await screenshot(page, 'words-connect-picker');
    await context.close();
  });
});

describe('Arabic, right to left', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await firstVisit('ar');
    await quietShell(context);
    page = await context.newPage();
    await page.goto(server.url + '/transfer');
    await page.getByRole('navigation').first().waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { document: { dir: string } }).document.dir)).toBe(
      'rtl',
    );
  });
  afterAll(async () => {
    await context?.close();
  });

  it('names the cloud kinds in Arabic, with no English left', async () => {
    await page.getByTestId('visitor-badge').waitFor();
    await page.locator('[data-guide="add-drive"]').click();
    const dialog = page.getByTestId('connect-dialog');
    await dialog.getByTestId('kind-local').waitFor();
    expect(await dialog.getByTestId('kind-local').textContent()).toContain('مجلد محلي');
    expect(await dialog.getByTestId('kind-s3_compatible').textContent()).toContain('تخزين متوافق مع S3');
    const text = (await dialog.textContent()) ?? '';
    for (const english of ['Local folder', 'S3-compatible storage', 'Shared with me', 'Not set up', 'Unavailable'])
      expect(text, english).not.toContain(english);
    await screenshot(page, 'words-connect-picker-ar');
    await page.keyboard.press('Escape');
    await dialog.getByTestId('kind-local').waitFor({ state: 'hidden' });
  });

  it('the explorer’s headers sit over their values; sizes and dates read as written; long names lose their right end', async () => {
    await openAlpha(page);
    const report = page.locator('[data-testid="file-row"][data-name="report-2024.pdf"]');
    const size = report.locator('[role="gridcell"]').nth(2);
    const date = report.locator('[role="gridcell"]').nth(3);
    expect(await size.textContent()).toBe('12.06 KB');
    // Read as written: the number left of its unit.
    const [num, unit] = await size.locator('bdi').evaluate((el) => {
      const g = globalThis as unknown as {
        document: {
          createRange(): {
            setStart(n: unknown, o: number): void;
            setEnd(n: unknown, o: number): void;
            getBoundingClientRect(): { left: number };
          };
        };
      };
      const node = (el as unknown as { firstChild: unknown }).firstChild;
      const at = (from: number, to: number) => {
        const r = g.document.createRange();
        r.setStart(node, from);
        r.setEnd(node, to);
        return r.getBoundingClientRect().left;
      };
      return [at(0, 5), at(6, 8)];
    });
    expect(num).toBeLessThan(unit);
    const sizeHeader = page.getByTestId('sort-size').locator('p');
    const dateHeader = page.getByTestId('sort-modified').locator('p');
    const sizeValue = await box(size.locator('bdi'));
    const dateValue = await box(date.locator('bdi'));
    // Sizes are aligned at the column's end (the left, right to left), their header too; dates at the start.
    expect(Math.abs((await box(sizeHeader)).x - sizeValue.x)).toBeLessThanOrEqual(2);
    const dateHeaderBox = await box(dateHeader);
    expect(Math.abs(dateHeaderBox.x + dateHeaderBox.width - (dateValue.x + dateValue.width))).toBeLessThanOrEqual(2);

    const long = page.locator(`[data-testid="file-row"][data-name="${LONG}"] [title]`).first();
    await page.setViewportSize({ width: 900, height: 800 });
    expect(await startVisible(long)).toEqual({ cut: true, inside: true });
    // The cloud's account in the sidebar, cut the same way.
    const account = page.getByTestId('cloud-row').first().locator('p').nth(1);
    expect(await startVisible(account)).toMatchObject({ inside: true });
    await screenshot(page, 'words-explorer-ar');
  });
});

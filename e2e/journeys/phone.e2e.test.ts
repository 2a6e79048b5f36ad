/**
 * Every screen on a phone (390x844, touch) in Chromium, with a local-folder cloud holding files
 * (long names among them): no sideways scrolling on any route or with its dialogs open, the
 * sidebar as a drawer from the header's menu button, dialogs filling the screen, the explorer
 * showing names first, and no "on your phone" QR panel. Screenshots of each go to e2e/artifacts/
 * (phone-*.png).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { startSkyferry, visitorWithCloud, type RunningSkyferry } from '../support/server.ts';
import { GUIDE_STEPS, signUpInFrame } from '../support/shell.ts';

const WIDTH = 390;
const HEIGHT = 844;
const LONG_NAME = 'Quarterly report for the board of directors, final version (2).pdf';
/** A 2x2 PNG (the photos view shows its thumbnail). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGM4EaABRAwQCgAljgUBqTNxyAAAAABJRU5ErkJggg==',
  'base64',
);

let server: RunningSkyferry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let root: string;
let dav: RcloneServer;
const errors: string[] = [];

/** A folder with files to browse, clean up (two copies of one file) and transfer. */
function writeFolder(dir: string): void {
  mkdirSync(join(dir, 'Holiday', 'photos'), { recursive: true });
  mkdirSync(join(dir, 'Work'), { recursive: true });
  writeFileSync(join(dir, 'Holiday', 'notes.txt'), 'packing list');
  for (let i = 1; i <= 5; i++) writeFileSync(join(dir, 'Holiday', 'photos', `beach ${i}.png`), PNG);
  writeFileSync(join(dir, 'Work', LONG_NAME), 'x'.repeat(123_456));
  writeFileSync(join(dir, 'Work', 'copy of the plan.txt'), 'the same plan'.repeat(50));
  writeFileSync(join(dir, 'Holiday', 'the plan.txt'), 'the same plan'.repeat(50));
}

/** The page's width as the browser lays it out (more than the viewport: sideways scrolling). */
function scrollWidth(): Promise<number> {
  return page.evaluate(
    () =>
      (globalThis as unknown as { document: { scrollingElement: { scrollWidth: number } } }).document.scrollingElement
        .scrollWidth,
  );
}

/** No sideways scrolling, and a screenshot to look at. */
async function fits(name: string): Promise<void> {
  // Opening animations move things; measure once they are done.
  await page.waitForTimeout(400);
  await screenshot(page, `phone-${name}`);
  expect(await scrollWidth(), name).toBeLessThanOrEqual(WIDTH);
}

/** A dialog fills the screen: its content spans the whole width. */
async function fillsScreen(dialog: Locator, name: string): Promise<void> {
  await dialog.waitFor();
  const box = await dialog.boundingBox();
  expect(box, name).not.toBeNull();
  expect(Math.round(box!.width), name).toBe(WIDTH);
  await fits(name);
}

async function closeDialog(dialog: Locator): Promise<void> {
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
}

/** A new visitor's token, with the folder connected as "My files". */
const visitorWithFolder = () =>
  visitorWithCloud(server, 'My files', {
    cloud_name: 'webdav',
    credentials: { url: dav.url, username: dav.username, password: dav.password },
  });

/** Uploads a small text file through the explorer's file input. */
async function uploadText(on: Page, name: string): Promise<void> {
  await on.getByTestId('upload-input').setInputFiles({ name, mimeType: 'text/plain', buffer: Buffer.from('hello') });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'skyferry-phone-'));
  writeFolder(join(root, 'files'));
  [server, browser, dav] = await Promise.all([
    startSkyferry({ SKYFERRY_LOCAL_ROOTS: root }),
    launchBrowser(),
    startRcloneServe('webdav', { dir: join(root, 'files') }),
  ]);
  // A visitor with the folder connected (through the API: the connect dialog is looked at below).
  const token = await visitorWithFolder();
  context = await browser.newContext({
    viewport: { width: WIDTH, height: HEIGHT },
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
  });
  // Tips seen and the banner closed, but not the QR panel: a phone must not show it at all.
  await context.addInitScript(
    ({ temp, steps }: { temp: string; steps: string[] }) => {
      const pad = (n: number) => String(n).padStart(2, '0');
      const d = new Date();
      localStorage.setItem('skyferry.temp_token', JSON.stringify(temp));
      localStorage.setItem('skyferry.guide', JSON.stringify(Object.fromEntries(steps.map((s) => [s, true]))));
      localStorage.setItem(
        'skyferry.banner_closed_on',
        JSON.stringify(`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`),
      );
    },
    { temp: token, steps: GUIDE_STEPS },
  );
  page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await dav?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

const heading = (name: string) => page.getByRole('heading', { level: 2, name });

describe('on a phone (390x844)', () => {
  it('every route fits the width, shows no QR panel, and keeps the sidebar in a drawer', async () => {
    const routes: Array<[string, string, () => Promise<void>]> = [
      ['/transfer', 'transfer', () => page.getByTestId('migrate-page').waitFor()],
      ['/sync', 'sync', () => heading('Sync').waitFor()],
      ['/manage', 'manage', () => page.getByTestId('home').waitFor()],
      ['/manage/explorer?cloud_index=0&is_open=1', 'explorer', () => page.getByTestId('file-row').first().waitFor()],
      ['/manage/photos?cloud_index=0', 'photos', () => heading('My files').waitFor()],
      ['/slim', 'slim', () => page.getByTestId('slim-page').waitFor()],
      // With no scan to show, the results screen goes back to /slim (the results are looked at below).
      [
        '/slim/explore',
        'slim-explore',
        () => page.waitForURL('**/slim').then(() => page.getByTestId('slim-page').waitFor()),
      ],
      ['/user', 'settings', () => heading('Settings').waitFor()],
      ['/buy', 'buy', () => page.getByTestId('buy-page').waitFor()],
      ['/myapp', 'myapp', () => page.locator('main h2').waitFor()],
      ['/ecology', 'ecology', () => page.locator('main h2').waitFor()],
      ['/ecology/detail', 'ecology-detail', () => page.locator('main h2').waitFor()],
      ['/ecology/app', 'ecology-app', () => page.locator('h2').first().waitFor()],
      ['/error?src=setting%20init%20error', 'error', () => page.getByTestId('error-reason').waitFor()],
    ];
    for (const [route, name, ready] of routes) {
      await page.goto(server.url + route);
      await ready();
      await fits(name);
      expect(await page.getByTestId('qr-panel').count(), name).toBe(0);
      if (route.startsWith('/error') || route === '/ecology/app') continue;
      // The menu is behind the header's button: no sidebar beside the screen.
      expect(await page.getByRole('navigation', { name: 'Main menu' }).isVisible(), name).toBe(false);
      expect(await page.getByTestId('nav-burger').isVisible(), name).toBe(true);
    }
  });

  it('the photos view fits with a folder of photos', async () => {
    await page.goto(server.url + '/manage/photos?cloud_index=0');
    await page.getByRole('button', { name: 'Holiday' }).click();
    await page.getByRole('button', { name: 'photos', exact: true }).click();
    await page.getByTestId('photo-tile').nth(4).locator('img').waitFor();
    await fits('photos-folder');
  });

  it('opens the menu as a drawer from the header and closes it on the way to another screen', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await page.getByTestId('nav-burger').click();
    const drawer = page.getByRole('dialog', { name: 'Skyferry' });
    await drawer.waitFor();
    expect(await page.getByTestId('nav-burger').getAttribute('aria-expanded')).toBe('true');
    await drawer.getByText('My files').waitFor();
    await fits('drawer');
    await drawer.getByRole('link', { name: 'Free up storage' }).click();
    await page.waitForURL('**/slim');
    await drawer.waitFor({ state: 'detached' });
    await page.getByTestId('slim-page').waitFor();
    // A cloud in the drawer opens the explorer.
    await page.getByTestId('nav-burger').click();
    await drawer.getByText('My files').click();
    await page.waitForURL(/\/manage\/explorer\?cloud_index=0/);
    await drawer.waitFor({ state: 'detached' });
    await page.getByTestId('file-row').first().waitFor();
  });

  it('header dialogs fill the screen and fit: the task list, the user panel, settings', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await page.getByRole('banner').getByRole('button', { name: 'Transmission list' }).click();
    const list = page.getByRole('dialog', { name: 'Transmission list' });
    await fillsScreen(list, 'task-list');
    await closeDialog(list);

    await page.getByTestId('user-icon').click();
    await page.getByTestId('user-panel').waitFor();
    await fits('user-panel');
    await page.getByTestId('user-panel').getByText('Settings').click();
    const settings = page.getByRole('dialog', { name: 'Settings' });
    await fillsScreen(settings, 'settings-dialog');
    await settings.getByRole('tab', { name: 'Transfer defaults' }).click();
    await fits('settings-defaults');
    await closeDialog(settings);
  });

  it('the explorer shows names first; its dialogs fill the screen', async () => {
    await page.goto(server.url + '/manage/explorer?cloud_index=0&is_open=1&path=%2FWork');
    const long = page.locator(`[data-testid="file-row"][data-name="${LONG_NAME}"]`);
    await long.waitFor();
    // The name takes the row's width; the size follows it and the date gives way.
    const nameBox = await long.locator('[title]').boundingBox();
    expect(nameBox!.width).toBeGreaterThan(WIDTH / 2);
    expect(await long.getByRole('gridcell').nth(3).isVisible()).toBe(false);
    expect(await long.getByRole('gridcell').nth(2).textContent()).toMatch(/KB/);
    await fits('explorer-long-names');

    await page.getByRole('button', { name: 'New folder' }).click();
    const mkdir = page.getByRole('dialog', { name: 'New folder' });
    await fillsScreen(mkdir, 'explorer-new-folder');
    await closeDialog(mkdir);

    await long.click();
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    const rename = page.getByRole('dialog', { name: 'Rename' });
    await fillsScreen(rename, 'explorer-rename');
    await closeDialog(rename);

    // An upload: the task panel fits beside nothing and its buttons stay in reach.
    await uploadText(page, 'from the phone.txt');
    const panel = page.getByTestId('task-panel');
    await panel.waitFor();
    await page.locator('[data-testid="file-row"][data-name="from the phone.txt"]').waitFor();
    const box = await panel.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(WIDTH);
    expect(await panel.getByRole('button', { name: 'Clear all' }).isVisible()).toBe(true);
    await fits('explorer-task-panel');
  });

  it('the connect dialog fills the screen', async () => {
    await page.goto(server.url + '/manage');
    await page.getByTestId('home').waitFor();
    await page.getByRole('button', { name: 'Add cloud' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
    await fillsScreen(dialog, 'connect');
    await dialog.getByTestId('kind-webdav').click();
    await fits('connect-webdav');
    await closeDialog(dialog);
  });

  it('transfer: the schedule, sign-in, confirmation and preview dialogs fill the screen', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await page.getByTestId('source-cloud').selectOption({ label: 'My files · WebDAV' });
    await page.getByTestId('target-cloud').selectOption({ label: 'My files · WebDAV' });
    await page.getByTestId('target-path').fill('/Copied');
    await page.getByTestId('target-path').blur();
    const holiday = page.getByTestId('source-tree').locator('[data-testid="tree-row"][data-path="/Holiday"]');
    await holiday.waitFor();
    await holiday.getByRole('checkbox').check();
    await fits('transfer-filled');
    await page.getByText('At a set time').click();
    const schedule = page.getByRole('dialog').first();
    await fillsScreen(schedule, 'transfer-schedule');
    await closeDialog(schedule);
    await page.getByText('Now', { exact: true }).click();
    await page.getByRole('button', { name: 'Preview and transfer' }).click();
    // A visitor signs in first (the sign-in pages in a frame), then keeps the folder cloud.
    const login = page.getByRole('dialog', { name: 'Log in' });
    await fillsScreen(login, 'login');
    await signUpInFrame(page, `phone.${Date.now()}@example.com`, 'correct horse battery');
    await login.waitFor({ state: 'detached' });
    const keep = page.getByRole('dialog', { name: 'Keep your cloud drives?' });
    await fillsScreen(keep, 'keep-clouds');
    await keep.getByRole('button', { name: 'Associate' }).click();
    await keep.waitFor({ state: 'detached' });
    await page.getByTestId('source-cloud').selectOption({ label: 'My files · WebDAV' });
    await page.getByTestId('target-cloud').selectOption({ label: 'My files · WebDAV' });
    if (!(await holiday.getByRole('checkbox').isChecked())) await holiday.getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Preview and transfer' }).click();
    // Source and target are the same cloud: asked first.
    const confirm = page.getByRole('dialog').filter({ has: page.getByRole('button', { name: 'Yes' }) });
    await fillsScreen(confirm, 'transfer-confirm');
    await confirm.getByRole('button', { name: 'Yes' }).click();
    const preview = page.getByRole('dialog', { name: 'Preview' });
    await fillsScreen(preview, 'transfer-preview');
    await closeDialog(preview);
  });

  it('free up storage: the scan results fit', async () => {
    await page.goto(server.url + '/slim');
    await page.getByTestId('slim-page').waitFor();
    await page.getByRole('button', { name: 'Start scan' }).click();
    await page.waitForURL(/\/slim\/explore\?task_id=/);
    await expect
      .poll(() => page.getByTestId('slim-explore').getAttribute('data-stage'), { timeout: 30_000 })
      .toBe('results');
    await page.getByTestId('slim-group').first().waitFor();
    await fits('slim-results');
    expect(errors).toEqual([]);
  });
});

describe('on a desktop (1440x900)', () => {
  it('the QR panel sits at the foot of the sidebar, clear of the task panel and its buttons', async () => {
    const desktop = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const token = await visitorWithFolder();
    await desktop.addInitScript(
      ({ temp, steps }: { temp: string; steps: string[] }) => {
        localStorage.setItem('skyferry.temp_token', JSON.stringify(temp));
        localStorage.setItem('skyferry.guide', JSON.stringify(Object.fromEntries(steps.map((s) => [s, true]))));
      },
      { temp: token, steps: GUIDE_STEPS },
    );
    const wide = await desktop.newPage();
    try {
      await wide.goto(server.url + '/manage/explorer?cloud_index=0&is_open=1&path=%2FWork');
      await wide.getByTestId('file-row').first().waitFor();
      await uploadText(wide, 'from the desk.txt');
      const panel = wide.getByTestId('task-panel');
      await panel.waitFor();
      const qr = wide.getByTestId('qr-panel');
      await qr.waitFor();
      const nav = (await wide.getByRole('navigation', { name: 'Main menu' }).boundingBox())!;
      const qrBox = (await qr.boundingBox())!;
      const panelBox = (await panel.boundingBox())!;
      expect(qrBox.x + qrBox.width).toBeLessThanOrEqual(nav.x + nav.width);
      expect(qrBox.x + qrBox.width <= panelBox.x || qrBox.y + qrBox.height <= panelBox.y).toBe(true);
      // What is under the middle of "Clear all" is the button itself.
      const clear = panel.getByRole('button', { name: 'Clear all' });
      const c = (await clear.boundingBox())!;
      const hit = await wide.evaluate(
        ({ x, y }) => {
          const el = (
            globalThis as unknown as { document: { elementFromPoint(x: number, y: number): unknown } }
          ).document.elementFromPoint(x, y) as { closest(s: string): { textContent: string } | null } | null;
          return el?.closest('button')?.textContent ?? null;
        },
        { x: c.x + c.width / 2, y: c.y + c.height / 2 },
      );
      expect(hit).toBe('Clear all');
      await screenshot(wide, 'desktop-qr-and-task-panel');
    } finally {
      await desktop.close();
    }
  });
});

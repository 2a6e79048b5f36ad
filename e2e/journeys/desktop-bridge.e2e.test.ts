/**
 * The desktop client's bridge contract in Chromium against the built web app and the real server:
 * the preload's bridge is injected into the page, and every call goes over a fake IPC to the main
 * process's real router and handlers running in this process (the update controller on
 * electron-updater with a loopback feed, the download manager, the settings). Drives the header's
 * window controls, the Mac home button, About, Check for Updates (latest, a new version, a
 * mandatory upgrade), the download folder, a download opened and shown in its folder, the log
 * folder from Feedback, and the platform codes and product ids in the API headers.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HEADERS } from '@skyferry/contract';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { desktopShell, type DesktopHarness } from '../support/desktop.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, connectWebdavInDialog, openUserPanel, quietShell } from '../support/shell.ts';

let server: RunningSkyferry;
let dav: RcloneServer;
let browser: Browser;

beforeAll(async () => {
  const davDir = mkdtempSync(join(tmpdir(), 'sf-desktop-dav-'));
  writeFileSync(join(davDir, 'report.txt'), 'quarterly numbers');
  [server, dav, browser] = await Promise.all([
    startSkyferry(),
    startRcloneServe('webdav', { dir: davDir }),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await dav?.stop();
});

async function open(
  platform: 'win32' | 'darwin',
): Promise<{ context: BrowserContext; page: Page; shell: DesktopHarness; headers: Array<Record<string, string>> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
  await quietShell(context);
  const shell = await desktopShell(context, { serverUrl: server.url, platform, version: '1.4.2' });
  const page = await context.newPage();
  const headers: Array<Record<string, string>> = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/')) headers.push(r.headers());
  });
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  return { context, page, shell, headers };
}

describe('desktop client on Windows', () => {
  let context: BrowserContext;
  let page: Page;
  let shell: DesktopHarness;
  let headers: Array<Record<string, string>>;

  beforeAll(async () => {
    ({ context, page, shell, headers } = await open('win32'));
  });
  afterAll(async () => {
    await context?.close();
    await shell?.close();
  });

  it('sends the Windows platform code and product id with every call', () => {
    expect(headers.length).toBeGreaterThan(0);
    for (const h of headers) {
      expect(h[HEADERS.platform]).toBe('3');
      expect(h[HEADERS.pid]).toBe('7920');
    }
  });

  it("drives the window from the header's minimize, maximize/restore and close", async () => {
    const controls = page.getByTestId('window-controls');
    await controls.waitFor();
    expect(await page.getByTestId('mac-home').count()).toBe(0);
    await controls.getByRole('button', { name: 'Minimize' }).click();
    await expect.poll(() => shell.window.minimized).toBe(1);
    await controls.getByRole('button', { name: 'Maximize' }).click();
    await controls.getByRole('button', { name: 'Restore' }).waitFor();
    expect(shell.window.maximized).toBe(true);
    await screenshot(page, 'desktop-window-controls');
    await controls.getByRole('button', { name: 'Restore' }).click();
    await controls.getByRole('button', { name: 'Maximize' }).waitFor();
    expect(shell.window.maximized).toBe(false);
    await controls.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => shell.window.closed).toBe(1);
    expect(shell.refused).toEqual([]);
  });

  it('shows the desktop version in About', async () => {
    await openUserPanel(page);
    await page.locator('[data-entry="about"]').click();
    const about = page.getByRole('dialog', { name: 'About' });
    await expect.poll(() => about.getByTestId('about-version').textContent()).toBe('Version 1.4.2');
    await page.keyboard.press('Escape');
    await about.waitFor({ state: 'hidden' });
  });

  it('checks for updates: "latest" first, then a new version downloaded and installed', async () => {
    shell.feed.set({ version: '1.4.2' });
    await openUserPanel(page);
    await page.locator('[data-entry="updates"]').click();
    const dialog = page.getByRole('dialog', { name: 'Check for Updates' });
    await dialog.getByText('You have the latest version (1.4.2).').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).last().click();
    await dialog.waitFor({ state: 'hidden' });

    shell.feed.set({ version: '1.5.0', notes: 'Faster transfers.\n<b>not markup</b>' });
    await openUserPanel(page);
    await page.locator('[data-entry="updates"]').click();
    await dialog.getByText('Version 1.5.0 is available.').waitFor();
    await dialog.getByText('Size: 3.00 MB').waitFor();
    await dialog.getByText('Released: 2026/11/20').waitFor();
    expect(await dialog.getByTestId('upgrade-notes').textContent()).toBe('Faster transfers.\n<b>not markup</b>');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await screenshot(page, 'desktop-update-info');
    await dialog.getByRole('button', { name: 'Update Now' }).click();
    await dialog.getByText('Version 1.5.0 is downloaded. Skyferry restarts to install it.').waitFor();
    expect(shell.installs).toBe(1);
    expect(shell.feed.requests.some((r) => r.path === '/Skyferry-1.5.0.deb')).toBe(true);
    await dialog.getByRole('button', { name: 'Close' }).last().click();
  });

  it('chooses the download folder in the settings, and the shell saves downloads there', async () => {
    const folder = join(shell.dir, 'My downloads');
    mkdirSync(folder);
    shell.nextDirectory = folder;
    await openUserPanel(page);
    await page.locator('[data-entry="settings"]').click();
    await page.getByRole('tab', { name: 'Transfer defaults' }).click();
    await page.getByRole('button', { name: 'Change' }).click();
    await expect.poll(() => page.getByTestId('download-path').textContent()).toBe(folder);
    expect(shell.settings.get().downloadPath).toBe(folder);
    await page.keyboard.press('Escape');
  });

  it('saves a downloaded file there, then opens it and shows it in its folder', async () => {
    await connectWebdavInDialog(page, dav);
    const file = page.locator('[data-testid="file-row"][data-name="report.txt"]');
    await file.click();
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    const task = page.getByTestId('task-row').filter({ hasText: 'report.txt' });
    await task.getByText('Downloaded').waitFor();
    const saved = join(shell.settings.get().downloadPath, 'report.txt');
    expect(readFileSync(saved, 'utf8')).toBe('quarterly numbers');
    await screenshot(page, 'desktop-downloaded');
    await task.getByTestId('open-file').click();
    await expect.poll(() => shell.opened).toEqual([saved]);
    await task.getByTestId('show-in-folder').click();
    await expect.poll(() => shell.shown).toEqual([saved]);
  });

  it('opens the log folder from Feedback', async () => {
    await openUserPanel(page);
    await page.locator('[data-entry="feedback"]').click();
    await page.getByTestId('open-log-folder').click();
    await expect.poll(() => shell.opened.at(-1)).toBe(shell.logs.dir);
    await page.keyboard.press('Escape');
  });

  it('refuses calls from a frame inside the page, and from pages of other origins', async () => {
    const frameAnswer = await page.evaluate(async (src) => {
      const g = globalThis as unknown as {
        document: {
          createElement(t: string): { src: string; onload: () => void };
          body: { appendChild(e: unknown): void };
        };
      };
      const frame = g.document.createElement('iframe');
      frame.src = src;
      await new Promise<void>((resolve) => {
        frame.onload = () => resolve();
        g.document.body.appendChild(frame);
      });
      const inner = (frame as unknown as { contentWindow: { skyferryDesktop: { readLog(): Promise<unknown> } } })
        .contentWindow;
      return inner.skyferryDesktop.readLog().then(
        () => 'answered',
        (err: Error) => err.message,
      );
    }, `${server.url}/healthz`);
    expect(frameAnswer).toContain('only the top frame may call');
    const other = await context.newPage();
    await other.goto('about:blank');
    const otherAnswer = await other.evaluate(() =>
      (globalThis as unknown as { skyferryDesktop: { readLog(): Promise<unknown> } }).skyferryDesktop.readLog().then(
        () => 'answered',
        (err: Error) => err.message,
      ),
    );
    expect(otherAnswer).toContain('not allowed');
    await other.close();
  });
});

describe('desktop client on Mac', () => {
  let context: BrowserContext;
  let page: Page;
  let shell: DesktopHarness;
  let headers: Array<Record<string, string>>;

  beforeAll(async () => {
    ({ context, page, shell, headers } = await open('darwin'));
  });
  afterAll(async () => {
    await context?.close();
    await shell?.close();
  });

  it('sends the Mac platform code and product id, and its home button goes home', async () => {
    expect(headers.every((h) => h[HEADERS.platform] === '4' && h[HEADERS.pid] === '8175')).toBe(true);
    await page.goto(server.url + '/sync');
    await page.getByTestId('mac-home').click();
    await page.waitForURL(/\/transfer$/);
  });

  it('opens the Upgrade modal for a mandatory upgrade found at start; cancel hides it and the download goes on', async () => {
    shell.feed.set({ version: '2.0.0', mandatory: true });
    // The shell's own check some time after start.
    await shell.updates.check();
    const dialog = page.getByRole('dialog', { name: 'Check for Updates' });
    await dialog.getByTestId('upgrade-mandatory').waitFor();
    await screenshot(page, 'desktop-update-mandatory');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => shell.installs, { timeout: 20_000 }).toBe(1);
    expect(shell.updates.current).toEqual({ step: 'downloaded', version: '2.0.0', mandatory: true });
  });
});

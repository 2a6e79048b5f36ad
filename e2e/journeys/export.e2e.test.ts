/**
 * Export to, in Chromium: a file of one cloud (`rclone serve webdav`, the laptop) exported through
 * the explorer's "Export to" dialog into another (Apache mod_dav, the archive), where it arrives in
 * the product's folder, byte for byte. The dialog's Export stays greyed until a target is chosen.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApacheWebdav, startRcloneServe, type ApacheWebdavServer, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, visitorWithCloud, type RunningSkyferry } from '../support/server.ts';
import { quietShell } from '../support/shell.ts';

let server: RunningSkyferry;
let laptop: RcloneServer;
let archive: ApacheWebdavServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
const CONTENT = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 13) % 256));

beforeAll(async () => {
  [server, laptop, archive, browser] = await Promise.all([
    startSkyferry(),
    startRcloneServe('webdav'),
    startApacheWebdav(),
    launchBrowser(),
  ]);
  writeFileSync(join(laptop.dir, 'report.pdf'), CONTENT);
  const temp = await visitorWithCloud(server, 'Laptop', {
    cloud_name: 'webdav',
    credentials: { url: laptop.url, username: laptop.username, password: laptop.password },
  });
  const second = (await (
    await fetch(`${server.url}/api/clouds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-temp-authorization': temp },
      body: JSON.stringify({
        cloud_name: 'webdav',
        alias: 'Archive',
        credentials: { url: archive.url, username: archive.username, password: archive.password },
      }),
    })
  ).json()) as { code: number; msg: string };
  if (second.code !== 0) throw new Error(`connect failed: ${second.msg}`);
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await quietShell(context);
  await context.addInitScript((token: string) => {
    localStorage.setItem('skyferry.temp_token', JSON.stringify(token));
  }, temp);
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await laptop?.stop();
  await archive?.stop();
});

describe('Export to another cloud', () => {
  it('exports a selected file from the laptop into the archive’s Skyferry folder', async () => {
    await page.goto(`${server.url}/manage/explorer?cloud_index=0&is_open=1&_=${Date.now()}`);
    const row = page.locator('[data-testid="file-row"][data-name="report.pdf"]').first();
    await row.click();
    await page.getByTestId('explorer-export').click();
    const dialog = page.getByRole('dialog', { name: 'Export to' });
    await dialog.waitFor();
    const submit = dialog.getByTestId('export-submit');
    expect(await submit.isDisabled()).toBe(true);
    await dialog.getByRole('radio', { name: /Archive/ }).check();
    expect(await submit.isEnabled()).toBe(true);
    await screenshot(page, 'export-dialog');
    await submit.click();
    await dialog.getByTestId('export-row').getByText('Completed').waitFor({ timeout: 30_000 });
    const arrived = join(archive.dir, 'Skyferry', 'report.pdf');
    expect(existsSync(arrived)).toBe(true);
    expect(readFileSync(arrived).equals(CONTENT)).toBe(true);
    await dialog.getByTestId('export-close').click();
    await dialog.waitFor({ state: 'hidden' });
    expect(pageErrors).toEqual([]);
  });
});

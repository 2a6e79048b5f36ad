/**
 * The explorer's tools in Chromium, between two real WebDAV servers (`rclone serve webdav` as the
 * laptop, Apache mod_dav as the archive): search by name (this folder as one types, then every
 * folder below it), "Move to…" another cloud as a server task, the two-pane view with a row dragged
 * onto the other cloud and copied there, the deleted files of a cloud without a trash, and the
 * keyboard (F2 renames).
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startApacheWebdav, startRcloneServe, type ApacheWebdavServer, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, signUpInFrame } from '../support/shell.ts';

let server: RunningSkyferry;
let laptop: RcloneServer;
let archive: ApacheWebdavServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

function listFiles(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(root, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

function write(root: string, rel: string, content: string): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
}

beforeAll(async () => {
  [server, laptop, archive, browser] = await Promise.all([
    startSkyferry(),
    startRcloneServe('webdav'),
    startApacheWebdav(),
    launchBrowser(),
  ]);
  write(laptop.dir, 'Reports/2024/invoice-march.pdf', 'march');
  write(laptop.dir, 'Reports/2024/summary.txt', 'summary');
  write(laptop.dir, 'Reports/invoice-total.xlsx', 'total');
  write(laptop.dir, 'Photos/beach.jpg', 'jpg');
  write(laptop.dir, 'notes.txt', 'notes');
  write(laptop.dir, 'Invoices are here.txt', 'top');
  context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  await quietShell(context);
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

const row = (name: string) => page.locator(`[data-testid="file-row"][data-name="${name}"]`).first();
const rowNames = () =>
  page
    .getByTestId('drop-zone')
    .getByTestId('file-row')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));

async function connect(url: string, username: string, password: string, alias: string): Promise<void> {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(username);
  await dialog.locator('input[name="password"]').fill(password);
  await dialog.getByTestId('field-alias').fill(alias);
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
}

async function openExplorer(index: number): Promise<void> {
  await page.goto(`${server.url}/manage/explorer?cloud_index=${index}&is_open=1&_=${Date.now()}`);
  await row('Photos').waitFor();
}

describe('the explorer between two clouds', () => {
  it('signs up and connects the laptop and the archive', async () => {
    await page.goto(server.url + '/manage');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await signUpInFrame(page, `explorer.${Date.now()}@example.com`, 'correct horse battery');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await connect(laptop.url, laptop.username, laptop.password, 'Laptop');
    await connect(archive.url, archive.username, archive.password, 'Archive');
  });

  it('searches by name: this folder as one types, then every folder below it', async () => {
    await openExplorer(0);
    await page.getByTestId('explorer-filter').fill('INVOICE');
    await expect.poll(rowNames).toEqual(['Invoices are here.txt']);
    await page.getByTestId('deep-search').click();
    const results = page.getByTestId('deep-search-item');
    await expect.poll(() => results.count(), { timeout: 20_000 }).toBe(3);
    await page.getByTestId('deep-search-progress').getByText('3 matches found').waitFor();
    await screenshot(page, 'explorer-deep-search');
    await results.filter({ hasText: 'invoice-march.pdf' }).click();
    await page.waitForURL(/path=%2FReports%2F2024/);
    await row('summary.txt').waitFor();
  });

  it('F2 renames the selected item', async () => {
    await openExplorer(0);
    await row('notes.txt').click();
    await page.keyboard.press('F2');
    const input = page.getByTestId('name-input');
    await input.waitFor();
    await expect.poll(() => input.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    await page.keyboard.type('notes-2024');
    await page.keyboard.press('Enter');
    await row('notes-2024.txt').waitFor();
    expect(existsSync(join(laptop.dir, 'notes-2024.txt'))).toBe(true);
  });

  it('"Move to…" moves a folder to the other cloud as a server task', async () => {
    await openExplorer(0);
    await row('Reports').click();
    await page.getByRole('button', { name: 'Move to…' }).click();
    const dialog = page.getByTestId('copy-move-dialog');
    await dialog.getByTestId('copy-move-cloud').selectOption({ label: 'Archive' });
    await dialog.getByRole('radio', { name: 'Choose Archive' }).check();
    await screenshot(page, 'explorer-move-to');
    await dialog.getByRole('button', { name: 'Move', exact: true }).click();
    await page.getByText('The move has started; its progress is in the task list.').waitFor();
    await expect
      .poll(() => listFiles(archive.dir), { timeout: 60_000 })
      .toEqual(['Reports/2024/invoice-march.pdf', 'Reports/2024/summary.txt', 'Reports/invoice-total.xlsx']);
    await expect.poll(() => existsSync(join(laptop.dir, 'Reports')), { timeout: 60_000 }).toBe(false);
  });

  it('two panes: a row dragged onto the archive pane is copied there', async () => {
    await openExplorer(0);
    await page.getByTestId('two-panes').click();
    const pane = page.getByTestId('side-pane');
    await expect.poll(() => pane.getByTestId('side-pane-cloud').inputValue()).not.toBe('');
    await pane.locator('[data-testid="file-row"][data-name="Reports"]').waitFor();
    await row('Photos').dragTo(pane.getByTestId('side-pane-drop'));
    const drop = page.getByTestId('drop-dialog');
    await drop.waitFor();
    expect(await drop.innerText()).toContain('Photos');
    await screenshot(page, 'explorer-two-panes-drop');
    await drop.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => listFiles(archive.dir), { timeout: 60_000 }).toContain('Photos/beach.jpg');
    expect(existsSync(join(laptop.dir, 'Photos/beach.jpg'))).toBe(true);
  });

  it('the deleted files of a cloud without a trash say so', async () => {
    await openExplorer(0);
    await page.getByRole('button', { name: 'Deleted files' }).click();
    await page.getByTestId('trash-unsupported').waitFor();
    // A plain WebDAV server keeps nothing it deletes: said as such, not as an empty list.
    expect(await page.getByTestId('trash-unsupported').textContent()).toContain(
      'what is deleted here is gone for good',
    );
    expect(pageErrors).toEqual([]);
  });
});

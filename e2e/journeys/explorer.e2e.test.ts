/**
 * Cloud management and the explorer in Chromium against a WebDAV cloud served by `rclone serve
 * webdav`: connect it through the dialog, upload a folder by drag and drop, rename, create a folder
 * (a forbidden character is refused as it is typed), download, delete, and reorder the clouds in
 * the sidebar.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, quietShell } from '../support/shell.ts';

let server: RunningSkyferry;
let dav: RcloneServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  [server, dav, browser] = await Promise.all([startSkyferry(), startRcloneServe('webdav'), launchBrowser()]);
  // bypassCSP: the accessibility scans inject axe-core.
  context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    bypassCSP: true,
  });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await dav?.stop();
});

const rows = () => page.getByTestId('file-row');
const row = (name: string) => page.locator(`[data-testid="file-row"][data-name="${name}"]`);

async function connectWebdav(url: string, alias: string): Promise<void> {
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await dialog.locator('input[name="password"]').fill(dav.password);
  await dialog.getByTestId('field-alias').fill(alias);
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
}

it('connects a WebDAV cloud through the dialog and opens it in the explorer', async () => {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  // Object-storage messages come first, in the spec's words.
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-s3_compatible').waitFor();
  expect(await axeSeriousViolations(page)).toEqual([]);
  await dialog.getByTestId('kind-s3_compatible').click();
  await dialog.getByTestId('connect-submit').click();
  await dialog.getByText('Bucket Name cannot be empty.').waitFor();
  // The form with a field in error.
  expect(await axeSeriousViolations(page)).toEqual([]);
  await dialog.getByRole('textbox', { name: 'Bucket Name' }).fill('b');
  await dialog.getByTestId('connect-submit').click();
  await dialog.getByText('Access Key ID cannot be empty.').waitFor();
  await dialog.getByRole('button', { name: 'All kinds' }).click();
  // A wrong password is refused with the server's message; the right one connects.
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await dialog.locator('input[name="password"]').fill('wrong');
  await dialog.getByTestId('connect-submit').click();
  await dialog.getByTestId('connect-error').waitFor();
  await dialog.locator('input[name="password"]').fill(dav.password);
  await dialog.getByTestId('field-alias').fill('Team DAV');
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
  await page.waitForURL(/\/manage\/explorer\?cloud_index=0&is_open=1&_=\d+/);
  await page.getByTestId('explorer-empty').waitFor();
  expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Team DAV');
  await screenshot(page, 'explorer-empty');
});

it('uploads a folder dropped onto the list (folders walked through webkitGetAsEntry)', async () => {
  // Chromium gives synthetic drops no file-system entries, so the drop carries entry objects
  // shaped like the browser's (FileSystemDirectoryEntry with a reader answering in batches).
  await page.getByTestId('drop-zone').evaluate((zone) => {
    type Node = { name: string; content?: string; children?: Node[] };
    const g = globalThis as unknown as {
      File: new (parts: string[], name: string, opts: object) => unknown;
      DragEvent: new (type: string, init: object) => { dataTransfer: unknown };
    };
    const entryOf = (node: Node): object =>
      node.children
        ? {
            isFile: false,
            isDirectory: true,
            name: node.name,
            createReader() {
              const batches = [node.children?.slice(0, 2) ?? [], node.children?.slice(2) ?? [], []];
              return {
                readEntries(ok: (e: object[]) => void) {
                  setTimeout(() => ok((batches.shift() ?? []).map(entryOf)), 5);
                },
              };
            },
          }
        : {
            isFile: true,
            isDirectory: false,
            name: node.name,
            file(ok: (f: unknown) => void) {
              ok(
                new g.File([node.content ?? ''], node.name, { type: 'text/plain', lastModified: Date.UTC(2024, 0, 2) }),
              );
            },
          };
    const tree: Node = {
      name: 'Holiday',
      children: [
        { name: 'notes.txt', content: 'packing list' },
        { name: 'a.txt', content: 'A'.repeat(5000) },
        { name: 'photos', children: [{ name: 'beach.jpg', content: 'not really a jpeg' }] },
        { name: 'empty', children: [] },
      ],
    };
    const items = [{ kind: 'file', webkitGetAsEntry: () => entryOf(tree) }];
    const dataTransfer = { items, files: [], types: ['Files'], dropEffect: 'copy' };
    const over = new g.DragEvent('dragover', { bubbles: true, cancelable: true });
    Object.defineProperty(over, 'dataTransfer', { value: dataTransfer });
    (zone as unknown as { dispatchEvent(e: unknown): void }).dispatchEvent(over);
    const drop = new g.DragEvent('drop', { bubbles: true, cancelable: true });
    Object.defineProperty(drop, 'dataTransfer', { value: dataTransfer });
    (zone as unknown as { dispatchEvent(e: unknown): void }).dispatchEvent(drop);
  });
  const panel = page.getByTestId('task-panel');
  await panel.waitFor();
  await expect
    .poll(() => panel.locator('[data-testid="task-row"][data-status="1"]').count(), { timeout: 30_000 })
    .toBe(3);
  expect(await page.getByTestId('task-panel-title').textContent()).toBe('Tasks (3)');
  await row('Holiday').waitFor();
  await row('Holiday').dblclick();
  await row('photos').waitFor();
  expect(
    await rows().evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { name: string } }).dataset.name)),
  ).toEqual(['empty', 'photos', 'a.txt', 'notes.txt']);
  expect(readFileSync(join(dav.dir, 'Holiday', 'notes.txt'), 'utf8')).toBe('packing list');
  expect(readFileSync(join(dav.dir, 'Holiday', 'photos', 'beach.jpg'), 'utf8')).toBe('not really a jpeg');
  expect(existsSync(join(dav.dir, 'Holiday', 'empty'))).toBe(true);
  expect(await page.getByTestId('path-bar').textContent()).toContain('Holiday');
  await screenshot(page, 'explorer-uploaded-folder');
  // The explorer with rows and the task panel open: no serious or critical accessibility violation.
  expect(await axeSeriousViolations(page)).toEqual([]);
});

it('sorts by each column and selects with the mouse and the keyboard', async () => {
  await page.getByTestId('sort-size').click();
  const names = () =>
    rows().evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { name: string } }).dataset.name));
  expect(await names()).toEqual(['empty', 'photos', 'notes.txt', 'a.txt']);
  await page.getByTestId('sort-size').click();
  expect(await names()).toEqual(['photos', 'empty', 'a.txt', 'notes.txt']);
  await page.getByTestId('sort-name').click();
  expect(await names()).toEqual(['empty', 'photos', 'a.txt', 'notes.txt']);
  await row('a.txt').click();
  await row('notes.txt').click({ modifiers: ['Shift'] });
  // The count and the size of the selection (5000 + 12 bytes).
  expect(await page.getByTestId('selection-count').textContent()).toBe('2 selected · 4.89 KB');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+ArrowDown');
  expect(await page.locator('[data-testid="file-row"][aria-selected="true"]').count()).toBe(2);
});

it('renames a file', async () => {
  await row('notes.txt').click();
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  const input = page.getByTestId('name-input');
  await input.fill('packing.txt');
  await input.press('Enter');
  await row('packing.txt').waitFor();
  expect(await row('notes.txt').count()).toBe(0);
  expect(readFileSync(join(dav.dir, 'Holiday', 'packing.txt'), 'utf8')).toBe('packing list');
});

it('creates a folder, refusing a forbidden character as it is typed', async () => {
  await page.getByRole('button', { name: 'New folder' }).click();
  const input = page.getByTestId('name-input');
  await input.fill('');
  await input.pressSequentially('Plans:2025?');
  expect(await input.inputValue()).toBe('Plans2025');
  await page.getByTestId('name-blocked').waitFor();
  await page.getByRole('button', { name: 'Create' }).click();
  await row('Plans2025').waitFor();
  expect(readdirSync(join(dav.dir, 'Holiday'))).toContain('Plans2025');
  await screenshot(page, 'explorer-new-folder');
});

it('downloads a file, and a folder as a zip', async () => {
  await row('packing.txt').click();
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download', exact: true }).click(),
  ]);
  expect(file.suggestedFilename()).toBe('packing.txt');
  const dir = join(server.dataDir, 'downloads');
  mkdirSync(dir, { recursive: true });
  await file.saveAs(join(dir, 'packing.txt'));
  expect(readFileSync(join(dir, 'packing.txt'), 'utf8')).toBe('packing list');
  // The task panel says so once the server began sending it.
  await page.getByTestId('task-row').filter({ hasText: 'packing.txt' }).getByText('Downloaded').waitFor();
  await row('photos').click();
  const [zip] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download', exact: true }).click(),
  ]);
  expect(zip.suggestedFilename()).toBe('photos.zip');
  await zip.saveAs(join(dir, 'photos.zip'));
  expect(readFileSync(join(dir, 'photos.zip')).subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
  expect(execFileSync('unzip', ['-p', join(dir, 'photos.zip'), 'beach.jpg']).toString()).toBe('not really a jpeg');
  await page.getByTestId('task-row').filter({ hasText: 'photos.zip' }).getByText('Downloaded').waitFor();
});

it('a download the browser gets a 404 for shows failed with the reason, not "Downloaded"', async () => {
  await page.getByRole('button', { name: 'Clear all' }).click();
  // The file goes between the link and the browser's request: the server answers the 404 envelope.
  await page.route('**/api/cloud-manager/files?link=*', (route) =>
    route.fulfill({
      status: 404,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ code: 404, msg: 'The path does not exist.', data: null }),
    }),
  );
  let downloads = 0;
  const count = () => (downloads += 1);
  page.on('download', count);
  try {
    await row('packing.txt').click();
    await page.getByRole('button', { name: 'Download', exact: true }).click();
    const task = page.getByTestId('task-row').filter({ hasText: 'packing.txt' });
    await task.getByTestId('task-failed').waitFor();
    expect(await task.getByTestId('task-error').textContent()).toBe('The path does not exist.');
    expect(await task.getByText('Downloaded').count()).toBe(0);
    await page.getByText('Download failed: packing.txt').waitFor();
    await screenshot(page, 'explorer-download-failed');
    expect(downloads).toBe(0);
  } finally {
    page.off('download', count);
    await page.unroute('**/api/cloud-manager/files?link=*');
  }
});

it('deletes after confirmation', async () => {
  await row('a.txt').click();
  await row('Plans2025').click({ modifiers: ['Control'] });
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes' }).click();
  await expect.poll(() => row('a.txt').count()).toBe(0);
  expect(await row('Plans2025').count()).toBe(0);
  expect(readdirSync(join(dav.dir, 'Holiday')).sort()).toEqual(['empty', 'packing.txt', 'photos']);
});

it('reorders the clouds in the sidebar by dragging, and the order is kept', async () => {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await connectWebdav(`${dav.url}Holiday/`, 'Holiday DAV');
  await page.waitForURL(/cloud_index=1/);
  const sidebarNames = () =>
    page
      .getByTestId('cloud-row')
      .evaluateAll((els) => els.map((e) => (e as unknown as { innerText: string }).innerText.split('\n')[0]));
  expect(await sidebarNames()).toEqual(['Team DAV', 'Holiday DAV']);
  await page.getByTestId('cloud-row').nth(1).dragTo(page.getByTestId('cloud-row').nth(0));
  await expect.poll(sidebarNames).toEqual(['Holiday DAV', 'Team DAV']);
  await page.reload();
  await page.getByTestId('cloud-row').first().waitFor();
  await expect.poll(sidebarNames).toEqual(['Holiday DAV', 'Team DAV']);
  await page.goto(server.url + '/manage');
  await page.getByTestId('manage-clouds').waitFor();
  expect(await page.getByTestId('manage-cloud').count()).toBe(2);
  await screenshot(page, 'manage-clouds');
  expect(await axeSeriousViolations(page)).toEqual([]);
  expect(errors).toEqual([]);
});

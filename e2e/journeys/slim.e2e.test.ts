/**
 * Free up storage in Chromium against a WebDAV cloud served by `rclone serve webdav`: sign up,
 * connect the cloud through the dialog, scan it for duplicate files, apply the smart filter
 * (keep the newest copy), delete with confirmation, and rescan: the duplicates are gone and one
 * copy of each file is kept (checked on the WebDAV server itself).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { openWebdav, type Provider } from '@skyferry/providers';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, signUpInFrame } from '../support/shell.ts';

let server: RunningSkyferry;
let dav: RcloneServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cloud: Provider;
const errors: string[] = [];

const photo = randomBytes(200 * 1024);
const report = randomBytes(50 * 1024);
/** Per group: the copies, the last being the newest (written last, a second later). */
const GROUPS = [
  { content: photo, copies: ['/Backup/beach.jpg', '/Old/beach copy.jpg', '/Photos/beach.jpg'] },
  { content: report, copies: ['/Docs/Archive/report.pdf', '/Docs/report.pdf'] },
];

async function put(path: string, data: Buffer): Promise<void> {
  await cloud.put(path, Readable.from([data]), { size: data.length });
}

beforeAll(async () => {
  [server, dav, browser] = await Promise.all([startSkyferry(), startRcloneServe('webdav'), launchBrowser()]);
  cloud = await openWebdav({ url: dav.url, username: dav.username, password: dav.password });
  for (const g of GROUPS) for (const p of g.copies.slice(0, -1)) await put(p, g.content);
  // Near-duplicates (same size, different bytes) and a unique file are not duplicates.
  const near = randomBytes(80 * 1024);
  const twin = Buffer.from(near);
  twin[40 * 1024] = (twin[40 * 1024] as number) ^ 1;
  await put('/Near/a.bin', near);
  await put('/Near/b.bin', twin);
  await put('/Docs/unique.txt', Buffer.from('only one of me'));
  // WebDAV keeps the upload time: the newest copy of each group is written a moment later.
  await sleep(1100);
  for (const g of GROUPS) await put(g.copies[g.copies.length - 1] as string, g.content);
  context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
}, 120_000);
afterAll(async () => {
  await cloud?.close?.();
  await context?.close();
  await browser?.close();
  await server?.stop();
  await dav?.stop();
});

const stage = () => page.getByTestId('slim-explore').getAttribute('data-stage');

async function exists(path: string): Promise<boolean> {
  try {
    await cloud.stat(path);
    return true;
  } catch {
    return false;
  }
}

it('signs up and connects the WebDAV cloud', async () => {
  await page.goto(server.url + '/transfer');
  await openUserPanel(page);
  await page.getByRole('button', { name: 'Log in Here.' }).click();
  await page.getByRole('dialog', { name: 'Log in' }).waitFor();
  await signUpInFrame(page, `slim.${Date.now()}@example.com`, 'a good password');
  await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await dialog.locator('input[name="password"]').fill(dav.password);
  await dialog.getByTestId('field-alias').fill('Team DAV');
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByTestId('cloud-row').first().waitFor();
});

it('scans the cloud for duplicate files and lists each group', async () => {
  await page.getByRole('link', { name: 'Free up storage' }).click();
  await page.waitForURL('**/slim');
  await page.getByTestId('slim-page').waitFor();
  expect(await page.getByRole('radio', { name: /Team DAV/ }).isChecked()).toBe(true);
  await page.getByRole('checkbox', { name: 'Large files' }).uncheck();
  await page.getByRole('checkbox', { name: 'Empty folders' }).uncheck();
  await page.getByRole('button', { name: 'Start scan' }).click();
  await page.waitForURL(/\/slim\/explore\?task_id=/);
  // The exploration screen uses the narrow sidebar.
  await expect.poll(() => page.getByTestId('sidebar').getAttribute('data-narrow')).toBe('true');
  await expect.poll(stage, { timeout: 30_000 }).toBe('results');
  await page.getByTestId('slim-group').nth(1).waitFor();
  expect(await page.getByTestId('slim-group').count()).toBe(2);
  expect(await page.getByTestId('slim-summary').textContent()).toMatch(/^5 duplicate files in 2 groups/);
  const paths = await page.getByTestId('slim-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')));
  expect(paths.sort()).toEqual(GROUPS.flatMap((g) => g.copies).sort());
  await screenshot(page, 'slim-results');
});

it('applies the smart filter, deletes with confirmation, and a rescan shows the duplicates gone', async () => {
  await page.getByRole('button', { name: 'Smart filter' }).click();
  await page.getByRole('menuitem', { name: 'Keep the newest, select the other copies' }).click();
  const checked = await page
    .getByTestId('slim-row')
    .evaluateAll((rows) =>
      rows
        .filter((r) => (r.querySelector('input[type="checkbox"]') as { checked?: boolean } | null)?.checked)
        .map((r) => r.getAttribute('data-path')),
    );
  const older = GROUPS.flatMap((g) => g.copies.slice(0, -1));
  expect(checked.sort()).toEqual([...older].sort());
  await page.getByRole('button', { name: 'Delete selected' }).click();
  const confirm = page.getByRole('dialog');
  // This WebDAV server has no trash: the user is told the files go for good.
  await confirm
    .getByText('This cloud drive has no trash: 3 selected items will be deleted permanently.', {
      exact: false,
    })
    .waitFor();
  await confirm.getByRole('button', { name: 'Yes' }).click();
  await expect.poll(stage, { timeout: 30_000 }).toBe('done');
  expect(await page.getByTestId('slim-done').textContent()).toContain('3 items deleted');
  await screenshot(page, 'slim-done');

  await page.getByRole('button', { name: 'Rescan' }).first().click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes' }).click();
  await expect.poll(stage, { timeout: 30_000 }).toBe('results');
  await page.getByTestId('slim-nothing').waitFor();
  expect(await page.getByTestId('slim-summary').textContent()).toMatch(/^0 duplicate files in 0 groups/);
  await screenshot(page, 'slim-rescanned');

  // On the server: the newest copy of each file is kept, every other copy is gone, the rest untouched.
  for (const g of GROUPS) {
    const kept = [];
    for (const p of g.copies) if (await exists(p)) kept.push(p);
    expect(kept).toEqual([g.copies[g.copies.length - 1]]);
  }
  for (const p of ['/Near/a.bin', '/Near/b.bin', '/Docs/unique.txt']) expect(await exists(p)).toBe(true);
  expect(errors).toEqual([]);
});

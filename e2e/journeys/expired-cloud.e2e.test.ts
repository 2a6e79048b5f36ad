/**
 * A cloud whose password changed on its server, opened after Skyferry restarted (nothing pooled):
 * the explorer gets 401 for it, marks it expired and asks to reauthorize; reauthorizing with the new
 * password in the dialog lists the cloud again. Against Apache WebDAV, in Chromium.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { giveToServer, startApacheWebdav, type ApacheWebdavServer } from '@skyferry/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { quietShell } from '../support/shell.ts';

// The WebDAV server is on loopback.
const ENV = { SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' };
const dataDir = mkdtempSync(join(tmpdir(), 'skyferry-e2e-expired-'));
let server: RunningSkyferry;
let dav: ApacheWebdavServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  [server, dav, browser] = await Promise.all([startSkyferry(ENV, dataDir), startApacheWebdav(), launchBrowser()]);
  const file = join(dav.dir, 'plan.txt');
  writeFileSync(file, 'the plan');
  giveToServer(file);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => errors.push(err.message));
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await dav?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const fillPassword = (dialog: ReturnType<Page['getByRole']>, password: string) =>
  dialog.locator('input[name="password"]').fill(password);

it('connects the WebDAV cloud and lists it', async () => {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await fillPassword(dialog, dav.password);
  await dialog.getByTestId('field-alias').fill('Team DAV');
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
  await page.locator('[data-testid="file-row"][data-name="plan.txt"]').waitFor();
});

it('after the password changed and Skyferry restarted, asks to reauthorize, and the new password lists it again', async () => {
  const newPassword = `${dav.password}-changed`;
  dav.changePassword(newPassword);
  const port = new URL(server.url).port;
  await server.stop();
  server = await startSkyferry({ ...ENV, PORT: port }, dataDir);

  await page.goto(`${server.url}/manage/explorer?cloud_index=0&is_open=1&_=${Date.now()}`);
  const prompt = page.getByRole('dialog', { name: 'Reauthorize Team DAV' });
  await prompt.getByText('Authorization has expired, please reauthorize.').waitFor();
  await screenshot(page, 'expired-cloud-prompt');
  await prompt.getByRole('button', { name: 'Reauthorize' }).click();

  // Credentials are never sent back: the form asks for them all again.
  const dialog = page.getByRole('dialog', { name: 'Reauthorize cloud drive' });
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await fillPassword(dialog, 'still wrong');
  await dialog.getByTestId('connect-submit').click();
  await dialog.getByTestId('connect-error').waitFor();
  await fillPassword(dialog, newPassword);
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });

  await page.goto(`${server.url}/manage/explorer?cloud_index=0&is_open=1&_=${Date.now()}`);
  await page.locator('[data-testid="file-row"][data-name="plan.txt"]').waitFor();
  expect(await page.getByRole('dialog').count()).toBe(0);
  expect(server.logs()).not.toContain('unhandled error');
  expect(errors).toEqual([]);
});

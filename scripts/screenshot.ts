/**
 * Makes the README's screenshot (docs/screenshot.png): Skyferry with its embedded defaults, an
 * account signed up through the sign-in frame, two WebDAV servers (`rclone serve webdav`) holding
 * a few example folders connected through the Connect dialog, and the explorer open on the first.
 *
 *   npm run build -w @skyferry/web && npm run docs:screenshot
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startRcloneServe } from '@skyferry/testing';
import { launchBrowser } from '../e2e/support/browser.ts';
import { startSkyferry } from '../e2e/support/server.ts';
import { openUserPanel, quietShell, signUpInFrame } from '../e2e/support/shell.ts';

const OUT = resolve(import.meta.dirname, '../docs/screenshot.png');

function fill(dir: string, files: Record<string, number>): void {
  for (const [rel, size] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), Buffer.alloc(size, 7));
  }
}

const server = await startSkyferry({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' });
const [laptop, archive] = await Promise.all([startRcloneServe('webdav'), startRcloneServe('webdav')]);
const browser = await launchBrowser();
try {
  fill(laptop.dir, {
    'Photos/2026-06 Lisbon/IMG_0412.jpg': 3_412_000,
    'Photos/2026-06 Lisbon/IMG_0413.jpg': 2_981_000,
    'Documents/Tax 2025.pdf': 412_000,
    'Documents/Lease.pdf': 1_204_000,
    'Music/Playlist.m3u': 2_100,
    'Projects/site/index.html': 8_200,
    'Budget 2026.xlsx': 64_300,
    'Notes.md': 4_100,
    'Trip plan.docx': 231_000,
  });
  fill(archive.dir, { 'Backups/phone-2025.zip': 5_000_000 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 760 }, deviceScaleFactor: 1 });
  await quietShell(context);
  const page = await context.newPage();
  await page.goto(`${server.url}/manage`);
  await openUserPanel(page);
  await page.getByRole('button', { name: 'Log in Here.' }).click();
  await signUpInFrame(page, 'alex@example.com', 'correct horse battery staple');
  for (const [dav, alias] of [
    [laptop, 'Home NAS'],
    [archive, 'Archive'],
  ] as const) {
    await page.goto(`${server.url}/manage`);
    await page.getByTestId('home').waitFor();
    await page.getByRole('button', { name: 'Add cloud' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
    await dialog.getByTestId('kind-webdav').click();
    await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
    await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
    await dialog.locator('input[name="password"]').fill(dav.password);
    await dialog.getByTestId('field-alias').fill(alias);
    await dialog.getByTestId('connect-submit').click();
    await dialog.waitFor({ state: 'hidden' });
  }
  await page.goto(`${server.url}/manage/explorer?cloud_index=0&is_open=1`);
  await page.locator('[data-testid="file-row"][data-name="Photos"]').first().waitFor();
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
  await context.close();
} finally {
  await browser.close();
  await server.stop();
  await laptop.stop();
  await archive.stop();
}

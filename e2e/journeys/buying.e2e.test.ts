/**
 * Buying in Chromium with BILLING_MODE=test: a free user hits the paywall on Transfer (the Upgrade
 * modal), opens /buy, buys a month through the built-in checkout in a window of its own, comes back
 * (the window regains focus and user info is polled until the licence is active), and the transfer
 * unlocks and runs between two small WebDAV servers (`rclone serve webdav`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import {
  axeSeriousViolations,
  connectWebdavInDialog,
  openUserPanel,
  quietShell,
  signUpInFrame,
} from '../support/shell.ts';

let server: RunningSkyferry;
let source: RcloneServer;
let target: RcloneServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  [server, source, target, browser] = await Promise.all([
    startSkyferry({ BILLING_MODE: 'test', BILLING_CURRENCY: 'EUR', BILLING_PRICES: 'month=1200' }),
    startRcloneServe('webdav'),
    startRcloneServe('webdav'),
    launchBrowser(),
  ]);
  mkdirSync(join(source.dir, 'Docs'), { recursive: true });
  for (let i = 0; i < 5; i++) writeFileSync(join(source.dir, 'Docs', `note-${i}.txt`), `note ${i}\n`.repeat(10 + i));
  context = await browser.newContext({ viewport: { width: 1360, height: 900 }, bypassCSP: true });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await source?.stop();
  await target?.stop();
});

describe('buying a licence in test mode', () => {
  it('a free user hits the paywall on Transfer, buys a month through the test checkout, and transfers', async () => {
    await page.goto(server.url + '/manage');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await signUpInFrame(page, `buyer.${Date.now()}@example.com`, 'correct horse battery');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await page.getByTestId('home').waitFor();
    await connectWebdavInDialog(page, source);
    await connectWebdavInDialog(page, target);
    await expect.poll(() => page.getByTestId('cloud-row').count()).toBe(2);

    // The paywall: Transfer is a paid feature.
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    const options = await page.getByTestId('source-cloud').locator('option').allTextContents();
    const [first, second] = options.filter((o) => o.includes('WebDAV'));
    await page.getByTestId('source-cloud').selectOption({ label: first ?? '' });
    await page.getByTestId('target-cloud').selectOption({ label: second ?? '' });
    await page.getByTestId('target-path').fill('/Backup');
    await page.getByTestId('target-path').blur();
    const docs = page.getByTestId('source-tree').locator('[data-testid="tree-row"][data-path="/Docs"]');
    await docs.waitFor();
    await docs.getByRole('checkbox').check();
    await page.getByTestId('transfer-start').click();
    const upgrade = page.getByRole('dialog', { name: 'Upgrade to Premium' });
    await upgrade.waitFor();
    await screenshot(page, 'buying-upgrade-modal');
    await upgrade.getByRole('button', { name: 'Upgrade' }).click();
    await page.waitForURL(/\/buy$/);

    // /buy: the month at the operator's price, the 7-day refund, Free vs Premium.
    await page.getByTestId('buy-page').waitFor();
    expect(await page.getByTestId('refund-line').textContent()).toBe('7-day unconditional full refund');
    expect(await page.getByTestId('plan-price').textContent()).toBe('€12.00');
    await page.getByTestId('plan-table').waitFor();
    expect(await axeSeriousViolations(page)).toEqual([]);
    await screenshot(page, 'buying-buy-page');

    // Buy opens the built-in checkout in a window of its own; Pay completes the order there.
    const [checkout] = await Promise.all([context.waitForEvent('page'), page.getByTestId('buy-licence').click()]);
    await checkout.getByTestId('test-checkout').waitFor();
    await checkout.getByTestId('checkout-pay').click();
    await checkout.getByTestId('checkout-paid').waitFor();
    await screenshot(checkout, 'buying-test-checkout');
    await checkout.close();
    // Back on the app's window: it regains focus, user info is polled until the licence is active.
    await page.bringToFront();
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await page.getByTestId('buy-active').waitFor({ timeout: 30_000 });
    await page.getByTestId('orders').getByText('1 Month licence').waitFor();

    // The feature is unlocked: the transfer runs.
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await page.getByTestId('source-cloud').selectOption({ label: first ?? '' });
    await page.getByTestId('target-cloud').selectOption({ label: second ?? '' });
    await page.getByTestId('target-path').fill('/Backup');
    await page.getByTestId('target-path').blur();
    await docs.waitFor();
    await docs.getByRole('checkbox').check();
    await page.getByTestId('transfer-start').click();
    const preview = page.getByTestId('plan-preview');
    await preview.waitFor();
    expect(await preview.getByTestId('summary-copy').getAttribute('data-count')).toBe('5');
    await preview.getByTestId('preview-start').click();
    await expect
      .poll(
        () => {
          try {
            return readFileSync(join(target.dir, 'Backup', 'Docs', 'note-4.txt'), 'utf8');
          } catch {
            return '';
          }
        },
        { timeout: 60_000 },
      )
      .toBe('note 4\n'.repeat(14));
    expect(pageErrors).toEqual([]);
  });
});

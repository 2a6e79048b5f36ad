/**
 * Buying in Chromium with BILLING_MODE=test: a free user hits the paywall on Transfer (the Upgrade
 * modal), opens /buy, buys a month through the built-in checkout in a window of its own, comes back
 * (the window regains focus and user info is polled until the licence is active), and the transfer
 * unlocks and runs between two small WebDAV servers (`rclone serve webdav`). Then the month's data
 * runs out mid-transfer (state 10 with the size needed), a 50 GB packet bought from the offer lets
 * Retry finish it, and the licence is refunded.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
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
  mkdirSync(join(source.dir, 'Big'), { recursive: true });
  for (let i = 0; i < 3; i++) writeFileSync(join(source.dir, 'Big', `big-${i}.bin`), String(i).repeat(3000));
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

/** Runs SQL on the server's SQLite database (what the test cannot do through the UI: use up data). */
function onServerDb<T>(fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(join(server.dataDir, 'skyferry.db'), { timeout: 10_000 });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Buys in the checkout window Buy opens, then comes back to the app's window (which regains focus). */
async function payInCheckout(buy: () => Promise<void>): Promise<void> {
  const [checkout] = await Promise.all([context.waitForEvent('page'), buy()]);
  await checkout.getByTestId('test-checkout').waitFor();
  await checkout.getByTestId('checkout-pay').click();
  await checkout.getByTestId('checkout-paid').waitFor();
  await screenshot(checkout, 'buying-test-checkout');
  await checkout.close();
  await page.bringToFront();
  await page.evaluate('window.dispatchEvent(new Event("focus"))');
}

/** Picks the two WebDAV clouds and /Backup on the Transfer screen, ticks `folder` and starts the preview. */
async function startTransfer(folder: string): Promise<void> {
  await page.goto(server.url + '/transfer');
  await page.getByTestId('migrate-page').waitFor();
  const options = await page.getByTestId('source-cloud').locator('option').allTextContents();
  const [first, second] = options.filter((o) => o.includes('WebDAV'));
  await page.getByTestId('source-cloud').selectOption({ label: first ?? '' });
  await page.getByTestId('target-cloud').selectOption({ label: second ?? '' });
  await page.getByTestId('target-path').fill('/Backup');
  await page.getByTestId('target-path').blur();
  const row = page.getByTestId('source-tree').locator(`[data-testid="tree-row"][data-path="${folder}"]`);
  await row.waitFor();
  await row.getByRole('checkbox').check();
  await page.getByTestId('transfer-start').click();
}

const fileOnTarget = (rel: string) => () => {
  try {
    return readFileSync(join(target.dir, rel), 'utf8');
  } catch {
    return '';
  }
};

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
    await startTransfer('/Docs');
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

    // Buy opens the built-in checkout in a window of its own; Pay completes the order there. Back on
    // the app's window, user info is polled until the licence is active.
    await payInCheckout(() => page.getByTestId('buy-licence').click());
    await page.getByTestId('buy-active').waitFor({ timeout: 30_000 });
    await page.getByTestId('orders').getByText('1 Month licence').waitFor();

    // The feature is unlocked: the transfer runs.
    await startTransfer('/Docs');
    const preview = page.getByTestId('plan-preview');
    await preview.waitFor();
    expect(await preview.getByTestId('summary-copy').getAttribute('data-count')).toBe('5');
    await preview.getByTestId('preview-start').click();
    await expect.poll(fileOnTarget('Backup/Docs/note-4.txt'), { timeout: 60_000 }).toBe('note 4\n'.repeat(14));
    expect(pageErrors).toEqual([]);
  });

  it('data runs out mid-transfer (state 10, the size needed); a packet bought lets Retry finish; then a refund', async () => {
    // /Big: three files of 3000 bytes; 4000 bytes of the month's data are left, so the run stops.
    onServerDb((db) => db.prepare("update data_packets set usage = size - 4000 where kind = 'base'").run());
    await startTransfer('/Big');
    const preview = page.getByTestId('plan-preview');
    await preview.waitFor();
    await preview.getByTestId('preview-start').click();
    // The watched run stops in state 10: the offer names the size needed and leads to /buy.
    const offer = page.getByRole('dialog', { name: 'Insufficient transfer traffic' });
    await offer.waitFor({ timeout: 60_000 });
    expect(await offer.textContent()).toMatch(/Not enough traffic available, need [\d.]+ KB in total/);
    await screenshot(page, 'buying-not-enough-traffic');
    await offer.getByRole('button', { name: 'Buy a data package' }).click();
    await page.waitForURL(/\/buy$/);
    const taskId = onServerDb(
      (db) => (db.prepare('select id, state from tasks where state = 10').get() as { id: string } | undefined)?.id,
    );
    expect(taskId).toBeTruthy();

    // A 50 GB packet: now on sale (a licence is active), bought through the checkout window.
    await payInCheckout(() => page.getByTestId('buy-packet_50g').click());
    await page.getByTestId('orders').getByText('50 GB data packet').waitFor({ timeout: 30_000 });

    // Retry (the Tasks page's run) finishes the transfer.
    const runId = onServerDb(
      (db) =>
        (
          db.prepare('select id from task_runs where task_id = ? order by started_at desc').get(taskId ?? '') as {
            id: string;
          }
        ).id,
    );
    await page.goto(`${server.url}/tasks/${taskId}/runs/${runId}`);
    await page.getByTestId('retry-failed').click();
    for (let i = 0; i < 3; i++)
      await expect.poll(fileOnTarget(`Backup/Big/big-${i}.bin`), { timeout: 60_000 }).toBe(String(i).repeat(3000));

    // Refund within 7 days: the licence and its data end at once.
    await page.goto(server.url + '/buy');
    const licenceRow = page.getByTestId('orders').locator('tr', { hasText: '1 Month licence' });
    await licenceRow.getByRole('button', { name: 'Refund' }).click();
    await page.getByRole('dialog', { name: 'Please confirm' }).getByRole('button', { name: 'Yes' }).click();
    await licenceRow.getByText('Refunded').waitFor();
    await page.getByTestId('buy-active').waitFor({ state: 'detached' });
    expect(await page.getByTestId('buy-packet_50g').isDisabled()).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});

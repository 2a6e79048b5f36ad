/**
 * The Tasks page in Chromium against two real WebDAV servers (Apache mod_dav twice): a daily
 * two-way sync made on the Sync screen is found on the Tasks page and run from there; both sides
 * change the same file, Run now, and the run's details show the conflict with both names (and the
 * log downloads); the schedule is edited; Verify finds a difference planted on the target; and the
 * three pages fit a phone's width without sideways scrolling.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { giveToServer, startApacheWebdav, type WebdavServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, openUserPanel, quietShell, signUpInFrame } from '../support/shell.ts';

let server: RunningSkyferry;
let davA: WebdavServer;
let davB: WebdavServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let taskUrl = '';
let runUrl = '';
const pageErrors: string[] = [];

/** Writes a file into an Apache share as the server's user (so Apache may replace it). */
function writeDav(server: WebdavServer, rel: string, content: string): void {
  const path = join(server.dir, rel);
  let dir = dirname(path);
  const made: string[] = [];
  while (!existsSync(dir)) {
    made.unshift(dir);
    dir = dirname(dir);
  }
  for (const d of made) {
    mkdirSync(d);
    giveToServer(d);
  }
  writeFileSync(path, content);
  giveToServer(path);
}

beforeAll(async () => {
  [server, davA, davB, browser] = await Promise.all([
    // The two servers are on loopback, which the outbound guard refuses unless allowed.
    startSkyferry({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' }),
    startApacheWebdav(),
    startApacheWebdav(),
    launchBrowser(),
  ]);
  writeDav(davA, 'Notes/a.txt', 'alpha');
  writeDav(davA, 'Notes/b.txt', 'bravo');
  context = await browser.newContext({
    viewport: { width: 1360, height: 900 },
    bypassCSP: true,
    acceptDownloads: true,
  });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await davA?.stop();
  await davB?.stop();
});

async function connect(dav: WebdavServer, alias: string): Promise<void> {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const connectDialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await connectDialog.getByTestId('kind-webdav').click();
  await connectDialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await connectDialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await connectDialog.locator('input[name="password"]').fill(dav.password);
  await connectDialog.getByTestId('field-alias').fill(alias);
  await connectDialog.getByTestId('connect-submit').click();
  await connectDialog.waitFor({ state: 'hidden' });
}

/** Picks a day (tomorrow), an hour and a minute in the Scheduled task dialog, repeating daily. */
async function pickDaily(hour: string, minute: string): Promise<void> {
  const scheduleDialog = page.getByRole('dialog', { name: 'Scheduled task' });
  await scheduleDialog.waitFor();
  const tomorrow = new Date(Date.now() + 86_400_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const day = `${tomorrow.getFullYear()}-${pad(tomorrow.getMonth() + 1)}-${pad(tomorrow.getDate())}`;
  const next = scheduleDialog.locator(`[data-day="${day}"]`);
  if ((await next.count()) === 0 || (await next.getAttribute('data-outside')) !== null) {
    await scheduleDialog.getByRole('button', { name: /next/i }).first().click();
  }
  await scheduleDialog.locator(`[data-day="${day}"]:not([data-outside])`).click();
  await scheduleDialog.getByTestId('schedule-hour').selectOption(hour);
  await scheduleDialog.getByTestId('schedule-minute').selectOption(minute);
  const repeat = scheduleDialog.getByRole('checkbox', { name: 'Repeat' });
  if (!(await repeat.isChecked())) await repeat.check();
  await scheduleDialog.getByTestId('schedule-repeat-type').selectOption('daily');
  await scheduleDialog.getByTestId('schedule-submit').click();
  await scheduleDialog.waitFor({ state: 'hidden' });
}

/** The run rows of the task page, newest first, once there are `count` of them with an outcome. */
async function settledRuns(count: number, timeout = 60_000): Promise<Locator> {
  const rows = page.getByTestId('run-row');
  await expect
    .poll(
      async () => {
        const outcomes = await rows
          .locator('[data-testid="run-outcome"]')
          .evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { outcome?: string } }).dataset.outcome));
        return outcomes.length >= count && !outcomes.includes('running');
      },
      { timeout, interval: 500 },
    )
    .toBe(true);
  return rows;
}

interface Box {
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): { right: number };
  querySelectorAll(selector: string): Iterable<Box & { tagName: string; textContent: string | null }>;
}

/**
 * What sticks out of an element on the right (it would scroll sideways): '' when nothing, else the
 * widest offenders (tag, width past the edge, text).
 */
async function overflows(locator: Locator): Promise<string> {
  return locator.evaluate((el) => {
    const box = el as unknown as Box;
    if (box.scrollWidth <= box.clientWidth + 1) return '';
    const edge = box.getBoundingClientRect().right;
    return [...box.querySelectorAll('*')]
      .map((e) => ({ e, past: e.getBoundingClientRect().right - edge }))
      .filter((x) => x.past > 1)
      .sort((a, b) => b.past - a.past)
      .slice(0, 5)
      .map((x) => `${x.e.tagName} +${Math.round(x.past)}px ${(x.e.textContent ?? '').slice(0, 40)}`)
      .join('; ');
  });
}

describe('the Tasks page', () => {
  it('signs up and connects two WebDAV clouds', async () => {
    await page.goto(server.url + '/sync');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await signUpInFrame(page, `tasks.${Date.now()}@example.com`, 'correct horse battery');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await connect(davA, 'Notes A');
    await connect(davB, 'Notes B');
    await expect.poll(() => page.getByTestId('cloud-row').count()).toBe(2);
  });

  it('a daily two-way sync made on the Sync screen is listed on the Tasks page and run from there', async () => {
    await page.goto(server.url + '/sync');
    await page.getByTestId('sync-page').waitFor();
    await page.getByTestId('source-cloud').selectOption({ label: 'Notes A · WebDAV' });
    await page.getByTestId('target-cloud').selectOption({ label: 'Notes B · WebDAV' });
    await page.getByTestId('target-path').fill('/Notes');
    await page.getByTestId('target-path').blur();
    const notes = page.getByTestId('source-tree').locator('[data-testid="tree-row"][data-path="/Notes"]');
    await notes.waitFor();
    await notes.getByRole('radio').check();
    await page.getByTestId('sync-mode-two_way').check();
    await page.getByTestId('schedule-mode').getByText('At a set time').click();
    await pickDaily('06', '30');
    await page.getByTestId('transfer-start').click();
    await page.getByTestId('plan-preview').waitFor();
    await page.getByTestId('preview-start').click();
    const list = page.getByRole('dialog', { name: 'Transmission list' });
    await list.waitFor();
    await list.getByRole('button', { name: 'Close' }).first().click();

    // The sidebar's Tasks entry.
    await page.getByTestId('sidebar').getByRole('link', { name: 'Tasks' }).click();
    await page.waitForURL(/\/tasks$/);
    // The pointer leaves the menu (a hovered menu entry is the shell's, not this page's, to check).
    await page.mouse.move(900, 850);
    const card = page.getByTestId('task-card').filter({ hasText: 'Notes → Notes' });
    await card.waitFor();
    expect(await card.getByTestId('task-kind').textContent()).toBe('Two-way sync');
    expect(await card.getByTestId('task-schedule').textContent()).toMatch(/^Every day at 06:30 \(.+\)$/);
    expect(await card.getByTestId('task-next-run').textContent()).toMatch(/^Next run: \d{4}\/\d\d\/\d\d 06:30:00$/);
    expect(await card.getByTestId('task-never').textContent()).toBe('Not run yet');
    expect(await card.getByTestId('task-route').textContent()).toContain('Notes A /Notes');
    await screenshot(page, 'tasks-list');
    expect(await axeSeriousViolations(page)).toEqual([]);

    await card.getByTestId('task-link').click();
    await page.getByTestId('task-page').waitFor();
    taskUrl = page.url();
    expect(await page.getByTestId('no-runs').textContent()).toBe('No run yet.');
    await page.getByTestId('action-run').click();
    const rows = await settledRuns(1);
    expect(await rows.first().getByTestId('run-outcome').getAttribute('data-outcome')).toBe('success');
    expect(await rows.first().getByTestId('run-trigger').textContent()).toBe('Started by you');
    expect(await rows.first().getByTestId('run-count-added').textContent()).toBe('Added: 2');
    expect(readFileSync(join(davB.dir, 'Notes/a.txt'), 'utf8')).toBe('alpha');
    await screenshot(page, 'task-page');
    expect(await axeSeriousViolations(page)).toEqual([]);
  });

  it('both sides change a file; Run now; the run’s details show the conflict with both names and its log downloads', async () => {
    writeDav(davA, 'Notes/a.txt', 'changed on A, and longer');
    writeDav(davB, 'Notes/a.txt', 'changed on B');
    await page.goto(taskUrl);
    await page.getByTestId('task-page').waitFor();
    await page.getByTestId('action-run').click();
    await expect.poll(() => page.getByTestId('run-row').count(), { timeout: 30_000 }).toBe(2);
    const rows = await settledRuns(2);
    const latest = rows.first();
    expect(await latest.getByTestId('run-count-conflict').textContent()).toBe('Conflicts: 1');
    await latest.click();
    await page.getByTestId('run-page').waitFor();
    runUrl = page.url();
    expect(await page.getByTestId('tab-conflict').getAttribute('aria-selected')).toBe('true');
    const conflict = page.getByTestId('run-file').first();
    await conflict.waitFor();
    expect(await conflict.getByTestId('run-file-path').textContent()).toBe('/Notes/a.txt');
    const other = (await conflict.getByTestId('run-file-other').textContent()) ?? '';
    expect(other).toMatch(/^The other version: \/Notes\/a .*conflict.*\.txt$/);
    const otherName = other.slice('The other version: /Notes/'.length);
    expect(readdirSync(join(davB.dir, 'Notes')).sort()).toEqual(['a.txt', 'b.txt', otherName].sort());
    expect(readdirSync(join(davA.dir, 'Notes')).sort()).toEqual(['a.txt', 'b.txt', otherName].sort());
    expect(await conflict.getByTestId('run-file-reason').textContent()).toBe('Keep both versions');
    await screenshot(page, 'run-details-conflict');
    expect(await axeSeriousViolations(page)).toEqual([]);

    await page.getByTestId('download-log').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-text').click()]);
    expect(download.suggestedFilename()).toMatch(/^skyferry-run-.*\.log$/);
    const saved = await download.path();
    const log = readFileSync(saved, 'utf8');
    expect(log).toContain('Outcome: success');
    expect(log).toMatch(/^conflict .* \/Notes\/a\.txt -> \/Notes\/a .*conflict/m);
  });

  it('Edit changes the schedule', async () => {
    await page.goto(taskUrl);
    await page.getByTestId('task-page').waitFor();
    await page.getByTestId('action-edit').click();
    const dialog = page.getByRole('dialog', { name: 'Edit task' });
    await dialog.waitFor();
    expect(await dialog.getByTestId('edit-schedule').textContent()).toMatch(/^Every day at 06:30 · time zone /);
    await dialog.getByTestId('edit-schedule-change').click();
    await pickDaily('07', '45');
    expect(await dialog.getByTestId('edit-schedule').textContent()).toMatch(/^Every day at 07:45/);
    await screenshot(page, 'task-edit');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await dialog.getByTestId('edit-save').click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => page.getByTestId('task-schedule').textContent()).toMatch(/^Every day at 07:45 \(.+\)$/);
    expect(await page.getByTestId('task-next-run').textContent()).toMatch(/07:45:00$/);
  });

  it('Verify finds a difference planted on the target', async () => {
    writeDav(davB, 'Notes/b.txt', 'bravo, but not as the source has it');
    await page.goto(taskUrl);
    await page.getByTestId('task-page').waitFor();
    await page.getByTestId('action-verify').click();
    const verification = page.locator('[data-testid="run-row"][data-kind="verify"]').first();
    await verification.waitFor({ timeout: 30_000 });
    await expect
      .poll(() => verification.getByTestId('run-outcome').getAttribute('data-outcome'), { timeout: 60_000 })
      .toBe('differs');
    expect(await verification.getByTestId('run-count-size_differs').textContent()).toBe('Size differs: 1');
    await verification.click();
    await page.getByTestId('run-page').waitFor();
    expect(await page.getByTestId('run-title').textContent()).toMatch(/^Verification of /);
    const found = page.getByTestId('run-file').first();
    await found.waitFor();
    expect(await found.getAttribute('data-outcome')).toBe('size_differs');
    expect(await found.getByTestId('run-file-path').textContent()).toBe('/Notes/b.txt');
    expect(await found.getByTestId('run-file-reason').textContent()).toMatch(/^On the target: /);
    // Verify wrote nothing.
    expect(readFileSync(join(davB.dir, 'Notes/b.txt'), 'utf8')).toBe('bravo, but not as the source has it');
    await screenshot(page, 'verify-details');
  });

  it('the three pages fit a phone’s width (390 px) without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [url, id] of [
        [server.url + '/tasks', 'tasks-page'],
        [taskUrl, 'task-page'],
        [runUrl, 'run-page'],
      ] as const) {
        await page.goto(url);
        const content = page.getByTestId(id);
        await content.waitFor();
        await page.waitForTimeout(300);
        expect(await overflows(content), `${id} scrolls sideways`).toBe('');
        await screenshot(page, `phone-${id}`);
      }
    } finally {
      await page.setViewportSize({ width: 1360, height: 900 });
    }
    expect(pageErrors).toEqual([]);
  });
});

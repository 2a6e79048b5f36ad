/**
 * Transfer and sync in Chromium against two real WebDAV servers (`rclone serve webdav` as the
 * source, Apache mod_dav as the target) holding 300 small files (and 15 more for the partial failure): a migration with a filter and a
 * same-name policy watched to completion and checked with `rclone check`; a mirror sync whose
 * preview lists the deletions; a daily schedule with its next run time, switched off; a canceled
 * task restarted (the source behind a latency proxy, so the run lasts long enough to cancel); and a
 * partially failed run (a folder Apache may not write to) retried from the Transfer Details dialog.
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import {
  giveToServer,
  startApacheWebdav,
  startLatencyProxy,
  startRcloneServe,
  type LatencyProxy,
  type RcloneServer,
  type WebdavServer,
} from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, openUserPanel, quietShell, signUpInFrame } from '../support/shell.ts';

const run = promisify(execFile);

let server: RunningSkyferry;
let source: RcloneServer;
let target: WebdavServer;
let slow: LatencyProxy;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

const KINDS = [
  { folder: 'text', prefix: 't', ext: 'txt' },
  { folder: 'pictures', prefix: 'p', ext: 'jpg' },
  { folder: 'pdf', prefix: 'd', ext: 'pdf' },
] as const;

/**
 * 300 small files: /Data/{text,pictures,pdf}/x-000 .. x-099, sizes 200 B to about 3 KB; and
 * /Mixed/{open,locked} (10 and 5 files) for the partial failure.
 */
function writeSourceTree(root: string): void {
  for (const [folder, n] of [
    ['open', 10],
    ['locked', 5],
  ] as const) {
    mkdirSync(join(root, 'Mixed', folder), { recursive: true });
    for (let i = 0; i < n; i++) writeFileSync(join(root, 'Mixed', folder, `${folder}-${i}.txt`), `${folder} ${i}\n`);
  }
  for (const k of KINDS) {
    const dir = join(root, 'Data', k.folder);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 100; i++) {
      const name = `${k.prefix}-${String(i).padStart(3, '0')}.${k.ext}`;
      writeFileSync(join(dir, name), `${k.folder} ${i} `.repeat(20 + ((i * 37) % 200)));
    }
  }
}

/** Writes a file into the Apache share as the server's user (so Apache may replace it). */
function writeTarget(rel: string, content: string): void {
  const path = join(target.dir, rel);
  const parts = rel.split('/').slice(0, -1);
  let dir = target.dir;
  for (const part of parts) {
    dir = join(dir, part);
    if (!existsSync(dir)) {
      mkdirSync(dir);
      giveToServer(dir);
    }
  }
  writeFileSync(path, content);
  giveToServer(path);
}

function listFiles(root: string, prefix = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(join(root, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** `rclone check` between two local folders (the servers' own folders); resolves with its report. */
async function rcloneCheck(src: string, dst: string, extra: string[] = []): Promise<{ ok: boolean; report: string }> {
  try {
    const { stdout, stderr } = await run('rclone', ['check', src, dst, '--config', '/dev/null', ...extra]);
    return { ok: true, report: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, report: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

beforeAll(async () => {
  [server, source, target, browser] = await Promise.all([
    startSkyferry(),
    startRcloneServe('webdav'),
    startApacheWebdav(),
    launchBrowser(),
  ]);
  writeSourceTree(source.dir);
  slow = await startLatencyProxy({ target: { host: source.host, port: source.port }, rttMs: 200 });
  context = await browser.newContext({ viewport: { width: 1360, height: 900 }, bypassCSP: true });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await slow?.stop();
  await source?.stop();
  await target?.stop();
});

const dialog = () => page.getByRole('dialog', { name: 'Transmission list' });
const tree = (id: 'source-tree' | 'target-tree') => page.getByTestId(id);
const treeRow = (id: 'source-tree' | 'target-tree', path: string) =>
  tree(id).locator(`[data-testid="tree-row"][data-path="${path}"]`);

async function connect(url: string, username: string, password: string, alias: string): Promise<void> {
  await page.goto(server.url + '/manage');
  await page.getByTestId('home').waitFor();
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const connectDialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await connectDialog.getByTestId('kind-webdav').click();
  await connectDialog.getByRole('textbox', { name: 'Server URL' }).fill(url);
  await connectDialog.getByRole('textbox', { name: 'Username' }).fill(username);
  await connectDialog.locator('input[name="password"]').fill(password);
  await connectDialog.getByTestId('field-alias').fill(alias);
  await connectDialog.getByTestId('connect-submit').click();
  await connectDialog.waitFor({ state: 'hidden' });
}

/** Picks the source and target clouds and the target folder on the Transfer or Sync screen. */
async function chooseClouds(sourceAlias: string, targetAlias: string, targetPath: string): Promise<void> {
  await page.getByTestId('source-cloud').selectOption({ label: `${sourceAlias} · WebDAV` });
  await page.getByTestId('target-cloud').selectOption({ label: `${targetAlias} · WebDAV` });
  await page.getByTestId('target-path').fill(targetPath);
  await page.getByTestId('target-path').blur();
}

async function tickSource(path: string): Promise<void> {
  const row = treeRow('source-tree', path);
  await row.waitFor();
  await row.getByRole('checkbox').check();
}

/**
 * What the server holds for the tasks and their jobs, and the end of its log: a wait that fails
 * says whether the run, the queue or the page is behind.
 */
function serverSide(): string {
  const db = new DatabaseSync(join(server.dataDir, 'skyferry.db'), { readOnly: true, timeout: 10_000 });
  try {
    const tasks = db
      .prepare(
        'select task_name, state, run_count, run_mode, finished_counts, total_counts, job_id, updated_at from tasks',
      )
      .all();
    const jobs = db
      .prepare('select id, grp, state, attempts, lease_expires_at, cancel_requested, error from jobs')
      .all();
    return `now ${Date.now()}\ntasks ${JSON.stringify(tasks)}\njobs ${JSON.stringify(jobs)}\nlog ${server.logs().slice(-3000)}`;
  } finally {
    db.close();
  }
}

/** Opens the list's "Transfer complete" tab and returns the task's row there once it shows `state`. */
async function finishedTask(name: string, state: number, timeout = 90_000): Promise<Locator> {
  await dialog().getByTestId('tab-completed').click();
  const item = dialog().locator(`[data-testid="task-item"][aria-label="${name}"]`);
  try {
    await expect
      .poll(() => item.getAttribute('data-state', { timeout: 1000 }).catch(() => null), { timeout, interval: 500 })
      .toBe(String(state));
  } catch (err) {
    await screenshot(page, `transfer-failed-${state}`);
    const shown = await dialog()
      .textContent({ timeout: 1000 })
      .catch(() => 'no list open');
    throw new Error(`${name} did not reach state ${state} in ${timeout} ms\npage: ${shown}\n${serverSide()}`, {
      cause: err,
    });
  }
  return item;
}

async function closeList(): Promise<void> {
  await dialog().getByRole('button', { name: 'Close' }).first().click();
  await dialog().waitFor({ state: 'hidden' });
}

describe('transfer and sync between two WebDAV servers', () => {
  it('signs up and connects the two WebDAV clouds (and the source again behind a slow link)', async () => {
    await page.goto(server.url + '/transfer');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await signUpInFrame(page, `ferry.${Date.now()}@example.com`, 'correct horse battery');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await connect(source.url, source.username, source.password, 'Source DAV');
    await connect(target.url, target.username, target.password, 'Apache DAV');
    await connect(`http://127.0.0.1:${slow.port}/`, source.username, source.password, 'Slow DAV');
    await expect.poll(() => page.getByTestId('cloud-row').count()).toBe(3);
  });

  it('migrates /Data from the UI with a filter (no PDF) and "only if the size differs", watched to completion', async () => {
    // Already on the target: ten text files of another size (replaced), five of the same size (kept).
    for (let i = 0; i < 15; i++) {
      const name = `Backup/Data/text/t-${String(i).padStart(3, '0')}.txt`;
      const original = readFileSync(join(source.dir, 'Data', 'text', name.split('/').pop() as string), 'utf8');
      writeTarget(name, i < 10 ? `old ${i}` : 'X'.repeat(original.length));
    }
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await chooseClouds('Source DAV', 'Apache DAV', '/Backup');
    await tickSource('/Data');
    await expect.poll(() => page.getByTestId('source-summary').textContent()).toBe('1 item selected');
    await page.getByTestId('filter-mode').getByText('All except these').click();
    await page.getByRole('checkbox', { name: 'PDF' }).check();
    // The filter section counts what the filter lets through with a dry run on the server: the
    // 100 PDFs are out, and a rule leaving out the pictures folder takes 100 more.
    const matched = () => page.getByTestId('filter-count').textContent();
    await expect.poll(matched, { timeout: 20_000 }).toBe('200 files match');
    await page.getByTestId('filter-rules').fill('# not the pictures\n- /pictures/');
    await expect.poll(matched, { timeout: 20_000 }).toBe('100 files match');
    await page.getByTestId('filter-rules').fill('');
    await expect.poll(matched, { timeout: 20_000 }).toBe('200 files match');
    await page.getByRole('radio', { name: 'Transfer only if the size differs' }).check();
    await screenshot(page, 'transfer-form');
    expect(await axeSeriousViolations(page)).toEqual([]);

    await page.getByTestId('transfer-start').click();
    const preview = page.getByTestId('plan-preview');
    await preview.waitFor();
    const count = (action: string) => preview.getByTestId(`summary-${action}`).getAttribute('data-count');
    expect(await count('copy')).toBe('185');
    expect(await count('update')).toBe('10');
    expect(await count('skip')).toBe('5');
    expect(await count('delete')).toBe('0');
    await preview.getByText('Update (10)').click();
    await expect.poll(() => preview.getByTestId('plan-item').count()).toBe(10);
    expect(await preview.getByTestId('plan-item-path').first().textContent()).toBe('/Backup/Data/text/t-000.txt');
    await screenshot(page, 'transfer-preview');
    expect(await axeSeriousViolations(page)).toEqual([]);

    await preview.getByTestId('preview-start').click();
    await dialog().waitFor();
    const item = await finishedTask('Data → Backup', 0);
    expect(await item.getByTestId('task-size').textContent()).toMatch(/^Size: \d/);
    await screenshot(page, 'transfer-list-completed');
    expect(await axeSeriousViolations(page)).toEqual([]);

    expect(listFiles(join(target.dir, 'Backup', 'Data')).filter((f) => f.endsWith('.pdf'))).toEqual([]);
    expect(listFiles(join(target.dir, 'Backup', 'Data'))).toHaveLength(200);
    for (let i = 10; i < 15; i++) {
      expect(readFileSync(join(target.dir, 'Backup', 'Data', 'text', `t-0${i}.txt`), 'utf8')).toMatch(/^X+$/);
    }
    const check = await rcloneCheck(join(source.dir, 'Data'), join(target.dir, 'Backup', 'Data'), [
      '--exclude',
      '*.pdf',
      '--exclude',
      't-01[0-4].txt',
    ]);
    expect(check.report).toContain('0 differences found');
    expect(check.ok, check.report).toBe(true);

    // View goes to the target cloud's explorer at the target folder.
    await item.getByTestId('task-view').click();
    await page.waitForURL(/\/manage\/explorer\?cloud_index=1&is_open=1&_=\d+&path=%2FBackup/);
    await page.locator('[data-testid="file-row"][data-name="Data"]').waitFor();
  });

  it('a mirror sync previews the deletions, confirms them, and leaves the target identical', async () => {
    writeTarget('Mirror/extra-1.jpg', 'not in the source');
    writeTarget('Mirror/old/extra-2.txt', 'not in the source either');
    await page.goto(server.url + '/sync');
    await page.getByTestId('sync-page').waitFor();
    await chooseClouds('Source DAV', 'Apache DAV', '/Mirror');
    await tree('source-tree').getByRole('button', { name: 'Open Data' }).click();
    await treeRow('source-tree', '/Data/pictures').getByRole('radio').check();
    await page.getByTestId('sync-mode-mirror').check();
    await page.getByTestId('transfer-start').click();
    const preview = page.getByTestId('plan-preview');
    await preview.waitFor();
    expect(await preview.getByTestId('summary-copy').getAttribute('data-count')).toBe('100');
    expect(Number(await preview.getByTestId('summary-delete').getAttribute('data-count'))).toBeGreaterThanOrEqual(2);
    await preview.getByText(/^Delete \(/).click();
    const deleting = await preview.getByTestId('plan-item-path').allTextContents();
    expect(deleting).toEqual(expect.arrayContaining(['/Mirror/extra-1.jpg', '/Mirror/old']));
    await preview.getByTestId('preview-start').click();
    const confirmView = page.getByTestId('deletions-confirm');
    await confirmView.waitFor();
    await expect.poll(() => confirmView.getByTestId('plan-item-path').allTextContents()).toEqual(deleting);
    expect(await confirmView.textContent()).toContain('will be deleted on Apache DAV. Are you sure?');
    await screenshot(page, 'sync-mirror-deletions');
    await confirmView.getByTestId('confirm-deletions').click();
    await dialog().waitFor();
    await finishedTask('pictures → Mirror', 0);
    expect(existsSync(join(target.dir, 'Mirror', 'extra-1.jpg'))).toBe(false);
    expect(existsSync(join(target.dir, 'Mirror', 'old'))).toBe(false);
    const check = await rcloneCheck(join(source.dir, 'Data', 'pictures'), join(target.dir, 'Mirror'));
    expect(check.ok, check.report).toBe(true);
    await closeList();
  });

  it('a daily schedule shows its next run time and is switched off with its tick box', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await chooseClouds('Source DAV', 'Apache DAV', '/Daily');
    await tickSource('/Data');
    await page.getByTestId('schedule-mode').getByText('At a set time').click();
    const scheduleDialog = page.getByRole('dialog', { name: 'Scheduled task' });
    await scheduleDialog.waitFor();
    const tomorrow = new Date(Date.now() + 86_400_000);
    const pad = (n: number) => String(n).padStart(2, '0');
    const day = `${tomorrow.getFullYear()}-${pad(tomorrow.getMonth() + 1)}-${pad(tomorrow.getDate())}`;
    const yesterday = new Date(Date.now() - 86_400_000);
    const dayBefore = `${yesterday.getFullYear()}-${pad(yesterday.getMonth() + 1)}-${pad(yesterday.getDate())}`;
    // Yesterday (when this month shows it) cannot be picked.
    const past = scheduleDialog.locator(`[data-day="${dayBefore}"]`);
    if (await past.count()) expect(await past.isDisabled()).toBe(true);
    const next = scheduleDialog.locator(`[data-day="${day}"]`);
    if ((await next.count()) === 0 || (await next.getAttribute('data-outside')) !== null) {
      await scheduleDialog.getByRole('button', { name: /next/i }).first().click();
    }
    await scheduleDialog.locator(`[data-day="${day}"]:not([data-outside])`).click();
    await scheduleDialog.getByTestId('schedule-hour').selectOption('06');
    await scheduleDialog.getByTestId('schedule-minute').selectOption('30');
    await scheduleDialog.getByRole('checkbox', { name: 'Repeat' }).check();
    await scheduleDialog.getByTestId('schedule-repeat-type').selectOption('daily');
    await screenshot(page, 'schedule-dialog');
    await scheduleDialog.getByTestId('schedule-submit').click();
    expect(await page.getByTestId('schedule-chosen').textContent()).toBe('Every day at 06:30');
    await page.getByTestId('transfer-start').click();
    await page.getByTestId('plan-preview').waitFor();
    await page.getByTestId('preview-start').click();
    await dialog().waitFor();
    const item = dialog().locator('[data-testid="task-item"][aria-label="Data → Daily"]');
    await item.waitFor();
    expect(await item.getAttribute('data-state')).toBe('7');
    expect(await item.getByTestId('task-state').textContent()).toBe('Pending');
    const box = item.getByRole('checkbox', { name: 'Scheduled' });
    expect(await box.isChecked()).toBe(true);
    expect(await item.getByTestId('task-next-run').textContent()).toBe(
      `Next run: ${day.replaceAll('-', '/')} 06:30:00`,
    );
    expect(await item.getByTestId('task-start_now').isVisible()).toBe(true);
    await screenshot(page, 'transfer-list-scheduled');
    await box.click();
    await expect.poll(() => item.getByTestId('task-next-run').textContent()).toBe('Schedule off');
    expect(await box.isChecked()).toBe(false);
    // The server keeps it off: the list read again says so.
    await closeList();
    await page.getByRole('button', { name: 'Transmission list' }).first().click();
    const again = dialog().locator('[data-testid="task-item"][aria-label="Data → Daily"]');
    await again.waitFor();
    expect(await again.getByRole('checkbox', { name: 'Scheduled' }).isChecked()).toBe(false);
    expect(existsSync(join(target.dir, 'Daily'))).toBe(false);
    await again.getByTestId('task-delete').click();
    const confirmDialog = page.getByRole('dialog', { name: 'Please confirm' });
    expect(await confirmDialog.textContent()).toContain('Are you sure you want to delete the task?');
    await confirmDialog.getByRole('button', { name: 'Yes' }).click();
    await again.waitFor({ state: 'detached' });
    await closeList();
  });

  it('cancels a running task, which then restarts and completes', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await chooseClouds('Slow DAV', 'Apache DAV', '/Slow');
    await tickSource('/Data');
    await page.getByTestId('transfer-start').click();
    await page.getByTestId('plan-preview').waitFor({ timeout: 60_000 });
    await page.getByTestId('preview-start').click();
    await dialog().waitFor();
    const running = dialog().locator('[data-testid="task-item"][aria-label="Data → Slow"]');
    // Progress shows with percentage, speed and transferred/total.
    await running.getByTestId('task-progress').waitFor({ timeout: 60_000 });
    expect(await running.getByTestId('task-percent').textContent()).toMatch(/^\d+%$/);
    expect(await running.getByTestId('task-speed').textContent()).toMatch(/\/s$/);
    expect(await running.getByTestId('task-amount').textContent()).toMatch(/^[\d.]+ [KMG]?B\/[\d.]+ [KMG]?B$/);
    await screenshot(page, 'transfer-list-running');
    await running.getByTestId('task-cancel').click();
    const confirmDialog = page.getByRole('dialog', { name: 'Please confirm' });
    expect(await confirmDialog.textContent()).toContain('Are you sure you want to cancel the task?');
    await confirmDialog.getByRole('button', { name: 'Yes' }).click();
    const canceled = await finishedTask('Data → Slow', 4);
    const copied = listFiles(join(target.dir, 'Slow', 'Data')).length;
    expect(copied).toBeLessThan(300);
    await canceled.getByTestId('task-restart').click();
    await dialog().getByTestId('tab-running').click();
    await finishedTask('Data → Slow', 0, 80_000);
    const check = await rcloneCheck(join(source.dir, 'Data'), join(target.dir, 'Slow', 'Data'));
    expect(check.ok, check.report).toBe(true);
    await closeList();
  }, 200_000);

  it('a partially failed task shows its failed files with reasons and is retried from Transfer Details', async () => {
    // Apache (running as another user) may not write into this folder.
    writeTarget('Partial/Mixed/locked/.keep', '');
    const locked = join(target.dir, 'Partial', 'Mixed', 'locked');
    if (process.getuid?.() === 0) await run('chown', ['root:root', locked]);
    chmodSync(locked, 0o555);
    await page.goto(server.url + '/transfer');
    await page.getByTestId('migrate-page').waitFor();
    await chooseClouds('Source DAV', 'Apache DAV', '/Partial');
    await tickSource('/Mixed');
    await page.getByTestId('transfer-start').click();
    await page.getByTestId('plan-preview').waitFor();
    await page.getByTestId('preview-start').click();
    await dialog().waitFor();
    const item = await finishedTask('Mixed → Partial', 5, 80_000);
    expect(await item.getByTestId('task-state').textContent()).toBe('Partially Success');
    expect(await item.getByTestId('task-counts').textContent()).toBe('10 of 15 done, 5 failed');
    await item.getByTestId('task-details').click();
    const details = page.getByRole('dialog', { name: 'Transfer Details' });
    await details.getByTestId('transfer-result').waitFor();
    expect(await details.getByTestId('result-success').textContent()).toBe('Succeeded10');
    expect(await details.getByTestId('result-total').textContent()).toBe('Total15');
    expect(await details.getByTestId('result-source').textContent()).toBe('SourceSource DAV /Mixed');
    expect(await details.getByTestId('result-target').textContent()).toBe('TargetApache DAV /Partial');
    expect(await details.getByText('5 files failed').isVisible()).toBe(true);
    const failed = await details.getByTestId('failed-file').allTextContents();
    expect(failed).toHaveLength(5);
    // Apache answers a write it may not make with 500; the reason and the server's words both show.
    for (const row of failed) {
      expect(row).toMatch(
        /^locked-\d\.txt\/Mixed\/lockedThe service reported an errorPUT \/Partial\/Mixed\/locked\/locked-\d\.txt: HTTP 500/,
      );
    }
    await screenshot(page, 'transfer-details');
    expect(await axeSeriousViolations(page)).toEqual([]);

    // The folder becomes writable; Retry all sends the failed part again.
    chmodSync(locked, 0o755);
    giveToServer(locked);
    await details.getByTestId('details-retry-all').click();
    await details.waitFor({ state: 'hidden' });
    await dialog().getByTestId('tab-running').click();
    await finishedTask('Mixed → Partial', 0, 80_000);
    const check = await rcloneCheck(join(source.dir, 'Mixed'), join(target.dir, 'Partial', 'Mixed'), [
      '--exclude',
      '.keep',
    ]);
    expect(check.ok, check.report).toBe(true);
    expect(pageErrors).toEqual([]);
  }, 200_000);
});

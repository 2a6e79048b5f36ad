/**
 * The details of issue 44 walked in Chromium against the real server (billing in test mode, local
 * folders as clouds): the temporary-debug header (CALL-CFG-12), every cloud's space refreshed on
 * /manage (CONST-38), the client's own failure messages (MSG-12, ERR-12), a fully failed
 * migration and sync with their notices and reasons (MSG-19, MSG-20, MSG-25), the settings' and
 * packets' fields (ENT-SET-05 is checked by unit tests; ENT-USR-10 here), completion e-mails off
 * without a mail server, and "Insufficient transfer traffic" (MSG-08), both when a transfer cannot
 * start and when a watched run runs out of data.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, signUpInFrame } from '../support/shell.ts';

let server: RunningSkyferry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let roots: string;
const pageErrors: string[] = [];
const clouds: Record<string, string> = {};
let auth: { uid: string; headers: Record<string, string> };

const DAY = 86_400_000;

/** The server's SQLite database, for what no call does yet (granting a licence, spending its data). */
function sql(statement: string, ...params: Array<string | number>): void {
  const db = new DatabaseSync(join(server.dataDir, 'skyferry.db'), { timeout: 10_000 });
  try {
    db.prepare(statement).run(...params);
  } finally {
    db.close();
  }
}

async function call<T>(method: 'GET' | 'POST' | 'PUT', path: string, data?: unknown): Promise<T> {
  const res = await page.request.fetch(server.url + path, { method, headers: auth.headers, data });
  const body = (await res.json()) as { code: number; msg: string; data: T };
  if (body.code !== 0) throw new Error(`${method} ${path}: ${body.code} ${body.msg}`);
  return body.data;
}

beforeAll(async () => {
  roots = mkdtempSync(join(tmpdir(), 'skyferry-e2e-details-'));
  [server, browser] = await Promise.all([
    startSkyferry({ BILLING_MODE: 'test', SKYFERRY_LOCAL_ROOTS: roots }),
    launchBrowser(),
  ]);
  context = await browser.newContext({ viewport: { width: 1360, height: 900 }, bypassCSP: true });
  await quietShell(context);
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  if (roots) rmSync(roots, { recursive: true, force: true });
});

describe('the details users trip on', () => {
  it('CALL-CFG-12: a page opened with ?debug=1 sends x-temp-debug on every call, until one is opened with ?debug=0', async () => {
    const seen: Array<string | undefined> = [];
    const watch = (r: Request) => {
      if (new URL(r.url()).pathname.startsWith('/api/')) seen.push(r.headers()['x-temp-debug']);
    };
    page.on('request', watch);
    try {
      await page.goto(server.url + '/transfer?debug=1');
      await expect.poll(() => seen.length).toBeGreaterThan(0);
      await page.goto(server.url + '/transfer');
      await page.getByTestId('migrate-page').waitFor();
      expect(seen.length).toBeGreaterThan(1);
      expect(new Set(seen)).toEqual(new Set(['1']));
      seen.length = 0;
      await page.goto(server.url + '/transfer?debug=0');
      await page.getByTestId('migrate-page').waitFor();
      await expect.poll(() => seen.length).toBeGreaterThan(0);
      expect(new Set(seen)).toEqual(new Set([undefined]));
    } finally {
      page.off('request', watch);
    }
  });

  it('signs up, gets a licence, and connects four folders', async () => {
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await signUpInFrame(page, `details.${Date.now()}@example.com`, 'correct horse battery');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    const user = await page.evaluate(() => JSON.parse(localStorage.getItem('skyferry.user') ?? '{}') as never);
    const { uid, access_token } = user as { uid: string; access_token: string };
    auth = { uid, headers: { authorization: `Bearer ${access_token}` } };
    const now = Date.now();
    sql(
      `insert into licenses (id, user_id, plan_id, renewing, started_at, expires_at, source, external_id, created_at, updated_at)
       values (?, ?, 'month', 1, ?, ?, 'grant', null, ?, ?)`,
      `lic-${uid}`,
      uid,
      now - DAY,
      now + 29 * DAY,
      now,
      now,
    );
    for (const name of ['North', 'East', 'South', 'West']) {
      const dir = join(roots, name);
      mkdirSync(join(dir, 'Docs'), { recursive: true });
      writeFileSync(join(dir, 'Docs', 'note.txt'), `${name} `.repeat(400));
      const cloud = await call<{ id: string }>('POST', '/api/clouds', {
        cloud_name: 'local',
        alias: name,
        credentials: { path: dir },
      });
      clouds[name] = cloud.id;
    }
    await page.reload();
    await expect.poll(() => page.getByTestId('cloud-row').count()).toBe(4);
  });

  it('CONST-38: /manage asks every cloud for its space, one after another, 1 to 2 s apart', async () => {
    const asked: Array<{ id: string; at: number }> = [];
    const watch = (r: Request) => {
      if (new URL(r.url()).pathname === '/api/cloud-manager/info') {
        asked.push({ id: (r.postDataJSON() as { cloud_id: string }).cloud_id, at: Date.now() });
      }
    };
    page.on('request', watch);
    try {
      await page.goto(server.url + '/manage');
      await page.getByTestId('manage-clouds').waitFor();
      await expect.poll(() => asked.length, { timeout: 15_000 }).toBe(4);
      expect(new Set(asked.map((a) => a.id))).toEqual(new Set(Object.values(clouds)));
      for (let i = 1; i < asked.length; i++) {
        expect((asked[i]?.at ?? 0) - (asked[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(900);
      }
      // Every card shows the space its service reported.
      await expect
        .poll(() => page.getByTestId('manage-cloud').filter({ hasText: 'Space not known yet' }).count())
        .toBe(0);
    } finally {
      page.off('request', watch);
    }
  });

  it('MSG-12 and ERR-12: no answer says the network is unstable; an error without a message, "An unknown error occurred"', async () => {
    await page.route('**/api/cloud-manager/list', (route) => route.abort('failed'));
    try {
      await page.goto(server.url + '/manage/explorer?cloud_index=0&is_open=1');
      const error = page.getByTestId('explorer-error');
      await error.waitFor();
      expect(await error.textContent()).toContain('The network is unstable, please try again later.');
      expect(await error.textContent()).not.toContain('Network Error');
      await screenshot(page, 'details-network-unstable');
    } finally {
      await page.unroute('**/api/cloud-manager/list');
    }
    await page.route('**/api/cloud-manager/list', (route) =>
      route.fulfill({ status: 400, contentType: 'application/json', body: '{"code":400,"msg":"","data":null}' }),
    );
    try {
      await page.reload();
      const error = page.getByTestId('explorer-error');
      await error.waitFor();
      expect(await error.textContent()).toContain('An unknown error occurred');
    } finally {
      await page.unroute('**/api/cloud-manager/list');
    }
  });

  it('MSG-19, MSG-20, MSG-25: a migration and a sync that fail as a whole say so, and show why', async () => {
    const later = new Date(Date.now() + 30 * DAY);
    const pad = (n: number) => String(n).padStart(2, '0');
    const start = `${later.getFullYear()}-${pad(later.getMonth() + 1)}-${pad(later.getDate())} 08:00:00`;
    mkdirSync(join(roots, 'North', 'Gone'), { recursive: true });
    const migrate = await call<{ task: { id: string } }>('POST', '/api/tasks', {
      task_type: 0,
      task_name: 'Gone to East',
      from_cloud: { cloud_id: clouds.North, paths: ['/Gone'] },
      to_cloud: { cloud_id: clouds.East, path: '/In' },
      schedule: { start_date: start },
    });
    const sync = await call<{ task: { id: string } }>('POST', '/api/tasks', {
      task_type: 1,
      sync_mode: 'one_way',
      task_name: 'Gone to South',
      from_cloud: { cloud_id: clouds.North, paths: ['/Gone'] },
      to_cloud: { cloud_id: clouds.South, path: '/In' },
      schedule: { start_date: start },
    });
    // The source folder goes before the runs start.
    rmSync(join(roots, 'North', 'Gone'), { recursive: true });
    await page.goto(server.url + '/transfer');
    await page.getByRole('button', { name: 'Transmission list' }).first().click();
    const list = page.getByRole('dialog', { name: 'Transmission list' });
    for (const id of [migrate.task.id, sync.task.id]) {
      await list.locator(`[data-task-id="${id}"]`).getByTestId('task-start_now').click();
    }
    // The notices, raised while the list watches the runs.
    await page.getByText(/^Migration Failed(: .+)? · Gone to East$/).waitFor({ timeout: 30_000 });
    await page.getByText(/^Sync Failed(: .+)? · Gone to South$/).waitFor({ timeout: 30_000 });
    await list.getByTestId('tab-completed').click();
    const migration = list.locator(`[data-task-id="${migrate.task.id}"]`);
    const syncRow = list.locator(`[data-task-id="${sync.task.id}"]`);
    await expect.poll(() => migration.getAttribute('data-state')).toBe('3');
    await expect.poll(() => syncRow.getAttribute('data-state')).toBe('3');
    expect(await migration.getByTestId('task-failed').textContent()).toMatch(/^Migration Failed/);
    expect(await syncRow.getByTestId('task-failed').textContent()).toMatch(/^Sync Failed/);
    await screenshot(page, 'details-failed-tasks');
    // A fully failed task shows its reasons as a partly failed one does: its failed files...
    await migration.getByRole('button', { name: 'View reasons' }).click();
    const details = page.getByRole('dialog', { name: 'Transfer Details' });
    await details.getByTestId('failed-file').first().waitFor();
    await screenshot(page, 'details-failed-reasons');
    await details.getByRole('button', { name: 'Close' }).click();
    await details.waitFor({ state: 'hidden' });
    // ...or why the run stopped as a whole.
    await syncRow.getByRole('button', { name: 'View reasons' }).click();
    const why = details.getByTestId('details-error');
    await why.waitFor();
    expect(await why.textContent()).toMatch(/^Sync Failed.*not found/);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
  });

  it('ENT-USR-10 and the mail notice: Settings shows each packet’s deduction date, and why completion e-mails start off', async () => {
    await page.goto(server.url + '/transfer');
    await openUserPanel(page);
    await page.getByText('Settings', { exact: true }).click();
    const settings = page.getByRole('dialog', { name: 'Settings' });
    const packet = settings.getByTestId('packet-row').first();
    await packet.waitFor();
    expect(await packet.textContent()).toMatch(/counted from \d{4}\/\d{2}\/\d{2}.*ends \d{4}\/\d{2}\/\d{2}/);
    await settings.getByRole('tab', { name: 'Notification' }).click();
    expect(await settings.getByTestId('notify-no-mail').textContent()).toContain('SMTP_URL');
    expect(await settings.getByRole('checkbox', { name: 'Email me when a transfer ends' }).isChecked()).toBe(false);
    await screenshot(page, 'details-settings-no-mail');
    await page.keyboard.press('Escape');
  });

  it('MSG-08: with no data left, starting a transfer says "Insufficient transfer traffic" and offers to buy', async () => {
    sql(`update data_packets set usage = size where user_id = ?`, auth.uid);
    await page.goto(server.url + '/transfer');
    await page.getByTestId('source-cloud').selectOption({ label: 'North · Local folder' });
    await page.getByTestId('target-cloud').selectOption({ label: 'West · Local folder' });
    const docs = page.getByTestId('source-tree').locator('[data-testid="tree-row"][data-path="/Docs"]');
    await docs.waitFor();
    await docs.getByRole('checkbox').check();
    await page.getByTestId('transfer-start').click();
    await page.getByTestId('preview-start').click();
    const prompt = page.getByRole('dialog', { name: 'Insufficient transfer traffic' });
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('Your current remaining transfer data is insufficient.');
    await screenshot(page, 'details-traffic-prompt');
    await prompt.getByRole('button', { name: 'Buy now' }).click();
    await page.waitForURL(/\/buy/);
  });

  it('MSG-08: a watched run that runs out of data on the way says so, with the size it needs and a data package', async () => {
    // 100 bytes left: the 1.56 KB note cannot go.
    sql(`update data_packets set usage = size - 100 where user_id = ?`, auth.uid);
    const created = await call<{ task: { id: string } }>('POST', '/api/tasks', {
      task_type: 0,
      task_name: 'Too much for the data left',
      from_cloud: { cloud_id: clouds.East, paths: ['/Docs'] },
      to_cloud: { cloud_id: clouds.West, path: '/Over' },
      schedule: { start_date: '2099-01-01 08:00:00' },
    });
    await page.goto(server.url + '/transfer');
    await page.getByRole('button', { name: 'Transmission list' }).first().click();
    const list = page.getByRole('dialog', { name: 'Transmission list' });
    await list.locator(`[data-task-id="${created.task.id}"]`).getByTestId('task-start_now').click();
    const prompt = page.getByRole('dialog', { name: 'Insufficient transfer traffic' });
    await prompt.waitFor({ timeout: 30_000 });
    expect(await prompt.textContent()).toMatch(/Not enough traffic available, need .+ in total/);
    await screenshot(page, 'details-traffic-run');
    await prompt.getByRole('button', { name: 'Buy a data package' }).click();
    await page.waitForURL(/\/buy/);
    expect(pageErrors).toEqual([]);
  });
});

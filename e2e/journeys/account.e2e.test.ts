import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, openUserPanel, quietShell, signUpInFrame, visitorToken } from '../support/shell.ts';

// A visitor connects clouds, reorders them, signs up from the login modal, keeps the clouds,
// sets the notification e-mail, sees the operator's Users tab (the first account is the operator),
// and logs out. One server (billing in test mode, so the plan, usage and Premium parts of the shell
// show), one browser context for the story. Visitors get no local folders: their clouds are
// folders of a WebDAV server on 127.0.0.1.

let server: RunningSkyferry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let roots: string;
let dav: RcloneServer;
const email = `ada.${Date.now()}@example.com`;
const password = 'correct horse battery';

beforeAll(async () => {
  roots = mkdtempSync(join(tmpdir(), 'skyferry-e2e-roots-'));
  dav = await startRcloneServe('webdav');
  const auth = `Basic ${Buffer.from(`${dav.username}:${dav.password}`).toString('base64')}`;
  for (const name of ['alpha', 'bravo', 'charlie']) {
    const res = await fetch(dav.url + name, { method: 'MKCOL', headers: { authorization: auth } });
    expect(res.status).toBe(201);
  }
  server = await startSkyferry({
    SKYFERRY_LOCAL_ROOTS: roots,
    SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true',
    BILLING_MODE: 'test',
  });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
  await quietShell(context);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await dav?.stop();
  rmSync(roots, { recursive: true, force: true });
});

const rowLabels = () => page.getByTestId('cloud-row').locator('a p:first-child').allTextContents();

async function storage(key: string): Promise<unknown> {
  const raw = await page.evaluate((k) => localStorage.getItem(k), key);
  return raw === null ? null : JSON.parse(raw);
}

describe('an account', () => {
  it('a visitor’s clouds are listed in the sidebar and reordered by keyboard and by dragging', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    const temp = await visitorToken(page);
    for (const [name, alias] of [
      ['alpha', 'Alpha'],
      ['bravo', 'Bravo'],
      ['charlie', 'Charlie'],
    ]) {
      const res = await page.request.post(server.url + '/api/clouds', {
        headers: { 'x-temp-authorization': temp },
        data: {
          cloud_name: 'webdav',
          alias,
          credentials: { url: `${dav.url}${name!}/`, username: dav.username, password: dav.password },
        },
      });
      expect((await res.json()).code, await res.text()).toBe(0);
    }
    await page.reload();
    await page.getByTestId('cloud-row').nth(2).waitFor();
    expect(await rowLabels()).toEqual(['Alpha', 'Bravo', 'Charlie']);
    // A visitor never gets folders on the server: the kind is greyed with the reason.
    const kinds = await page.request.get(server.url + '/api/system/clouds', {
      headers: { 'x-temp-authorization': temp },
    });
    const local = ((await kinds.json()).data as Array<{ cloud_name: string; available: boolean; reason: string }>).find(
      (k) => k.cloud_name === 'local',
    );
    expect(local?.available).toBe(false);
    expect(local?.reason).toContain('not available to visitors');

    const saved = page.waitForResponse((r) => r.url().endsWith('/api/clouds/sort') && r.request().method() === 'PUT');
    await page.getByRole('button', { name: 'Reorder Alpha' }).focus();
    await page.keyboard.press('ArrowDown');
    expect((await (await saved).json()).code).toBe(0);
    expect(await rowLabels()).toEqual(['Bravo', 'Alpha', 'Charlie']);
    // Focus stays on the moved cloud's handle, so it can keep moving.
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } }
        ).document.activeElement.getAttribute('aria-label'),
      ),
    ).toBe('Reorder Alpha');

    const dragged = page.waitForResponse((r) => r.url().endsWith('/api/clouds/sort'));
    await page.getByTestId('cloud-row').nth(2).dragTo(page.getByTestId('cloud-row').nth(0));
    await dragged;
    expect(await rowLabels()).toEqual(['Charlie', 'Bravo', 'Alpha']);
    await page.reload();
    await page.getByTestId('cloud-row').nth(2).waitFor();
    expect(await rowLabels()).toEqual(['Charlie', 'Bravo', 'Alpha']);

    await page.getByTestId('cloud-row').nth(1).locator('a').click();
    await page.waitForURL(/\/manage\/explorer\?cloud_index=1&is_open=1&_=\d+/);
    await expect.poll(() => page.getByTestId('cloud-row').nth(1).getAttribute('data-active')).toBe('true');
    expect(await page.getByTestId('cloud-row').nth(0).getAttribute('data-active')).toBeNull();
    await screenshot(page, 'account-visitor-clouds');
  });

  it('signs up from the login modal and keeps the temporary clouds', async () => {
    await page.goto(server.url + '/transfer');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    await page.getByRole('dialog', { name: 'Log in' }).waitFor();
    await signUpInFrame(page, email, password);
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    const prompt = page.getByRole('dialog', { name: 'Keep your cloud drives?' });
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('You connected 3 cloud drives before logging in.');
    await screenshot(page, 'account-bind-prompt');
    expect(await axeSeriousViolations(page)).toEqual([]);
    const bound = page.waitForResponse((r) => r.url().endsWith('/api/clouds/bind'));
    await prompt.getByRole('button', { name: 'Associate' }).click();
    const bind = await (await bound).json();
    expect(bind.code).toBe(0);
    expect(bind.data.bound).toHaveLength(3);
    await prompt.waitFor({ state: 'detached' });
    await page.getByTestId('cloud-row').nth(2).waitFor();
    // The order the visitor gave them is kept.
    await expect.poll(rowLabels).toEqual(['Charlie', 'Bravo', 'Alpha']);
    const user = (await storage('skyferry.user')) as { email: string; access_token: string; refresh_token: string };
    expect(user.email).toBe(email);
    expect(user.access_token).not.toBe('');
    expect(await storage('skyferry.temp_token')).toBeNull();

    // The clouds now belong to the account.
    const me = await page.request.get(server.url + '/api/v2/clouds/me', {
      headers: { authorization: `Bearer ${user.access_token}` },
    });
    const mine = (await me.json()).data as { clouds: Array<{ cloud_alias_name: string; bound: boolean }> };
    expect(mine.clouds.map((c) => c.cloud_alias_name).sort()).toEqual(['Alpha', 'Bravo', 'Charlie']);
    expect(mine.clouds.every((c) => c.bound)).toBe(true);

    await openUserPanel(page);
    expect(await page.getByTestId('user-email').textContent()).toBe(email);
    expect(await page.getByText('Log out').isVisible()).toBe(true);
    // A new account is on the free plan: the base usage bar, no additional bar, Buy Now.
    expect(await page.getByTestId('base-usage').isVisible()).toBe(true);
    expect(await page.getByTestId('additional-usage').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Buy Now' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: /Premium/ }).getAttribute('href')).toBe('/buy');
    expect(await page.getByTestId('premium-icon').getAttribute('data-paid')).toBeNull();
    await screenshot(page, 'account-user-panel');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
  });

  it('a reload keeps the session; Notification saves the e-mail with the server’s messages', async () => {
    await page.reload();
    await page.getByTestId('cloud-row').nth(2).waitFor();
    await openUserPanel(page);
    await page.getByText('Settings', { exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    // The dialog's chunk may still be on its way.
    await dialog.getByTestId('plan-table').waitFor();
    expect(await dialog.getByTestId('renew-upgrade').textContent()).toBe('Upgrade');
    await screenshot(page, 'account-settings-general-billing');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await dialog.getByRole('tab', { name: 'Notification' }).click();
    const field = dialog.getByRole('textbox', { name: 'Email' });
    const save = dialog.getByRole('button', { name: 'Save' });
    expect(await field.inputValue()).toBe(email);
    await field.fill('');
    expect(await save.isDisabled()).toBe(true);
    await field.fill('not an address');
    await dialog.getByRole('checkbox', { name: 'Email me when a transfer ends' }).check();
    await save.click();
    await dialog.getByText('Email format error.').waitFor();
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'account-settings-notification-error');
    // The field's error text keeps AA contrast.
    expect(await axeSeriousViolations(page)).toEqual([]);
    await field.fill(`notify.${email}`);
    expect(await dialog.getByText('Email format error.').count()).toBe(0);
    await save.click();
    await dialog.getByTestId('notify-message').waitFor();
    expect(await dialog.getByTestId('notify-message').textContent()).toBe('Notification settings saved.');
    await screenshot(page, 'account-settings-notification');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    const user = (await storage('skyferry.user')) as { access_token: string };
    const me = await page.request.get(server.url + '/api/users/me', {
      headers: { authorization: `Bearer ${user.access_token}` },
    });
    expect((await me.json()).data.user_info).toMatchObject({ notify_email: `notify.${email}`, remind_me: 1 });
  });

  it('the first account is the operator: Settings has Users, and the local folder names the allowed folders', async () => {
    await openUserPanel(page);
    await page.getByText('Settings', { exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    await dialog.getByRole('tab', { name: 'Users' }).click();
    await dialog.getByTestId('operator-user').first().waitFor();
    expect(await dialog.getByTestId('operator-user').first().textContent()).toContain(email);
    expect(await dialog.getByTestId('operator-roots').textContent()).toContain(roots);
    await screenshot(page, 'account-settings-users');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.goto(server.url + '/manage');
    await page.getByRole('button', { name: 'Add cloud' }).first().click();
    const connect = page.getByRole('dialog', { name: 'Connect cloud drive' });
    await connect.getByTestId('kind-local').click();
    expect(await connect.getByTestId('local-roots').textContent()).toContain(roots);
    await screenshot(page, 'account-connect-local');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await connect.waitFor({ state: 'detached' });
  });

  it('logs out after "Are you sure you want to log out?": everything is cleared, the tokens are revoked, and the home route loads', async () => {
    const before = (await storage('skyferry.user')) as { refresh_token: string; auto_login_token: string };
    await openUserPanel(page);
    await page.getByText('Log out').click();
    const confirm = page.getByRole('dialog', { name: 'Please confirm' });
    await confirm.getByText('Are you sure you want to log out?').waitFor();
    await screenshot(page, 'account-logout-confirm');
    const loggedOut = page.waitForResponse((r) => r.url().endsWith('/api/account/logout'));
    // The page reloads at the home route about 0.8 s after the sign-out frame opens.
    const reloaded = page.waitForEvent('load');
    await confirm.getByRole('button', { name: 'Yes' }).click();
    expect((await (await loggedOut).json()).code).toBe(0);
    expect(await page.getByTestId('sign-out-frame').count()).toBe(1);
    await reloaded;
    await page.waitForURL('**/transfer');
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    expect(await storage('skyferry.user')).toBeNull();
    expect(await page.getByTestId('cloud-row').count()).toBe(0);
    await openUserPanel(page);
    expect(await page.getByRole('button', { name: 'Log in Here.' }).isVisible()).toBe(true);

    const refresh = await page.request.post(server.url + '/api/v2/authorizations', {
      data: { grant_type: 'refresh_token', refresh_token: before.refresh_token },
    });
    expect((await refresh.json()).code).not.toBe(0);
    const auto = await page.request.post(server.url + '/api/v2/authorizations', {
      data: { grant_type: 'auto_login', auto_login_token: before.auto_login_token },
    });
    expect((await auto.json()).code).not.toBe(0);
  });

  it('signs back in with the same account and finds its clouds', async () => {
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    const frame = page.frameLocator('iframe[data-testid="sign-in-frame"]');
    await frame.locator('#email').fill(email);
    await frame.locator('#password').fill(password);
    await frame.locator('#submit').click();
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await page.getByTestId('cloud-row').nth(2).waitFor();
    expect(await rowLabels()).toEqual(['Charlie', 'Bravo', 'Alpha']);
    expect(await page.getByRole('dialog', { name: 'Keep your cloud drives?' }).count()).toBe(0);
  });
});

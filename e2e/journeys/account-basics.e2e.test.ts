import type { Browser, BrowserContext, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, outbox, waitForMail } from '../../apps/server/test/support/mail.ts';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, openUserPanel, quietShell } from '../support/shell.ts';

// Account basics in the browser, as one person would go through them: sign up (every problem of the
// form shown at once, in a panel titled as sign-up), see and end another device's session, change
// the password, forget it and set a new one through the link mailed to the outbox, and delete the
// account. One server, its mail in the data dir's outbox; one browser context.

let server: RunningSkyferry;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const email = `grace.${Date.now()}@example.com`;
const first = 'first long password';
const second = 'second long password';
const third = 'third long password';

beforeAll(async () => {
  server = await startSkyferry({});
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
  await quietShell(context);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The frame inside the login panel, once it shows `selector` (its page may change under it). */
async function loginFrame(selector: string): Promise<FrameLocator> {
  const frame = page.frameLocator('iframe[data-testid="sign-in-frame"]');
  await frame.locator(selector).first().waitFor();
  return frame;
}

/** Signs in over the API, as another device would: its user agent names it. */
async function signInElsewhere(password: string, userAgent = 'Mozilla/5.0 (iPhone) Mobile Safari/604.1') {
  const res = await fetch(`${server.url}/api/account/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': userAgent },
    body: JSON.stringify({ email, password }),
  });
  return (await res.json()) as { code: number; data: { access_token: string } };
}

const me = async (token: string) =>
  (
    (await (await fetch(`${server.url}/api/users/me`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      code: number;
    }
  ).code;

async function openAccountSettings(): Promise<void> {
  await openUserPanel(page);
  await page.locator('[data-entry="settings"]').click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.waitFor();
  await dialog.getByRole('tab', { name: 'Account' }).click();
}

describe('account basics', () => {
  it('signs up in a panel titled as sign-up, with every problem of the form shown at once', async () => {
    await page.goto(server.url + '/transfer');
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    await openUserPanel(page);
    await page.getByTestId('visitor-notice').getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('dialog', { name: 'Create account' }).waitFor();
    const frame = await loginFrame('#confirm');
    await frame.locator('#email').fill('not an address');
    await frame.locator('#password').fill('short');
    await frame.locator('#confirm').fill('other');
    await frame.locator('#submit').click();
    await frame.locator('#confirm-error:not(:empty)').waitFor();
    expect(await frame.locator('#email-error').textContent()).toBe('Email format error.');
    expect(await frame.locator('#password-error').textContent()).toBe('The password must have at least 8 characters.');
    expect(await frame.locator('#confirm-error').textContent()).toBe('The passwords do not match.');
    expect(await frame.locator('#password').getAttribute('aria-invalid')).toBe('true');
    await screenshot(page, 'account-basics-signup-errors');
    await frame.locator('#email').fill(email);
    await frame.locator('#password').fill(first);
    await frame.locator('#confirm').fill(first);
    await frame.locator('#submit').click();
    await page.getByRole('dialog', { name: 'Create account' }).waitFor({ state: 'detached' });
    await openUserPanel(page);
    expect(await page.getByTestId('user-email').textContent()).toBe(email);
    await page.keyboard.press('Escape');
  });

  it('lists the signed-in devices and signs another one out', async () => {
    const phone = await signInElsewhere(first);
    expect(phone.code).toBe(0);
    await openAccountSettings();
    const rows = page.getByTestId('session-row');
    await expect.poll(() => rows.count()).toBe(2);
    const current = page.locator('[data-testid="session-row"][data-current]');
    expect(await current.textContent()).toContain('This device');
    const other = page.locator('[data-testid="session-row"]:not([data-current])');
    expect(await other.textContent()).toContain('Safari · iOS');
    expect(await other.textContent()).toContain('127.0.0.1');
    await page.getByTestId('sessions-table').scrollIntoViewIfNeeded();
    await screenshot(page, 'account-basics-sessions');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await me(phone.data.access_token)).toBe(140013);
  });

  it('changes the password: other devices are signed out, this one stays', async () => {
    const laptop = await signInElsewhere(first, 'Mozilla/5.0 (X11; Linux) Firefox/140.0');
    const dialog = page.getByRole('dialog', { name: 'Settings' });
    const form = dialog.getByTestId('change-password-form');
    await form.getByLabel('Current password', { exact: true }).fill(first);
    await form.getByLabel('New password', { exact: true }).fill(second);
    await form.getByLabel('Confirm new password').fill(second);
    const changed = page.waitForResponse((r) => r.url().endsWith('/api/account/password'));
    await form.getByRole('button', { name: 'Change password' }).click();
    expect(((await (await changed).json()) as { code: number; data: unknown }).data).toEqual({ ended_sessions: 1 });
    await page.getByText('Your password has been changed. Your other devices have been signed out.').waitFor();
    expect(await me(laptop.data.access_token)).toBe(140013);
    expect((await signInElsewhere(first)).code).not.toBe(0);
    expect((await signInElsewhere(second)).code).toBe(0);
    // This tab is still signed in.
    await page.keyboard.press('Escape');
    await page.reload();
    await openUserPanel(page);
    expect(await page.getByTestId('user-email').textContent()).toBe(email);
    await page.keyboard.press('Escape');
  });

  it('forgot the password: the mailed, single-use link sets a new one', async () => {
    // Signed out, as someone who forgot it would be.
    await openUserPanel(page);
    await page.locator('[data-entry="logout"]').click();
    const reloaded = page.waitForEvent('load');
    await page.getByRole('dialog').getByRole('button', { name: 'Yes' }).click();
    await reloaded;
    await page.waitForURL('**/transfer');
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    await page.getByTestId('visitor-badge').waitFor();

    await page.getByTestId('visitor-badge').click();
    await page.getByRole('dialog', { name: 'Log in' }).waitFor();
    let frame = await loginFrame('#forgot-link');
    await frame.locator('#forgot-link').click();
    await page.getByRole('dialog', { name: 'Reset password' }).waitFor();
    frame = await loginFrame('.intro');
    await frame.locator('#email').fill(email);
    await frame.locator('#submit').click();
    await frame.locator('#done:not([hidden])').waitFor();
    expect(await frame.locator('#done-text').textContent()).toBe(
      'If an account uses this address, a link to set a new password has been sent to it.',
    );
    await screenshot(page, 'account-basics-forgot-sent');
    const panel = page.getByRole('dialog', { name: 'Reset password' });
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached' });

    const mail = await waitForMail(
      () => outbox(server.dataDir),
      (m) => m.to === email && m.subject === 'Set a new Skyferry password',
    );
    const link = linkIn(mail.text);
    expect(link.startsWith(`${server.url}/account/reset?token=sk_pr_`)).toBe(true);

    const reset = await context.newPage();
    await reset.goto(link);
    await reset.getByRole('heading', { name: 'Set a new password' }).waitFor();
    expect(await reset.textContent('.intro')).toBe(email);
    expect(await axeSeriousViolations(reset)).toEqual([]);
    await reset.fill('#password', third);
    await reset.fill('#confirm', third);
    await reset.click('#submit');
    await reset.waitForSelector('#done:not([hidden])');
    expect(await reset.textContent('#done-text')).toBe('Your new password is set. Sign in with it.');
    await screenshot(reset, 'account-basics-reset-done');
    // The link works once.
    await reset.goto(link);
    await reset.getByText('This link has expired or has already been used. Please ask for a new one.').waitFor();
    await reset.close();
    expect((await signInElsewhere(second)).code).not.toBe(0);

    await page.getByTestId('visitor-badge').click();
    frame = await loginFrame('#forgot-link');
    await frame.locator('#email').fill(email);
    await frame.locator('#password').fill(third);
    await frame.locator('#submit').click();
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    expect(await page.getByTestId('visitor-badge').count()).toBe(0);
  });

  it('deletes the account after the password; it cannot sign in again', async () => {
    await openAccountSettings();
    const settings = page.getByRole('dialog', { name: 'Settings' });
    await settings.getByTestId('delete-account').click();
    const confirm = page.getByRole('dialog', { name: 'Delete your account?' });
    await confirm.getByLabel('Password', { exact: true }).fill('not the password');
    await confirm.getByRole('button', { name: 'Delete for ever' }).click();
    await confirm.getByText('The password is incorrect.').waitFor();
    await confirm.getByLabel('Password', { exact: true }).fill(third);
    const reloaded = page.waitForEvent('load');
    await confirm.getByRole('button', { name: 'Delete for ever' }).click();
    await reloaded;
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    await page.getByTestId('visitor-badge').waitFor();
    const again = await signInElsewhere(third);
    expect(again.code).toBe(400);
    await screenshot(page, 'account-basics-deleted');
  });
});

import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, signInFrame, signUpInFrame } from '../support/shell.ts';

/**
 * Issue 34 (smaller items): logging out ends the server session in every path, so the old
 * auto-login token stops working: the sign-out page in a frame (its logout_success message), the
 * sign-out page opened as a whole page (the no-cookie variant, back through /callback-logout), and
 * the app's own Log out.
 */

let server: RunningSkyferry;
let browser: Browser;
let page: Page;
const email = `leaver.${randomBytes(4).toString('hex')}@example.com`;
const password = 'correct horse battery';

beforeAll(async () => {
  server = await startSkyferry();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await quietShell(context);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface StoredUser {
  email: string;
  access_token: string;
  refresh_token: string;
  auto_login_token: string;
}

const storedUser = async () =>
  JSON.parse((await page.evaluate(() => localStorage.getItem('skyferry.user'))) ?? '{}') as Partial<StoredUser>;

/** Signs in through the login modal (signing up the first time) and answers the stored tokens. */
async function signIn(first = false): Promise<StoredUser> {
  await page.goto(server.url + '/transfer');
  await openUserPanel(page);
  await page.getByRole('button', { name: 'Log in Here.' }).click();
  if (first) {
    await signUpInFrame(page, email, password);
  } else {
    const frame = await signInFrame(page);
    await frame.fill('#email', email);
    await frame.fill('#password', password);
    await frame.click('#submit');
  }
  await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
  await expect.poll(async () => (await storedUser()).access_token ?? '').not.toBe('');
  return (await storedUser()) as StoredUser;
}

/** What the server says to the old auto-login token: 0 while the session lives, 230011 once ended. */
async function autoLogin(user: StoredUser): Promise<number> {
  const res = await fetch(`${server.url}/api/v2/authorizations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'auto_login', auto_login_token: user.auto_login_token }),
  });
  return ((await res.json()) as { code: number }).code;
}

async function signedOutHere(): Promise<void> {
  await page.waitForURL('**/transfer');
  await expect.poll(async () => (await storedUser()).access_token ?? '').toBe('');
}

it('the sign-out page in a frame ends the server session, not only the page’s', async () => {
  const user = await signIn(true);
  const signOut = `${server.url}/account/signout?origin=${encodeURIComponent(server.url)}&lang=en`;
  const loggedOut = page.waitForResponse((r) => r.url().endsWith('/api/account/logout'));
  await page.evaluate((src) => {
    const doc = (globalThis as unknown as { document: { createElement(t: string): Record<string, unknown> } }).document;
    const frame = doc.createElement('iframe');
    frame.src = src;
    (doc as unknown as { body: { appendChild(n: unknown): void } }).body.appendChild(frame);
  }, signOut);
  expect(((await (await loggedOut).json()) as { data: { ended: boolean } }).data.ended).toBe(true);
  await signedOutHere();
  expect(await autoLogin(user)).toBe(230011);
});

it('the sign-out page opened as a whole page ends the server session through /callback-logout', async () => {
  const user = await signIn();
  expect(await autoLogin(user)).toBe(0);
  const fresh = await storedUser();
  const loggedOut = page.waitForResponse((r) => r.url().endsWith('/api/account/logout'));
  await page.goto(`${server.url}/account/signout?origin=${encodeURIComponent(server.url)}&lang=en&cookies=0`);
  // The page reloads right after the call: its status is all there is to read.
  expect((await loggedOut).status()).toBe(200);
  await signedOutHere();
  expect(await autoLogin(fresh as StoredUser)).toBe(230011);
});

it('the app’s own Log out ends the server session', async () => {
  await signIn();
  const user = (await storedUser()) as StoredUser;
  await openUserPanel(page);
  await page.getByText('Log out').click();
  const confirm = page.getByRole('dialog', { name: 'Please confirm' });
  await confirm.getByRole('button', { name: 'Yes' }).click();
  await signedOutHere();
  expect(await autoLogin(user)).toBe(230011);
});

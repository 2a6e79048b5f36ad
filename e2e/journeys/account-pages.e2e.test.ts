import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';

/**
 * The account pages in a real browser, framed by a client window on another origin (as the
 * desktop app or a separately hosted client would): they post login_success / logout_success to
 * that exact origin, and refuse to work for an origin the server does not allow.
 */

interface Received {
  origin: string;
  data: { type: string; data?: { access_token?: string; uid?: string; user_info?: { email?: string } } };
}

let server: RunningSkyferry;
let browser: Browser;
let client: Server;
let stranger: Server;
let clientOrigin: string;
let strangerOrigin: string;

/** A bare page that frames `src` and records every message it receives. */
function parentPage(): Server {
  return createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? 'about:blank';
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><body>
<iframe id="f" title="account" style="width:480px;height:640px;border:0" src="${src.replace(/"/g, '&quot;')}"></iframe>
<script>window.received = []; addEventListener('message', function (e) { window.received.push({ origin: e.origin, data: e.data }); });</script>
</body></html>`);
  });
}

async function listen(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

async function init(origin: string, lang = 'en') {
  const res = await fetch(`${server.url}/api/v2/init?origin=${encodeURIComponent(origin)}&lang=${lang}`);
  return ((await res.json()) as { data: { sign_in_url: string; sign_out_url: string } }).data;
}

async function framed(parentOrigin: string, src: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 520, height: 700 } });
  await page.goto(`${parentOrigin}/?src=${encodeURIComponent(src)}`);
  return page;
}

/** The login data and logout messages received (the pages also say which page they show: left out here). */
const received = async (page: Page) =>
  (await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received)).filter(
    (m) => m.data.type !== 'account_page',
  );

beforeAll(async () => {
  client = parentPage();
  stranger = parentPage();
  [clientOrigin, strangerOrigin] = await Promise.all([listen(client), listen(stranger)]);
  server = await startSkyferry({ SKYFERRY_ALLOWED_ORIGINS: clientOrigin });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  client?.close();
  stranger?.close();
});

it('signs up in the frame and posts login_success with the login data to the exact client origin', async () => {
  const urls = await init(clientOrigin);
  expect(new URL(urls.sign_in_url).searchParams.get('origin')).toBe(clientOrigin);
  const signUp = urls.sign_in_url.replace('/account/signin', '/account/signup');
  const page = await framed(clientOrigin, signUp);
  const frame = page.frameLocator('#f');
  await frame.getByLabel('Email').fill('framed.user@example.com');
  await frame.getByLabel('Password', { exact: true }).fill('a good password');
  await frame.getByLabel('Confirm password').fill('a different one');
  await frame.getByRole('button', { name: 'Create account' }).click();
  // The problem shows beside its field, which is marked invalid.
  await expect.poll(() => frame.locator('#confirm-error').textContent()).toBe('The passwords do not match.');
  expect(await frame.getByLabel('Confirm password').getAttribute('aria-invalid')).toBe('true');
  await frame.getByLabel('Confirm password').fill('a good password');
  await frame.getByRole('button', { name: 'Create account' }).click();
  await expect.poll(async () => (await received(page)).length, { timeout: 15_000 }).toBe(1);
  const [message] = await received(page);
  expect(message?.origin).toBe(new URL(server.url).origin);
  expect(message?.data.type).toBe('login_success');
  expect(message?.data.data?.access_token).toMatch(/^sk_at_/);
  expect(message?.data.data?.user_info?.email).toBe('framed.user@example.com');
  await frame.getByText('You are signed in.').waitFor();
  await screenshot(page, 'account-signup-framed');
  // The token works.
  const me = await fetch(`${server.url}/api/users/me`, {
    headers: { authorization: `Bearer ${message?.data.data?.access_token}` },
  });
  expect(((await me.json()) as { code: number }).code).toBe(0);
});

it('signs in (wrong password first, with the server message), and signs out with logout_success', async () => {
  const urls = await init(clientOrigin);
  const page = await framed(clientOrigin, urls.sign_in_url);
  const frame = page.frameLocator('#f');
  await frame.getByLabel('Email').fill('framed.user@example.com');
  await frame.getByLabel('Password').fill('not the password');
  await frame.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => frame.getByRole('alert').textContent()).toBe('The email or password is incorrect.');
  expect(await received(page)).toEqual([]);
  await frame.getByLabel('Password').fill('a good password');
  await frame.getByRole('button', { name: 'Sign in' }).click();
  await expect
    .poll(async () => (await received(page)).map((m) => m.data.type), { timeout: 15_000 })
    .toEqual(['login_success']);
  await screenshot(page, 'account-signin-framed');

  const out = await framed(clientOrigin, urls.sign_out_url);
  await expect
    .poll(async () => (await received(out)).map((m) => [m.origin, m.data.type]))
    .toEqual([[new URL(server.url).origin, 'logout_success']]);
  await out.frameLocator('#f').getByText('You have signed out of Skyferry.').waitFor();
});

it('opened as a whole page (no-cookie variant), hands the result to the client callback routes', async () => {
  const urls = (await init(clientOrigin)) as {
    sign_in_url_disable_cookies?: string;
    sign_out_url_disable_cookies?: string;
  };
  expect(urls.sign_in_url_disable_cookies).toBeTruthy();
  const page = await browser.newPage({ viewport: { width: 520, height: 700 } });
  await page.goto(urls.sign_in_url_disable_cookies!);
  await page.getByLabel('Email').fill('framed.user@example.com');
  await page.getByLabel('Password').fill('a good password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${clientOrigin}/callback-login#data=*`);
  const data = JSON.parse(decodeURIComponent(new URL(page.url()).hash.replace(/^#data=/, ''))) as {
    access_token: string;
    user_info: { email: string };
  };
  expect(data.access_token).toMatch(/^sk_at_/);
  expect(data.user_info.email).toBe('framed.user@example.com');
  await page.goto(urls.sign_out_url_disable_cookies!);
  await page.waitForURL(`${clientOrigin}/callback-logout`);
});

it('speaks the language it is given', async () => {
  const urls = await init(clientOrigin, 'ja');
  const page = await framed(clientOrigin, urls.sign_in_url);
  await page.frameLocator('#f').getByRole('heading', { name: 'Skyferry にサインイン' }).waitFor();
  const ar = await framed(clientOrigin, urls.sign_in_url.replace('lang=ja', 'lang=ar'));
  expect(await ar.frameLocator('#f').locator('html').getAttribute('dir')).toBe('rtl');
});

it('a window on an origin the server does not allow gets nothing', async () => {
  // Framed by a stranger: the page may not be framed there at all (frame-ancestors).
  const urls = await init(clientOrigin);
  const page = await framed(strangerOrigin, urls.sign_out_url);
  await page.waitForTimeout(1500);
  expect(await received(page)).toEqual([]);
  // Asking to post to a stranger's origin: the page refuses and posts nothing.
  const evil = urls.sign_out_url.replace(encodeURIComponent(clientOrigin), encodeURIComponent(strangerOrigin));
  const direct = await framed(clientOrigin, evil);
  await direct
    .frameLocator('#f')
    .getByText('This page was opened from an address this server does not allow.')
    .waitFor();
  expect(await received(direct)).toEqual([]);
});

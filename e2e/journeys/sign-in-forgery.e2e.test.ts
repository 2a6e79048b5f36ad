import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type S3rverServer } from '@skyferry/testing';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { openUserPanel, quietShell, signUpInFrame, visitorToken } from '../support/shell.ts';

/**
 * Issue 34, finding 4: an attacker signs in to their own account and sends the victim a link
 * `/callback-login#data=<the attacker's tokens>`. Opening it must not replace the victim's session
 * (or sign a visitor in), must say so, and must never offer to move the visitor's clouds into the
 * attacker's account. A sign-in the browser started itself, framed or through the no-cookie
 * round trip, still works and still offers the binding.
 */

let server: RunningSkyferry;
let s3: S3rverServer;
let browser: Browser;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['victim-photos'] });
  // The S3 server is on loopback, as in every test (the SSRF guard allows it only when told to).
  server = await startSkyferry({ SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await s3?.stop();
});

interface AuthData {
  access_token: string;
  refresh_token: string;
  auto_login_token: string;
  user_info: { email: string };
}

async function api<T>(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(server.url + path, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return (await res.json()) as { code: number; msg: string; data: T };
}

/** The attacker's own sign-in, made on the attacker's machine, with a nonce of the attacker's. */
async function attackerTokens(): Promise<{ data: AuthData; nonce: string }> {
  const email = `eve.${randomBytes(4).toString('hex')}@example.com`;
  const nonce = randomBytes(32).toString('base64url');
  const res = await api<AuthData>('/api/account/signup', {
    body: { email, password: 'attacker password', sign_in_nonce: nonce },
  });
  expect(res.code).toBe(0);
  return { data: res.data, nonce };
}

const forgedLinks = (a: { data: AuthData; nonce: string }) => [
  `${server.url}/callback-login#data=${encodeURIComponent(JSON.stringify(a.data))}`,
  `${server.url}/callback-login#data=${encodeURIComponent(JSON.stringify(a.data))}&nonce=${a.nonce}`,
];

async function storage(page: Page, key: string): Promise<unknown> {
  const raw = await page.evaluate((k) => localStorage.getItem(k), key);
  return raw === null ? null : JSON.parse(raw);
}

/** A visitor's temporary S3 cloud, connected with the visitor token the web app holds. */
async function connectVisitorCloud(page: Page): Promise<{ tempToken: string; cloudId: string }> {
  await page.goto(server.url + '/transfer');
  await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
  const tempToken = await visitorToken(page);
  const res = await page.request.post(server.url + '/api/clouds', {
    headers: { 'x-temp-authorization': tempToken },
    data: {
      cloud_name: 's3_compatible',
      alias: 'Victim photos',
      credentials: {
        bucket: 'victim-photos',
        access_key_id: s3.accessKeyId,
        secret_access_key: s3.secretAccessKey,
        endpoint: s3.endpoint,
        region: s3.region,
        path_style: true,
      },
    },
  });
  const body = (await res.json()) as { code: number; data: { id: string } };
  expect(body.code, JSON.stringify(body)).toBe(0);
  await page.reload();
  await page.getByTestId('cloud-row').first().waitFor();
  return { tempToken, cloudId: body.data.id };
}

async function newContext(options: { cookiesOff?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await quietShell(context);
  if (options.cookiesOff) {
    // A browser that blocks cookies for the sign-in: the app takes the no-cookie round trip.
    await context.addInitScript(() => {
      Object.defineProperty(Object.getPrototypeOf(globalThis.navigator), 'cookieEnabled', { get: () => false });
    });
  }
  return context;
}

describe('a forged /callback-login link', () => {
  it('does not sign a visitor in to the attacker’s account and offers no binding', async () => {
    const attacker = await attackerTokens();
    const context = await newContext();
    const page = await context.newPage();
    const { tempToken, cloudId } = await connectVisitorCloud(page);
    for (const link of forgedLinks(attacker)) {
      await page.goto(link);
      const notice = page.getByRole('dialog', { name: 'Sign-in ignored' });
      await notice.waitFor();
      expect(await notice.textContent()).toContain(
        'A sign-in that was not started in this browser was ignored. You are not signed in',
      );
      await page.waitForURL('**/transfer');
      // The tokens are gone from the address bar and history.
      expect(new URL(page.url()).hash).toBe('');
      await screenshot(page, 'sign-in-forgery-visitor');
      await notice.getByRole('button', { name: 'OK' }).click();
      await notice.waitFor({ state: 'detached' });
      expect(await page.getByRole('dialog', { name: 'Keep your cloud drives?' }).count()).toBe(0);
      const user = (await storage(page, 'skyferry.user')) as { access_token?: string } | null;
      expect(user?.access_token ?? '').toBe('');
      await openUserPanel(page);
      expect(await page.getByRole('button', { name: 'Log in Here.' }).isVisible()).toBe(true);
      await page.keyboard.press('Escape');
    }
    // The visitor's cloud stayed the visitor's; the attacker's account has nothing.
    const visitorView = await api<{ temp_clouds: Array<{ id: string }> }>('/api/v2/clouds/me', {
      headers: { 'x-temp-authorization': tempToken },
    });
    expect(visitorView.data.temp_clouds.map((c) => c.id)).toEqual([cloudId]);
    const attackerView = await api<{ clouds: unknown[] }>('/api/v2/clouds/me', {
      headers: { authorization: `Bearer ${attacker.data.access_token}` },
    });
    expect(attackerView.data.clouds).toEqual([]);
    await context.close();
  });

  it('does not replace a signed-in user’s session', async () => {
    const attacker = await attackerTokens();
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(server.url + '/transfer');
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    const email = `victim.${randomBytes(4).toString('hex')}@example.com`;
    await signUpInFrame(page, email, 'victim password');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await expect.poll(async () => ((await storage(page, 'skyferry.user')) as { email?: string }).email).toBe(email);
    const before = (await storage(page, 'skyferry.user')) as { access_token: string };

    for (const link of forgedLinks(attacker)) {
      await page.goto(link);
      const notice = page.getByRole('dialog', { name: 'Sign-in ignored' });
      await notice.waitFor();
      expect(await notice.textContent()).toContain(`You are still signed in as ${email}.`);
      await page.waitForURL('**/transfer');
      await notice.getByRole('button', { name: 'OK' }).click();
      const after = (await storage(page, 'skyferry.user')) as { email: string; access_token: string };
      expect(after.email).toBe(email);
      expect(after.access_token).not.toBe(attacker.data.access_token);
      expect(await page.getByRole('dialog', { name: 'Keep your cloud drives?' }).count()).toBe(0);
    }
    await screenshot(page, 'sign-in-forgery-signed-in');
    await openUserPanel(page);
    expect(await page.getByTestId('user-email').textContent()).toBe(email);
    // The victim's own session is untouched.
    const me = await api('/api/users/me', { headers: { authorization: `Bearer ${before.access_token}` } });
    expect(me.code).toBe(0);
    await context.close();
  });
});

describe('a sign-in this browser started', () => {
  it('through the no-cookie round trip: signs in and offers the binding, which moves the clouds', async () => {
    const context = await newContext({ cookiesOff: true });
    const page = await context.newPage();
    const callbacks: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame() && frame.url().includes('/callback-login#data=')) callbacks.push(frame.url());
    });
    const { tempToken, cloudId } = await connectVisitorCloud(page);
    await openUserPanel(page);
    await page.getByRole('button', { name: 'Log in Here.' }).click();
    // The page goes to the account page itself (no frame), carrying this tab's nonce.
    await page.waitForURL('**/account/signin?**');
    const nonce = new URL(page.url()).searchParams.get('nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.getByText('Create one').click();
    await page.waitForURL('**/account/signup?**');
    expect(new URL(page.url()).searchParams.get('nonce')).toBe(nonce);
    const email = `roundtrip.${randomBytes(4).toString('hex')}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('round trip password');
    await page.getByLabel('Confirm password').fill('round trip password');
    await page.getByRole('button', { name: 'Create account' }).click();
    const prompt = page.getByRole('dialog', { name: 'Keep your cloud drives?' });
    await prompt.waitFor();
    expect(await page.getByRole('dialog', { name: 'Sign-in ignored' }).count()).toBe(0);
    const bound = page.waitForResponse((r) => r.url().endsWith('/api/clouds/bind'));
    await prompt.getByRole('button', { name: 'Associate' }).click();
    const bind = (await (await bound).json()) as { code: number; data: { bound: string[] } };
    expect(bind.code).toBe(0);
    expect(bind.data.bound).toEqual([cloudId]);
    const user = (await storage(page, 'skyferry.user')) as { email: string; access_token: string };
    expect(user.email).toBe(email);
    const mine = await api<{ clouds: Array<{ id: string }> }>('/api/v2/clouds/me', {
      headers: { authorization: `Bearer ${user.access_token}` },
    });
    expect(mine.data.clouds.map((c) => c.id)).toEqual([cloudId]);
    const visitorView = await api<{ temp_clouds: unknown[] }>('/api/v2/clouds/me', {
      headers: { 'x-temp-authorization': tempToken },
    });
    expect(visitorView.data.temp_clouds).toEqual([]);
    await screenshot(page, 'sign-in-roundtrip-bound');
    // The nonce works once: the same callback link opened again (from history, or shared) is refused.
    expect(callbacks.length).toBeGreaterThan(0);
    expect(new URL(callbacks[0]!).hash).toContain(`&nonce=${nonce}`);
    await page.goto(callbacks[0]!);
    await page.getByRole('dialog', { name: 'Sign-in ignored' }).waitFor();
    expect(((await storage(page, 'skyferry.user')) as { email: string }).email).toBe(email);
    await context.close();
  });
});

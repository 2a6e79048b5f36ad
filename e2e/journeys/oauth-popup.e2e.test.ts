import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@skyferry/testing';
import { startOAuthTestApp, type OAuthTestApp } from '../../apps/server/test/support/oauth.ts';
import { launchBrowser, screenshot } from '../support/browser.ts';

/**
 * Connecting an OAuth cloud in a real browser: a page of the server's origin starts the flow,
 * opens the authorization URL in a pop-up, the emulated authorization server (built from the
 * services' OAuth documentation) redirects to the server's callback, and the callback page posts
 * the result to its opener at the exact origin and closes itself. The server runs in this process
 * (its OAuth endpoints point at the local emulators).
 */

/** The parts of the page's window the tests use (the node type-check has no DOM types). */
interface Win {
  received: Array<{ origin: string; data: Record<string, unknown> }>;
  addEventListener(type: 'message', fn: (e: { origin: string; data: Record<string, unknown> }) => void): void;
  open(url: string, name: string, features?: string): unknown;
}

let app: OAuthTestApp;
let browser: Browser;
let origin: string;
let token: string;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  app = await startOAuthTestApp({ publicUrl: origin });
  await app.t.app.listen({ port, host: '127.0.0.1' });
  token = (await app.t.signUp()).accessToken;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

it('connects Dropbox through a pop-up: the callback posts the result to the opener and closes', async () => {
  app.emu.oauth.consentUser = 'popup-user@example.com';
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/healthz`);
  const popupPromise = context.waitForEvent('page');
  const state = await page.evaluate(async (accessToken) => {
    const w = globalThis as unknown as Win;
    w.received = [];
    w.addEventListener('message', (e) => w.received.push({ origin: e.origin, data: e.data }));
    const res = await fetch('/api/clouds/oauth/start', {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cloud_name: 'dropbox', alias: 'From the pop-up' }),
    });
    const body = (await res.json()) as { data: { authorize_url: string; state: string } };
    w.open(body.data.authorize_url, 'skyferry-oauth', 'width=600,height=700');
    return body.data.state;
  }, token);
  const popup = await popupPromise;
  await popup.waitForEvent('close', { timeout: 30_000 });
  await page.waitForFunction(() => (globalThis as unknown as Win).received.length > 0);
  const received = await page.evaluate(() => (globalThis as unknown as Win).received);
  expect(received).toHaveLength(1);
  expect(received[0]!.origin).toBe(origin);
  expect(received[0]!.data).toMatchObject({
    type: 'skyferry_oauth_result',
    state,
    ok: true,
    cloud: { cloud_name: 'dropbox', cloud_alias_name: 'From the pop-up', cloud_account: 'popup-user@example.com' },
  });
  await screenshot(page, 'oauth-popup-opener');
  await context.close();
});

it('reports a refusal to the opener the same way', async () => {
  app.emu.oauth.denyConsent = true;
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/healthz`);
    const popupPromise = context.waitForEvent('page');
    await page.evaluate(async (accessToken) => {
      const w = globalThis as unknown as Win;
      w.received = [];
      w.addEventListener('message', (e) => w.received.push({ origin: e.origin, data: e.data }));
      const res = await fetch('/api/clouds/oauth/start', {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cloud_name: 'box' }),
      });
      const body = (await res.json()) as { data: { authorize_url: string } };
      w.open(body.data.authorize_url, 'skyferry-oauth');
    }, token);
    const popup = await popupPromise;
    await popup.waitForEvent('close', { timeout: 30_000 });
    await page.waitForFunction(() => (globalThis as unknown as Win).received.length > 0);
    const data = await page.evaluate(() => (globalThis as unknown as Win).received[0]?.data);
    expect(data).toMatchObject({ type: 'skyferry_oauth_result', ok: false, code: 400 });
    expect(String(data!.msg)).toContain('not granted');
    await context.close();
  } finally {
    app.emu.oauth.denyConsent = false;
  }
});

import { existsSync, statSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';

let server: RunningSkyferry;
let browser: Browser;

beforeAll(async () => {
  server = await startSkyferry();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

it('opens / and lands on /transfer with the menu', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  await page.goto(server.url + '/');
  await page.waitForURL('**/transfer');
  expect(new URL(page.url()).pathname).toBe('/transfer');
  await page.getByRole('link', { name: 'Sync' }).waitFor({ state: 'visible' });
  expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Transfer');
  const file = await screenshot(page, 'first-start-transfer');
  expect(existsSync(file) && statSync(file).size > 1000).toBe(true);
  expect(errors).toEqual([]);
});

it('serves a client route directly (history fallback) and the API 404 envelope beside it', async () => {
  const page = await browser.newPage();
  const response = await page.goto(server.url + '/manage/explorer?cloud_index=0');
  expect(response?.status()).toBe(200);
  await page.waitForSelector('h2');
  const api = await page.request.get(server.url + '/api/does-not-exist');
  expect(api.status()).toBe(404);
  expect(await api.json()).toMatchObject({ code: 404, data: null });
});

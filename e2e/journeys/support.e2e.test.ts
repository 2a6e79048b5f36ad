import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSmtp, waitForMail } from '../../apps/server/test/support/mail.ts';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../support/server.ts';
import { axeSeriousViolations, openUserPanel, quietShell } from '../support/shell.ts';

// Feedback from the banner's contact link, as a visitor and as a signed-in user; the operator reads
// both in Settings > Inbox and answers; the answer arrives by mail (a real SMTP server on loopback)
// and shows in the user's Settings > Support. One server; a browser context per person.

const SUPPORT = 'help@support.example';
const PASSWORD = 'correct horse battery staple';
let server: RunningSkyferry;
let smtp: TestSmtp;
let browser: Browser;
const pages: Record<'operator' | 'user' | 'visitor', Page> = {} as Record<'operator' | 'user' | 'visitor', Page>;
const contexts: BrowserContext[] = [];
const stamp = Date.now();
const operatorEmail = `operator.${stamp}@example.com`;
const userEmail = `user.${stamp}@example.com`;
const visitorEmail = `visitor.${stamp}@example.com`;

async function person(banner = true): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP: true });
  await quietShell(context);
  // The banner box stays: its contact link is how a web user reaches the Feedback dialog.
  if (banner) await context.addInitScript(() => localStorage.removeItem('skyferry.banner_closed_on'));
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(server.url + '/transfer');
  await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
  return page;
}

async function signUp(page: Page, email: string): Promise<void> {
  await openUserPanel(page);
  await page.getByTestId('visitor-notice').getByRole('button', { name: 'Create account' }).click();
  const frame = page.frameLocator('iframe[data-testid="sign-in-frame"]');
  await frame.locator('#confirm').waitFor();
  await frame.locator('#email').fill(email);
  await frame.locator('#password').fill(PASSWORD);
  await frame.locator('#confirm').fill(PASSWORD);
  await frame.locator('#submit').click();
  await page.getByRole('dialog', { name: 'Create account' }).waitFor({ state: 'detached' });
}

async function sendFeedback(page: Page, email: string, details: string): Promise<void> {
  await page.getByTestId('banner-box').getByRole('button', { name: 'Contact support' }).click();
  const dialog = page.getByRole('dialog', { name: 'Feedback' });
  await dialog.getByTestId('feedback-form').waitFor();
  await dialog.getByRole('button', { name: 'Submit' }).click();
  await dialog.getByText('Email cannot be empty').waitFor();
  await dialog.getByLabel('Email').fill(email);
  await dialog.getByTestId('feedback-type').click();
  await page.getByRole('option', { name: 'Something does not work' }).click();
  await dialog.getByLabel('Detailed description').fill(details);
  await dialog.getByRole('button', { name: 'Submit' }).click();
  await dialog.waitFor({ state: 'detached' });
}

async function openSettingsTab(page: Page, tab: string): Promise<void> {
  await openUserPanel(page);
  await page.locator('[data-entry="settings"]').click();
  const dialog = page.getByRole('dialog', { name: 'Settings' });
  await dialog.waitFor();
  await dialog.getByRole('tab', { name: tab }).click();
}

beforeAll(async () => {
  smtp = await TestSmtp.start();
  server = await startSkyferry({ SMTP_URL: smtp.url, SUPPORT_EMAIL: SUPPORT });
  browser = await launchBrowser();
  pages.operator = await person(false);
  // The install's first account is its operator.
  await signUp(pages.operator, operatorEmail);
  pages.user = await person();
  await signUp(pages.user, userEmail);
  pages.visitor = await person();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await server?.stop();
  await smtp?.stop();
});

describe('feedback and the operator inbox', () => {
  it('a visitor sends feedback from the banner; it is mailed to support and acknowledged', async () => {
    await sendFeedback(pages.visitor, visitorEmail, 'The <b>upload</b> button does nothing.');
    const toSupport = await waitForMail(
      () => smtp.received,
      (m) => m.to === SUPPORT && m.text.includes('The <b>upload</b> button does nothing.'),
    );
    expect(toSupport.text).toContain(`From: ${visitorEmail}`);
    await waitForMail(
      () => smtp.received,
      (m) => m.to === visitorEmail && m.subject.startsWith('We received'),
    );
  });

  it('a signed-in user sends feedback the same way', async () => {
    await sendFeedback(pages.user, userEmail, 'My sync stops after ten files.');
    await waitForMail(
      () => smtp.received,
      (m) => m.to === userEmail && m.subject.startsWith('We received'),
    );
  });

  it('the operator sees both in the inbox and answers the user by mail', async () => {
    const page = pages.operator;
    await openSettingsTab(page, 'Inbox');
    const tickets = page.getByTestId('inbox-ticket');
    await expect.poll(() => tickets.count()).toBe(2);
    expect(await tickets.nth(0).textContent()).toContain(userEmail);
    expect(await tickets.nth(1).textContent()).toContain(visitorEmail);
    await screenshot(page, 'support-inbox');
    expect(await axeSeriousViolations(page)).toEqual([]);
    await tickets.nth(1).click();
    // The visitor's text shows as text, tags and all.
    expect(await page.getByTestId('inbox-contents').textContent()).toBe('The <b>upload</b> button does nothing.');
    await page.getByRole('button', { name: 'Back to the list' }).click();
    await page.getByTestId('inbox-ticket').nth(0).click();
    await page.getByTestId('inbox-reply-text').fill('Reconnect the drive under Manage, then run the sync again.');
    await page.getByTestId('inbox-send').click();
    await page.getByTestId('inbox-reply').waitFor();
    expect(await page.getByTestId('ticket-status').textContent()).toBe('Answered');
    const reply = await waitForMail(
      () => smtp.received,
      (m) => m.to === userEmail && m.subject === 'Answer to your message: My sync stops after ten files.',
    );
    expect(reply.text).toContain('Reconnect the drive under Manage, then run the sync again.');
  });

  it('the user finds the answer in Settings > Support', async () => {
    const page = pages.user;
    await openSettingsTab(page, 'Support');
    const answer = page.getByTestId('ticket-reply');
    await answer.waitFor();
    expect(await answer.textContent()).toContain('Reconnect the drive under Manage, then run the sync again.');
    expect(await page.getByTestId('ticket-status').textContent()).toBe('Answered');
    await screenshot(page, 'support-my-messages');
  });
});

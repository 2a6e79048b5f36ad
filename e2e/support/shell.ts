import { createRequire } from 'node:module';
import type { BrowserContext, Frame, Page } from 'playwright-core';

const require = createRequire(import.meta.url);
/** axe-core's browser build, injected into pages for accessibility scans. */
export const AXE_PATH = require.resolve('axe-core/axe.min.js');

/** The web app's local-storage keys a journey may want to preset (see apps/web/src/lib/storage.ts). */
export const GUIDE_STEPS = [
  'add-drive',
  'add-drive-selectone',
  'menu-ecology',
  'menu-slimming',
  'migrate-1',
  'migrate-2',
  'sync-1',
  'sync-2',
];

/**
 * Before any page of the context loads: every onboarding tip already seen, the QR panel and the
 * banner box closed, so the shell's first-visit overlays do not cover what a journey clicks.
 */
export async function quietShell(context: BrowserContext): Promise<void> {
  await context.addInitScript((steps: string[]) => {
    const pad = (n: number) => String(n).padStart(2, '0');
    const d = new Date();
    if (!localStorage.getItem('skyferry.guide'))
      localStorage.setItem('skyferry.guide', JSON.stringify(Object.fromEntries(steps.map((s) => [s, true]))));
    localStorage.setItem('skyferry.qr_closed_at', JSON.stringify(Date.now()));
    localStorage.setItem(
      'skyferry.banner_closed_on',
      JSON.stringify(`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`),
    );
  }, GUIDE_STEPS);
}

/** The page's globals as the code passed to page.evaluate sees them (the e2e project has no DOM types). */
interface PageGlobals {
  axe?: { run: (context: unknown, options: object) => Promise<{ violations: AxeViolation[] }> };
  document: unknown;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/**
 * Runs axe-core on the page (its context needs `bypassCSP: true`: the server's CSP forbids injected
 * scripts) and returns the serious and critical violations.
 */
export async function axeSeriousViolations(page: Page): Promise<AxeViolation[]> {
  // Colours are only final once opening transitions have ended (endless ones, such as a loader's, do not count).
  await page
    .waitForFunction(
      () =>
        (
          globalThis as unknown as {
            document: { getAnimations(): Array<{ effect: { getTiming(): { iterations: number } } | null }> };
          }
        ).document
          .getAnimations()
          .every((a) => a.effect?.getTiming().iterations === Infinity),
      undefined,
      { timeout: 5_000 },
    )
    .catch(() => undefined);
  const loaded = await page.evaluate(() => (globalThis as unknown as PageGlobals).axe !== undefined);
  if (!loaded) await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as Required<PageGlobals>;
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** The sign-in frame inside the login modal. */
export async function signInFrame(page: Page): Promise<Frame> {
  const handle = await page.waitForSelector('iframe[data-testid="sign-in-frame"]');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('sign-in frame has no content');
  await frame.waitForSelector('#account-form');
  return frame;
}

/** Signs up through the account pages in the sign-in frame (from the sign-in page's link). */
export async function signUpInFrame(page: Page, email: string, password: string): Promise<void> {
  let frame = await signInFrame(page);
  await frame.click('p.links a');
  await frame.waitForSelector('#confirm');
  frame = (await (await page.waitForSelector('iframe[data-testid="sign-in-frame"]')).contentFrame()) ?? frame;
  await frame.fill('#email', email);
  await frame.fill('#password', password);
  await frame.fill('#confirm', password);
  await frame.click('#submit');
  // Signed in: the panel (titled "Create account" by now) closes.
  await page.waitForSelector('iframe[data-testid="sign-in-frame"]', { state: 'detached' });
}

/** Opens the user hover panel from the header's user icon. */
export async function openUserPanel(page: Page): Promise<void> {
  await page.getByTestId('user-icon').click();
  await page.getByTestId('user-panel').waitFor({ state: 'visible' });
}

/**
 * The visitor token the web app holds, once it holds one: the server's first HTML already shows
 * the header and menu, before the app has asked for a visitor identity.
 */
export async function visitorToken(page: Page, timeoutMs = 15_000): Promise<string> {
  const handle = await page.waitForFunction(() => localStorage.getItem('skyferry.temp_token'), undefined, {
    timeout: timeoutMs,
  });
  return JSON.parse(String(await handle.jsonValue())) as string;
}

/** The `dir` and `lang` of the page's root element. */
export async function rootDirection(page: Page): Promise<{ dir: string; lang: string }> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { dir: string; lang: string } } }).document
      .documentElement;
    return { dir: root.dir, lang: root.lang };
  });
}

/** Connects a WebDAV server through the Connect cloud drive dialog (from the first "Add cloud" button). */
export async function connectWebdavInDialog(
  page: Page,
  dav: { url: string; username: string; password: string },
): Promise<void> {
  await page.getByRole('button', { name: 'Add cloud' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Connect cloud drive' });
  await dialog.getByTestId('kind-webdav').click();
  await dialog.getByRole('textbox', { name: 'Server URL' }).fill(dav.url);
  await dialog.getByRole('textbox', { name: 'Username' }).fill(dav.username);
  await dialog.locator('input[name="password"]').fill(dav.password);
  await dialog.getByTestId('connect-submit').click();
  await dialog.waitFor({ state: 'hidden' });
}

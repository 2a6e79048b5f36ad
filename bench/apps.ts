/**
 * Apps benchmark (issue 37): the built-in Viewer in Debian's Chromium, through the real server and
 * the built web app, on a WebDAV cloud (rclone serve webdav over a local folder), as a visitor; a
 * new browser context for each file.
 *
 *  - Video: a 1 GB MP4 (H.264, 8 Mbit/s, 1,000 s, `moov` first) opened with a double-click in the
 *    explorer, and played as soon as its metadata is in (an init script in the Viewer's frame calls
 *    play() on `loadedmetadata`). The bytes of the file sent until the `playing` event, counted by a pass-through proxy between the browser and the server that also paces the
 *    browser's link (20 and 50 Mbit/s, and loopback unthrottled, where Chromium's read-ahead fills
 *    its buffer faster than the first frame is shown). Target < 2 MB on the 20 Mbit/s link.
 *  - Picture: a 20 MB JPEG (6000x4000) opened in the Viewer, then its thumbnails (256 and 512 px,
 *    made by the server); the API process's memory growth: its peak RSS (VmHWM, reset through
 *    /proc/<pid>/clear_refs just before) less its RSS before, with libvips already loaded (a small
 *    picture's thumbnail first). Target < 50 MB.
 *
 *   npm run build -w @skyferry/web && npm run bench:apps
 *   BENCH_DIR=/var/tmp/apps-bench npm run bench:apps   # where the generated media are kept between runs
 *   BENCH_LINKS=10,20,0 BENCH_TARGET_LINK=10 npm run bench:apps
 *
 * The video is made with ffmpeg (Debian's package: `apt-get install ffmpeg`): ten seconds of
 * testsrc2 with noise encoded by x264, then looped 100 times with stream copy and `+faststart`.
 * Exits 1 when a target is missed (BENCH_NO_FAIL=1: 0). Not part of CI: it needs ffmpeg and a GB of disk.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import sharp from 'sharp';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { launchBrowser } from '../e2e/support/browser.ts';
import { startSkyferry, type RunningSkyferry } from '../e2e/support/server.ts';
import { quietShell } from '../e2e/support/shell.ts';
import { vmHwm } from './lib/measure.ts';

const DIR = process.env.BENCH_DIR ?? '/var/tmp/skyferry-bench-apps';
const VIDEO = 'movie.mp4';
const PICTURE = 'photo.jpg';
const SMALL = 'small.jpg';
const TARGETS = { videoBytes: 2 * 1000 * 1000, pictureGrowth: 50 * 1000 * 1000 };
const MB = 1000 * 1000;
/** The browser's links to the server the video is played over, Mbit/s (0: loopback, unthrottled). */
const LINKS = (process.env.BENCH_LINKS ?? '20,50,0').split(',').map(Number);
/** The link the video's target applies to. */
const TARGET_LINK = Number(process.env.BENCH_TARGET_LINK ?? 20);

function makeVideo(path: string): void {
  if (existsSync(path) && statSync(path).size > 1_000_000_000) return;
  try {
    execFileSync('ffmpeg', ['-version'], { stdio: 'ignore' });
  } catch {
    throw new Error('ffmpeg is needed to make the 1 GB video: apt-get install ffmpeg');
  }
  const seg = join(DIR, 'segment.mp4');
  const ff = (args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
  console.log('making the 1 GB video (ffmpeg)...');
  ff([
    ...['-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30:duration=10', '-vf', 'noise=alls=30:allf=t'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '8M', '-maxrate', '8M', '-bufsize', '8M'],
    ...['-pix_fmt', 'yuv420p', '-g', '60', seg],
  ]);
  ff(['-stream_loop', '99', '-i', seg, '-c', 'copy', '-movflags', '+faststart', path]);
}

async function makePicture(path: string): Promise<void> {
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#3080d0' } })
    .jpeg()
    .toFile(join(DIR, SMALL));
  if (existsSync(path)) return;
  console.log('making the 20 MB picture...');
  // Gaussian noise over a gradient: a photo's worth of detail, so the JPEG is as large as a camera's.
  const width = 6000;
  const height = 4000;
  const noise = await sharp({
    create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 56 } },
  })
    .raw()
    .toBuffer();
  await sharp(noise, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 93 })
    .toFile(path);
}

/**
 * A pass-through proxy in front of the server that counts the response bytes it forwards, by
 * request path, at most `rate` bytes a second over all its connections (one link). The server sends only as fast as
 * the proxy forwards.
 */
class CountingProxy {
  /** Paths requested since the last reset. */
  private readonly asked = new Set<string>();
  readonly ranges: string[] = [];
  /** Each chunk forwarded: when (epoch ms), for which path, how many bytes. */
  readonly log: Array<[number, string, number]> = [];
  private server!: Server;
  url = '';
  private readonly target: string;
  /** Bytes a second forwarded on each connection; 0: as fast as the browser reads. */
  rate = 0;
  private linkFreeAt = 0;

  constructor(target: string) {
    this.target = target;
  }

  async start(): Promise<void> {
    const upstream = new URL(this.target);
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0] as string;
      this.asked.add(path);
      if (req.headers.range) this.ranges.push(`${path} ${req.headers.range}`);
      const fwd = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.on('data', (c: Buffer) => {
            this.log.push([Date.now(), path, c.length]);
            if (!res.write(c)) up.pause();
            // One link of `rate` bytes a second for all connections: the next chunk waits until this one would have gone.
            const now = performance.now();
            this.linkFreeAt = this.rate ? Math.max(this.linkFreeAt, now) + (c.length / this.rate) * 1000 : now;
            const wait = this.linkFreeAt - now;
            if (wait > 0) {
              up.pause();
              setTimeout(() => res.writableNeedDrain || up.resume(), wait);
            }
          });
          res.on('drain', () => performance.now() >= this.linkFreeAt && up.resume());
          up.on('end', () => res.end());
        },
      );
      fwd.on('error', () => res.destroy());
      res.on('close', () => fwd.destroy());
      req.pipe(fwd);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Bytes sent until `at` (epoch ms) for requests made since the last reset whose paths match. */
  bytesAt(match: RegExp, at = Infinity): number {
    let n = 0;
    for (const [t, p, b] of this.log) if (t <= at && this.asked.has(p) && match.test(p)) n += b;
    return n;
  }

  /** When the first byte of a path that matches went out since the last reset (epoch ms). */
  firstByte(match: RegExp): number {
    return this.log.find(([, p]) => this.asked.has(p) && match.test(p))?.[0] ?? 0;
  }

  reset(): void {
    this.asked.clear();
    this.ranges.length = 0;
    this.log.length = 0;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

async function openFile(page: Page, base: string, name: string): Promise<Frame> {
  await page.goto(`${base}/manage/explorer?cloud_index=0&is_open=1&_=${Date.now()}`);
  const row = page.locator(`[data-testid="file-row"][data-name="${name}"]`).first();
  await row.dblclick();
  await page.waitForURL(/\/ecology\/app\?app_id=1-/);
  const shown = page.getByTestId('app-frame').filter({ visible: true });
  await shown.waitFor();
  const key = await shown.getAttribute('data-app-key');
  const frame = await (await page.locator(`[data-app-key="${key}"]`).elementHandle())?.contentFrame();
  if (!frame) throw new Error('no app frame');
  await frame.waitForURL(/\/apps\/viewer\.html/);
  return frame;
}

function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

interface VideoFigures {
  bytes: number;
  ms: number;
  requests: string[];
}

async function video(page: Page, proxy: CountingProxy): Promise<VideoFigures> {
  proxy.reset();
  const viewer = await openFile(page, proxy.url, VIDEO);
  const el = viewer.getByTestId('viewer-media');
  await el.waitFor();
  // The init script pressed play once the metadata was in, and noted when `playing` fired.
  const until = Date.now() + 60_000;
  const playedAt = () => viewer.evaluate(() => (globalThis as { __playingAt?: number }).__playingAt ?? 0);
  let playingAt = await playedAt();
  while (!playingAt) {
    if (Date.now() > until) throw new Error('the video did not play');
    await new Promise((r) => setTimeout(r, 50));
    playingAt = await playedAt();
  }
  const figures = {
    bytes: proxy.bytesAt(/\/content$/, playingAt),
    ms: playingAt - proxy.firstByte(/\/content$/),
    requests: proxy.ranges.filter((r) => r.includes('/content')),
  };
  return figures;
}

interface PictureFigures {
  /** The API process's RSS before, and its peak while the Viewer showed the picture and while the thumbnails were made. */
  before: number;
  viewerPeak: number;
  thumbsPeak: number;
  viewerBytes: number;
  thumbs: string[];
}

async function picture(
  page: Page,
  proxy: CountingProxy,
  server: RunningSkyferry,
  token: string,
  cloudId: string,
): Promise<PictureFigures> {
  const pid = server.child.pid as number;
  const thumbnail = async (path: string, size: number) => {
    const res = await fetch(
      `${server.url}/api/cloud-manager/thumbnail?cloud_id=${cloudId}&path=${encodeURIComponent(path)}&size=${size}`,
      { headers: { 'x-temp-authorization': token } },
    );
    const body = Buffer.from(await res.arrayBuffer());
    const meta = await sharp(body).metadata();
    return `${size} px: ${res.status} ${res.headers.get('content-type')} ${meta.width}x${meta.height}, ${body.length} B`;
  };
  // The photos grid has made a thumbnail before: libvips is loaded (its code counts in the RSS once).
  await thumbnail(`/${SMALL}`, 256);
  // Settle: what the video left in flight ends, then the peak is reset to now.
  await new Promise((r) => setTimeout(r, 3000));
  const before = rss(pid);
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  proxy.reset();
  const viewer = await openFile(page, proxy.url, PICTURE);
  const img = viewer.getByTestId('viewer-picture');
  await img.waitFor();
  const drawn = () =>
    img.evaluate((el: { complete: boolean; naturalWidth: number }) => el.complete && el.naturalWidth > 0);
  const until = Date.now() + 60_000;
  while (!(await drawn())) {
    if (Date.now() > until) throw new Error('the picture did not show');
    await new Promise((r) => setTimeout(r, 100));
  }
  const viewerBytes = proxy.bytesAt(/\/content$/);
  const viewerPeak = vmHwm(pid) ?? 0;
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  const thumbs = [await thumbnail(`/${PICTURE}`, 256), await thumbnail(`/${PICTURE}`, 512)];
  return { before, viewerPeak, thumbsPeak: vmHwm(pid) ?? 0, viewerBytes, thumbs };
}

/** A new visitor with the WebDAV cloud connected: its token and the cloud's id. */
async function visitor(server: RunningSkyferry, dav: RcloneServer): Promise<{ token: string; cloudId: string }> {
  const token = ((await (await fetch(`${server.url}/api/token`)).json()) as { data: { access_token: string } }).data
    .access_token;
  const res = await fetch(`${server.url}/api/clouds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-temp-authorization': token },
    body: JSON.stringify({
      cloud_name: 'webdav',
      alias: 'Media',
      credentials: { url: dav.url, username: dav.username, password: dav.password },
    }),
  });
  const out = (await res.json()) as { code: number; msg: string; data: { id: string } };
  if (out.code !== 0) throw new Error(`connect failed: ${out.msg}`);
  return { token, cloudId: out.data.id };
}

/** The visitor's token in the page's storage, the shell's first-visit prompts closed, and a note of when a video first plays. */
async function prepare(context: BrowserContext, token: string): Promise<void> {
  await quietShell(context);
  // In every frame: when a media element first starts playing (media events reach a capturing document).
  await context.addInitScript(() => {
    const g = globalThis as unknown as {
      __playingAt?: number;
      document?: { addEventListener(e: string, f: (e: { target: unknown }) => void, capture: boolean): void };
    };
    g.document?.addEventListener('playing', () => (g.__playingAt ??= Date.now()), true);
    // The user presses play as soon as the player knows the video (muted: no gesture needed headless).
    g.document?.addEventListener(
      'loadedmetadata',
      (e: { target: unknown }) => {
        const media = e.target as { muted: boolean; play(): Promise<void> };
        media.muted = true;
        void media.play().catch(() => undefined);
      },
      true,
    );
  });
  await context.addInitScript((t: string) => {
    if ((globalThis as { top?: unknown }).top === globalThis)
      localStorage.setItem('skyferry.temp_token', JSON.stringify(t));
  }, token);
}

async function main(): Promise<void> {
  const dist = resolve(import.meta.dirname, '../apps/web/dist/apps/viewer.html');
  if (!existsSync(dist)) throw new Error(`No built web app at ${dist}: run \`npm run build -w @skyferry/web\` first.`);
  mkdirSync(DIR, { recursive: true });
  makeVideo(join(DIR, VIDEO));
  await makePicture(join(DIR, PICTURE));
  let dav: RcloneServer | undefined;
  let server: RunningSkyferry | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let proxy: CountingProxy | undefined;
  try {
    dav = await startRcloneServe('webdav', { dir: DIR });
    server = await startSkyferry({ LOG_LEVEL: 'error' });
    proxy = new CountingProxy(server.url);
    await proxy.start();
    browser = await launchBrowser();
    const { token, cloudId } = await visitor(server, dav);
    // A new context for each file: the header's app tabs of one (a playing video) are not reopened in the next.
    const fresh = async (): Promise<Page> => {
      await context?.close();
      context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 800 } });
      await prepare(context, token);
      return context.newPage();
    };
    const videos: Array<[number, VideoFigures]> = [];
    for (const mbit of LINKS) {
      proxy.rate = (mbit * 1000 * 1000) / 8;
      videos.push([mbit, await video(await fresh(), proxy)]);
    }
    proxy.rate = 0;
    const p = await picture(await fresh(), proxy, server, token, cloudId);
    await context?.close();
    context = undefined;
    const videoSize = statSync(join(DIR, VIDEO)).size;
    const pictureSize = statSync(join(DIR, PICTURE)).size;
    const growth = Math.max(p.viewerPeak, p.thumbsPeak) - p.before;
    console.log(`\nApps benchmark (load average ${loadavg()[0]?.toFixed(2)})\n`);
    console.log('| measure | figure | target |');
    console.log('| --- | --- | --- |');
    for (const [mbit, v] of videos)
      console.log(
        `| video (${(videoSize / MB).toFixed(0)} MB MP4), ${mbit ? `a ${mbit} Mbit/s link` : 'loopback, unthrottled'}: bytes of the file sent until \`playing\` | ${(v.bytes / MB).toFixed(2)} MB, playing ${Math.round(v.ms)} ms after its first byte | ${mbit === TARGET_LINK ? '< 2 MB' : ''} |`,
      );
    console.log(
      `| picture (${(pictureSize / MB).toFixed(1)} MB JPEG) in the Viewer and its 256/512 px thumbnails: API process memory growth | ${(growth / MB).toFixed(1)} MB (RSS ${(p.before / MB).toFixed(0)} MB before; peak ${(p.viewerPeak / MB).toFixed(0)} MB in the Viewer, ${(p.thumbsPeak / MB).toFixed(0)} MB making the thumbnails) | < 50 MB |`,
    );
    console.log('');
    for (const [mbit, v] of videos) console.log(`video requests (${mbit || 'loopback'}): ${v.requests.join('; ')}`);
    console.log(`picture: Viewer fetched ${(p.viewerBytes / MB).toFixed(1)} MB; thumbnails ${p.thumbs.join('; ')}`);
    const target = videos.find(([mbit]) => mbit === TARGET_LINK)?.[1];
    const missed: string[] = [];
    if (target && target.bytes >= TARGETS.videoBytes) missed.push('video bytes until playing');
    if (growth >= TARGETS.pictureGrowth) missed.push('memory growth opening the picture');
    if (missed.length) {
      console.log(`\nmissed: ${missed.join(', ')}`);
      if (process.env.BENCH_NO_FAIL !== '1') process.exitCode = 1;
    }
  } finally {
    await context?.close();
    await browser?.close();
    await proxy?.stop();
    await server?.stop();
    await dav?.stop();
  }
}

await main();

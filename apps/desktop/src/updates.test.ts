import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
  type Server,
} from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DesktopUpdateState } from '@skyferry/contract';
import { DebUpdater } from 'electron-updater';
import type { AppAdapter } from 'electron-updater/out/AppAdapter.js';
import { ElectronHttpExecutor } from 'electron-updater/out/electronHttpExecutor.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UpdateController } from './updates.ts';

// The update check against a real update feed: a loopback HTTP server laid out as electron-builder
// publishes to a generic provider (latest.yml for Windows, latest-mac.yml, latest-linux.yml, and
// the installers), read by electron-updater's own updater (the Linux .deb one on this machine),
// driven by the controller the shell uses.

interface Feed {
  url: string;
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  set(release: { version: string; mandatory?: boolean; notes?: string; corrupt?: boolean } | 'down'): void;
  close(): Promise<void>;
}

const INSTALLER = Buffer.alloc(3 * 1024 * 1024, 7);

async function startFeed(): Promise<Feed> {
  let release: Parameters<Feed['set']>[0] = 'down';
  const requests: Feed['requests'] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, headers: req.headers });
    if (release === 'down') {
      res.writeHead(503).end('maintenance');
      return;
    }
    const name = `Skyferry-${release.version}`;
    if (/^\/latest(-mac|-linux)?\.yml$/.test(path)) {
      const sha512 = createHash('sha512').update(INSTALLER).digest('base64');
      const files = ['exe', 'dmg', 'deb', 'AppImage']
        .map((ext) => `  - url: ${name}.${ext}\n    sha512: ${sha512}\n    size: ${INSTALLER.length}\n`)
        .join('');
      res
        .writeHead(200, { 'content-type': 'text/yaml' })
        .end(
          `version: ${release.version}\nfiles:\n${files}path: ${name}.exe\nsha512: ${sha512}\n` +
            `releaseDate: '2026-11-20T10:00:00.000Z'\n` +
            (release.notes ? `releaseNotes: ${JSON.stringify(release.notes)}\n` : '') +
            (release.mandatory ? 'mandatory: true\n' : ''),
        );
      return;
    }
    if (path.startsWith(`/${name}.`)) {
      const body = release.corrupt ? Buffer.alloc(INSTALLER.length, 1) : INSTALLER;
      res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' });
      // Two halves, so the download reports progress on the way.
      res.write(body.subarray(0, body.length / 2));
      setTimeout(() => res.end(body.subarray(body.length / 2)), 50);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    set: (r) => {
      release = r;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** electron-updater's HTTP (downloads, checksums, progress) over Node's http instead of Electron's net module. */
class NodeNetExecutor extends ElectronHttpExecutor {
  constructor() {
    super(undefined);
  }
  // The base class types its requests as Electron's; Node's carry the same events the download uses.
  override createRequest(options: RequestOptions, callback: (response: IncomingMessage) => void) {
    return request(options, callback) as unknown as ReturnType<ElectronHttpExecutor['createRequest']>;
  }
}

let feed: Feed;
let dir: string;

beforeEach(async () => {
  feed = await startFeed();
  dir = mkdtempSync(join(tmpdir(), 'sf-updates-'));
});
afterEach(async () => {
  await feed.close();
  rmSync(dir, { recursive: true, force: true });
});

function controllerFor(version: string) {
  const app: AppAdapter = {
    version,
    name: 'Skyferry',
    isPackaged: true,
    appUpdateConfigPath: join(dir, 'app-update.yml'),
    userDataPath: join(dir, 'user'),
    baseCachePath: join(dir, 'cache'),
    whenReady: () => Promise.resolve(),
    relaunch: () => undefined,
    quit: () => undefined,
    onQuit: () => undefined,
  };
  // What electron-builder writes into an installed app's resources for a generic feed.
  writeFileSync(
    app.appUpdateConfigPath,
    `provider: generic\nurl: ${feed.url}\nupdaterCacheDirName: skyferry-updater\n`,
  );
  const updater = new DebUpdater(null, app);
  updater.logger = null;
  // Outside Electron (set before the feed is configured, which captures it).
  Object.assign(updater, { httpExecutor: new NodeNetExecutor() });
  updater.setFeedURL({ provider: 'generic', url: feed.url });
  const installs = vi.fn();
  updater.quitAndInstall = installs;
  const states: DesktopUpdateState[] = [];
  const controller = new UpdateController({ updater, currentVersion: version, onState: (s) => states.push(s) });
  return { controller, states, installs };
}

describe('update check over electron-updater and a generic feed', () => {
  it('shows a new version, downloads it with progress and installs it at once', async () => {
    feed.set({ version: '1.2.0', notes: 'Faster transfers.' });
    const { controller, states, installs } = controllerFor('1.0.0');

    const info = await controller.check();
    expect(info).toEqual({
      step: 'info',
      version: '1.2.0',
      size: INSTALLER.length,
      releaseDate: '2026-11-20T10:00:00.000Z',
      notes: 'Faster transfers.',
      mandatory: false,
    });
    expect(states[0]).toEqual({ step: 'loading' });
    expect(feed.requests.some((r) => r.path === '/latest-linux.yml')).toBe(true);

    const done = await controller.download();
    expect(done).toEqual({ step: 'downloaded', version: '1.2.0', mandatory: false });
    const steps = states.map((s) => s.step);
    expect(steps.slice(steps.indexOf('downloading'))).toContain('downloaded');
    const percents = states.flatMap((s) => (s.step === 'downloading' ? [s.percent] : []));
    expect(percents[0]).toBe(0);
    expect(Math.max(...percents)).toBeGreaterThan(0);
    expect(installs).toHaveBeenCalledWith(false, true);
  });

  it('says "latest" when the feed has the installed version', async () => {
    feed.set({ version: '1.0.0' });
    const { controller } = controllerFor('1.0.0');
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
  });

  it('shows "latest" when the check fails', async () => {
    feed.set('down');
    const { controller, states } = controllerFor('1.0.0');
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
    expect(states.map((s) => s.step)).toEqual(['loading', 'latest']);
  });

  it('offers retry when the download fails its checksum, and retry succeeds once the file is right', async () => {
    feed.set({ version: '1.3.0', corrupt: true });
    const { controller, installs } = controllerFor('1.0.0');
    await controller.check();
    expect(await controller.download()).toEqual({ step: 'retry', version: '1.3.0', mandatory: false });
    expect(installs).not.toHaveBeenCalled();
    feed.set({ version: '1.3.0' });
    expect((await controller.download()).step).toBe('downloaded');
    expect(installs).toHaveBeenCalledTimes(1);
  });

  it('marks a version the feed calls mandatory, and a check during the upgrade keeps the upgrade', async () => {
    feed.set({ version: '2.0.0', mandatory: true });
    const { controller } = controllerFor('1.0.0');
    expect(await controller.check()).toMatchObject({ step: 'info', version: '2.0.0', mandatory: true });
    const downloading = controller.download();
    // Opening the modal again mid-upgrade shows the upgrade, without asking the feed again.
    const checks = feed.requests.filter((r) => r.path.endsWith('.yml')).length;
    expect((await controller.check()).step).toBe('downloading');
    expect(feed.requests.filter((r) => r.path.endsWith('.yml')).length).toBe(checks);
    expect(await downloading).toEqual({ step: 'downloaded', version: '2.0.0', mandatory: true });
  });

  it('answers "latest" when no feed is configured', async () => {
    const states: DesktopUpdateState[] = [];
    const controller = new UpdateController({ updater: null, currentVersion: '1.0.0', onState: (s) => states.push(s) });
    expect(await controller.check()).toEqual({ step: 'latest', version: '1.0.0' });
    expect(await controller.download()).toEqual({ step: 'latest', version: '1.0.0' });
  });
});

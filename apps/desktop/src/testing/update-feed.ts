import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
  type Server,
} from 'node:http';
import { join } from 'node:path';
import { DebUpdater } from 'electron-updater';
import type { AppAdapter } from 'electron-updater/out/AppAdapter.js';
import { ElectronHttpExecutor } from 'electron-updater/out/electronHttpExecutor.js';

/**
 * For tests: an update feed on loopback laid out as electron-builder publishes to a generic
 * provider (latest.yml for Windows, latest-mac.yml, latest-linux.yml, and the installers), and
 * electron-updater's own updater reading it outside Electron (the Linux .deb one).
 */

export interface Feed {
  url: string;
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  set(release: { version: string; mandatory?: boolean; notes?: string; corrupt?: boolean } | 'down'): void;
  close(): Promise<void>;
}

export const INSTALLER = Buffer.alloc(3 * 1024 * 1024, 7);

export async function startUpdateFeed(): Promise<Feed> {
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

/**
 * electron-updater's updater for an installed app of `version` whose resources name `feedUrl`
 * (what electron-builder writes into app-update.yml); its quitAndInstall is the caller's.
 */
export function realUpdater(feedUrl: string, version: string, dir: string, quitAndInstall: () => void): DebUpdater {
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
  writeFileSync(app.appUpdateConfigPath, `provider: generic\nurl: ${feedUrl}\nupdaterCacheDirName: skyferry-updater\n`);
  const updater = new DebUpdater(null, app);
  updater.logger = null;
  // Outside Electron (set before the feed is configured, which captures it).
  Object.assign(updater, { httpExecutor: new NodeNetExecutor() });
  updater.setFeedURL({ provider: 'generic', url: feedUrl });
  updater.quitAndInstall = quitAndInstall;
  return updater;
}

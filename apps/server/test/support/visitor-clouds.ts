import type { Cloud, Envelope } from '@skyferry/contract';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import type { TestApp } from './app.ts';

/**
 * Addresses on 127.0.0.1 are private: the server connects to them only when the operator allows
 * private networks, which tests that connect clouds to their own loopback servers do.
 */
export const LOOPBACK_CLOUDS_ENV: Record<string, string> = { SKYFERRY_ALLOW_PRIVATE_NETWORKS: 'true' };

let folders = 0;

/**
 * Real clouds a visitor can connect: visitors never get local folders, so their temporary clouds in
 * tests are folders of one `rclone serve webdav` on 127.0.0.1, each its own cloud (its own URL).
 */
export class VisitorClouds {
  readonly dav: RcloneServer;
  private constructor(dav: RcloneServer) {
    this.dav = dav;
  }

  static async start(): Promise<VisitorClouds> {
    return new VisitorClouds(await startRcloneServe('webdav'));
  }

  /** A fresh folder with the given files and empty folders, made through WebDAV (rclone caches listings); its URL. */
  async folder(files: Record<string, string> = {}, emptyFolders: string[] = []): Promise<string> {
    const url = `${this.dav.url}cloud-${++folders}-${process.pid}/`;
    const auth = {
      authorization: `Basic ${Buffer.from(`${this.dav.username}:${this.dav.password}`).toString('base64')}`,
    };
    const send = async (method: string, target: string, body?: string) => {
      const res = await fetch(target, { method, headers: auth, body });
      if (!res.ok) throw new Error(`${method} ${target}: ${res.status}`);
    };
    const made = new Set<string>();
    const mkdirs = async (rel: string) => {
      let at = '';
      for (const seg of rel.split('/').filter(Boolean)) {
        at += `${encodeURIComponent(seg)}/`;
        if (!made.has(at)) await send('MKCOL', url + at);
        made.add(at);
      }
    };
    await send('MKCOL', url);
    for (const [rel, content] of Object.entries(files)) {
      await mkdirs(rel.split('/').slice(0, -1).join('/'));
      await send('PUT', url + rel.split('/').map(encodeURIComponent).join('/'), content);
    }
    for (const rel of emptyFolders) await mkdirs(rel);
    return url;
  }

  /** Connects a folder (a fresh one unless `url` is given) as the caller of `headers`; throws unless it connects. */
  async connect(
    t: TestApp,
    headers: Record<string, string>,
    options: { alias?: string; url?: string; files?: Record<string, string>; emptyFolders?: string[] } = {},
  ): Promise<Cloud> {
    const url = options.url ?? (await this.folder(options.files, options.emptyFolders));
    const res = await this.tryConnect(t, headers, url, options.alias);
    if (res.code !== 0) throw new Error(`connecting ${url} failed: ${JSON.stringify(res)}`);
    return res.data;
  }

  /** POST /api/clouds for a folder of this server: the envelope as answered. */
  async tryConnect(t: TestApp, headers: Record<string, string>, url: string, alias?: string): Promise<Envelope<Cloud>> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/clouds',
      headers,
      payload: {
        cloud_name: 'webdav',
        ...(alias === undefined ? {} : { alias }),
        credentials: { url, username: this.dav.username, password: this.dav.password },
      },
    });
    return JSON.parse(res.body) as Envelope<Cloud>;
  }

  stop(): Promise<void> {
    return this.dav.stop();
  }
}

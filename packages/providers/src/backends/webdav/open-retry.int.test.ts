import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startApacheWebdav,
  startNextcloudEmulator,
  startRcloneServe,
  type NextcloudEmulator,
  type WebdavServer,
} from '@skyferry/testing';
import { errorCode } from '../../testkit/index.ts';
import { openWebdav } from './webdav.ts';

/** Answers the next `left` requests of `method` (whose path matches) with `status` instead of passing them on. */
interface Stumble {
  method: string;
  status: number;
  left: number;
  path?: RegExp;
  /** Instead of answering: pass the request on, and drop the connection once the server has answered it (the answer is lost). */
  lose?: boolean;
}

interface StumblingProxy {
  /** The target's URL with the proxy's host and port. */
  url(pathname: string): string;
  /** Every request seen: method, path and the status answered (made up or the server's). */
  readonly seen: Array<{ method: string; path: string; status: number }>;
  close(): Promise<void>;
}

/**
 * A reverse proxy on 127.0.0.1 in front of a real WebDAV server that answers a planned few
 * requests with an error of its own (a server restarting, a balancer without a backend for a
 * moment) and passes everything else through unchanged, Host header included.
 */
async function startStumblingProxy(target: URL, stumbles: Stumble[]): Promise<StumblingProxy> {
  const seen: StumblingProxy['seen'] = [];
  const agent = new Agent({ keepAlive: true });
  const server: Server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const s = stumbles.find((x) => x.left > 0 && x.method === method && (!x.path || x.path.test(path)));
    if (s?.lose) {
      s.left -= 1;
      const up = request(
        { host: target.hostname, port: Number(target.port), method, path, headers: req.headers, agent },
        (r) => {
          seen.push({ method, path, status: r.statusCode ?? 0 });
          r.resume();
          r.on('end', () => res.socket?.destroy());
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
      return;
    }
    if (s) {
      s.left -= 1;
      req.resume();
      req.on('end', () => {
        seen.push({ method, path, status: s.status });
        res.writeHead(s.status, { 'content-type': 'text/plain' }).end(`injected ${s.status}\n`);
      });
      return;
    }
    const up = request(
      { host: target.hostname, port: Number(target.port), method, path, headers: req.headers, agent },
      (r) => {
        seen.push({ method, path, status: r.statusCode ?? 0 });
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    seen,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('webdav: opening a cloud while the server briefly answers 5xx', () => {
  let proxy: StumblingProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  describe('generic server (Apache mod_dav)', () => {
    let apache: WebdavServer;
    beforeAll(async () => {
      apache = await startApacheWebdav();
    });
    afterAll(async () => {
      await apache?.stop();
    });

    it('retries the first PROPFIND after a 503 and a 500, then opens and works', async () => {
      proxy = await startStumblingProxy(new URL(apache.url), [
        { method: 'PROPFIND', status: 503, left: 1 },
        { method: 'PROPFIND', status: 500, left: 1 },
      ]);
      const dav = await openWebdav({ url: proxy.url('/'), username: apache.username, password: apache.password });
      try {
        const propfinds = proxy.seen.filter((r) => r.method === 'PROPFIND').map((r) => r.status);
        expect(propfinds.slice(0, 3)).toEqual([503, 500, 207]);
        await dav.put('/after-retry.txt', Readable.from([Buffer.from('ok')]), { size: 2 });
        expect((await dav.list('/')).entries.map((e) => e.name)).toContain('after-retry.txt');
      } finally {
        await dav.close();
      }
    });

    it('a write whose MOVE into place went through but whose answer was lost succeeds when the MOVE is sent again', async () => {
      proxy = await startStumblingProxy(new URL(apache.url), [{ method: 'MOVE', status: 0, left: 1, lose: true }]);
      const dav = await openWebdav({ url: proxy.url('/'), username: apache.username, password: apache.password });
      try {
        const body = Buffer.from('moved once, answered never');
        const entry = await dav.put('/lost-answer.txt', Readable.from([body]), { size: body.length });
        expect(entry.size).toBe(body.length);
        // The first MOVE was done by the server; the one sent again found its source gone.
        expect(proxy.seen.filter((r) => r.method === 'MOVE').map((r) => r.status)).toEqual([201, 404]);
        const names = (await dav.list('/')).entries.map((e) => e.name);
        expect(names).toContain('lost-answer.txt');
        expect(names.filter((n) => n.startsWith('.skyferry-tmp-'))).toEqual([]);
      } finally {
        await dav.close();
      }
    });

    it('gives up with a retryable server error when the server keeps failing', async () => {
      proxy = await startStumblingProxy(new URL(apache.url), [{ method: 'PROPFIND', status: 502, left: 1000 }]);
      const opening = openWebdav({ url: proxy.url('/'), username: apache.username, password: apache.password });
      expect(await errorCode(opening)).toBe('server');
      // The first attempt and the pacer's retries, then no more.
      const tries = proxy.seen.filter((r) => r.method === 'PROPFIND').length;
      expect(tries).toBeGreaterThan(1);
      expect(tries).toBeLessThanOrEqual(10);
    }, 60_000);
  });

  describe('rclone serve webdav', () => {
    let root = '';
    let rclone: Awaited<ReturnType<typeof startRcloneServe>> | undefined;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'skyferry-dav-'));
      rclone = await startRcloneServe('webdav', { dir: root });
    });
    afterAll(async () => {
      await rclone?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it('a MOVE into place done but whose answer was lost, sent again (412: the path is taken), leaves the file moved', async () => {
      const server = rclone as NonNullable<typeof rclone>;
      proxy = await startStumblingProxy(new URL(server.url), [{ method: 'MOVE', status: 0, left: 1, lose: true }]);
      const dav = await openWebdav({ url: proxy.url('/'), username: server.username, password: server.password });
      try {
        const body = Buffer.from('moved once by rclone, answered never');
        const entry = await dav.put('/lost-answer.txt', Readable.from([body]), { size: body.length });
        expect(entry.size).toBe(body.length);
        expect(proxy.seen.filter((r) => r.method === 'MOVE').map((r) => r.status)).toEqual([201, 412]);
        expect(readFileSync(join(root, 'lost-answer.txt'), 'utf8')).toBe(body.toString());
        expect(readdirSync(root).filter((n) => n.startsWith('.skyferry-tmp-'))).toEqual([]);
      } finally {
        await dav.close();
      }
    });
  });

  describe('Nextcloud (emulator)', () => {
    let nc: NextcloudEmulator;
    beforeAll(async () => {
      nc = await startNextcloudEmulator();
    });
    afterAll(async () => {
      await nc?.stop();
    });

    it('retries status.php and the first PROPFIND, so the server is still recognised as Nextcloud', async () => {
      const target = new URL(nc.url);
      proxy = await startStumblingProxy(target, [
        { method: 'GET', path: /\/status\.php$/, status: 503, left: 1 },
        { method: 'PROPFIND', status: 502, left: 1 },
      ]);
      const dav = await openWebdav({ url: proxy.url(target.pathname), username: nc.username, password: nc.password });
      try {
        expect(proxy.seen.filter((r) => r.path.endsWith('/status.php')).map((r) => r.status)).toEqual([503, 200]);
        expect(dav.vendor).toBe('nextcloud');
        expect(dav.features.chunkWriter).toBe(true);
        expect(dav.features.setModTime).toBe(true);
        expect((await dav.stat('/')).kind).toBe('dir');
      } finally {
        await dav.close();
      }
    });
  });
});

import { chmodSync, chownSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startApacheWebdav,
  startFaultyProxy,
  startRcloneServe,
  type FaultyProxy,
  type WebdavServer,
} from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { openWebdav, type WebdavProvider } from './webdav.ts';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const servers: Array<[string, () => Promise<WebdavServer>]> = [
  ['apache mod_dav', startApacheWebdav],
  ['rclone serve webdav', () => startRcloneServe('webdav')],
];

// Backend-specific behaviour; the shared conformance suite covers the rest.
describe.each(servers)('webdav on %s', (_name, start) => {
  let server: WebdavServer;
  let dav: WebdavProvider;

  beforeAll(async () => {
    server = await start();
    dav = await openWebdav({ url: server.url, username: server.username, password: server.password });
  });
  afterAll(async () => {
    await dav?.close();
    await server?.stop();
  });

  it('detects a generic server and refuses a wrong password when opened', async () => {
    expect(dav.vendor).toBe('other');
    expect(dav.features.setModTime).toBe(false);
    const err = await openWebdav({ url: server.url, username: server.username, password: 'wrong' }).catch(
      (e: unknown) => e,
    );
    expect(ProviderError.is(err, 'auth_invalid')).toBe(true);
  });

  it('pages a listing the server returns in one answer, in name order, without repeats', async () => {
    await Promise.all(
      Array.from({ length: 45 }, (_, i) =>
        dav.put(`/paged/f${String(44 - i).padStart(2, '0')}`, Readable.from([Buffer.from('x')]), { size: 1 }),
      ),
    );
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await dav.list('/paged', { pageSize: 10, pageToken: token });
      names.push(...page.entries.map((e) => e.name));
      token = page.nextPageToken;
      pages += 1;
    } while (token);
    expect(pages).toBe(5);
    expect(names).toEqual(Array.from({ length: 45 }, (_, i) => `f${String(i).padStart(2, '0')}`));
  });

  it('uploads under a hidden name and moves into place: a cancelled upload leaves nothing', async () => {
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(256 * 1024, 1));
    setTimeout(() => ac.abort(), 150);
    const err = await dav
      .put('/cancelled/big.bin', body, { size: 50 * 1024 * 1024 }, { signal: ac.signal })
      .catch((e: unknown) => e);
    expect(ProviderError.is(err, 'canceled')).toBe(true);
    const page = await dav.list('/cancelled');
    expect(page.entries).toEqual([]);
  });

  it('writes racing onto one path all land (a MOVE raced by another write is tried again), no temporary file left', async () => {
    // Apache answered about 1 in 40 of these MOVEs 404 or 403 before the retry.
    for (let round = 0; round < 80; round++) {
      const versions = [0, 1, 2, 3].map((i) => Buffer.alloc(3000 + i, 40 + i));
      const settled = await Promise.allSettled(
        versions.map((v) => dav.put(`/race/r${round % 4}.bin`, Readable.from([v]), { size: v.length })),
      );
      expect(settled.filter((r) => r.status === 'rejected')).toEqual([]);
      const final = await readAll(await dav.openRead(`/race/r${round % 4}.bin`));
      expect(versions.some((v) => v.equals(final))).toBe(true);
    }
    // On the server's disk, not through the listing (which hides temporary names).
    expect(readdirSync(join(server.dir, 'race')).sort()).toEqual(['r0.bin', 'r1.bin', 'r2.bin', 'r3.bin']);
  }, 60_000);

  it('reads ranges and percent-encodes names with spaces, unicode and reserved characters', async () => {
    const name = 'a b#?%&+ü€ 日本.txt';
    await dav.put(`/enc/${name}`, Readable.from([Buffer.from('0123456789')]), { size: 10 });
    const listed = await dav.list('/enc');
    expect(listed.entries.map((e) => e.name)).toEqual([name]);
    expect((await readAll(await dav.openRead(`/enc/${name}`, { range: { start: 3, end: 5 } }))).toString()).toBe('345');
    expect((await readAll(await dav.openRead(`/enc/${name}`, { range: { start: 8 } }))).toString()).toBe('89');
  });

  it('maps folder/file mix-ups to the right codes', async () => {
    await dav.put('/mix/file.txt', Readable.from([Buffer.from('x')]), { size: 1 });
    const code = async (p: Promise<unknown>) => ((await p.catch((e: unknown) => e)) as ProviderError).code;
    expect(await code(dav.remove('/mix'))).toBe('is_dir');
    expect(await code(dav.rmdir('/mix/file.txt'))).toBe('not_dir');
    expect(await code(dav.list('/mix/file.txt'))).toBe('not_dir');
    expect(await code(dav.openRead('/mix'))).toBe('is_dir');
    expect(await code(dav.mkdir('/mix/file.txt'))).toBe('exists');
    expect(await code(dav.stat('/mix/none'))).toBe('not_found');
  });
});

describe('webdav through a struggling server (faulty proxy in front of Apache)', () => {
  let server: WebdavServer;
  let proxy: FaultyProxy;
  let dav: WebdavProvider;

  beforeAll(async () => {
    server = await startApacheWebdav();
    const target = new URL(server.url);
    proxy = await startFaultyProxy({
      target: { host: target.hostname, port: Number(target.port) },
      errorRate: 0.3,
      resetRate: 0,
      retryAfterSeconds: 0,
      seed: 7,
    });
    proxy.setEnabled(false);
    dav = await openWebdav({
      url: `http://${proxy.host}:${proxy.port}/`,
      username: server.username,
      password: server.password,
    });
  });
  afterAll(async () => {
    await dav?.close();
    await proxy?.stop();
    await server?.stop();
  });

  it('retries 500, 503 and 429 answers of requests it can repeat, through the pacer', async () => {
    await dav.put('/f/a.txt', Readable.from([Buffer.from('abc')]), { size: 3 });
    proxy.setEnabled(true);
    await dav.mkdir('/f/x/y/z');
    for (let i = 0; i < 5; i += 1) {
      expect((await dav.stat('/f/a.txt')).size).toBe(3);
      expect((await dav.list('/f')).entries.map((e) => e.name)).toEqual(['a.txt', 'x']);
    }
    const c = await dav.copy(await dav.stat('/f/a.txt'), '/f/x/b.txt');
    expect(c.size).toBe(3);
    await dav.rename('/f/x/b.txt', 'c.txt');
    await dav.rmdir('/f/x');
    proxy.setEnabled(false);
    expect((await dav.list('/f')).entries.map((e) => e.name)).toEqual(['a.txt']);
    expect(Object.values(proxy.stats.errors).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
  });
});

describe('webdav on Apache: a write refused before its body is sent', () => {
  let server: WebdavServer;
  let dav: WebdavProvider;

  beforeAll(async () => {
    server = await startApacheWebdav();
    dav = await openWebdav({ url: server.url, username: server.username, password: server.password });
  });
  afterAll(async () => {
    await dav?.close();
    await server?.stop();
  });

  it('gives up the connection at once, so more refused writes than sockets do not block the next request', async () => {
    // A folder the server may not write into: mod_dav answers 500 as soon as it has the headers.
    await dav.mkdir('/locked');
    const locked = join(server.dir, 'locked');
    if (process.getuid?.() === 0) chownSync(locked, 0, 0);
    chmodSync(locked, 0o555);
    // Bodies whose every byte is there but whose end comes later, as from another cloud: the
    // answer arrives first. The body is the transfer's source: refusing the write closes it too.
    const sources: Readable[] = [];
    const refused = await Promise.all(
      Array.from({ length: 24 }, (_, i) => {
        const body = new Readable({ read() {} });
        sources.push(body);
        body.push(Buffer.from('locked\n'));
        setTimeout(() => body.push(null), 2000);
        return dav.put(`/locked/f${i}.txt`, body, { size: 7 }).catch((e: unknown) => e);
      }),
    );
    for (const err of refused) {
      expect(ProviderError.is(err, 'server')).toBe(true);
      expect((err as Error).message).toMatch(/HTTP 500/);
    }
    expect(sources.every((s) => s.destroyed)).toBe(true);
    // The agent has 16 sockets and Apache waits 120 s for a missing body: a request stuck behind
    // them would wait that long.
    const next = dav.put('/open/ok.txt', Readable.from([Buffer.from('fine')]), { size: 4 });
    const outcome = await Promise.race([
      next.then((e) => e.size),
      new Promise((r) => setTimeout(() => r('stuck behind the refused writes'), 15_000)),
    ]);
    expect(outcome).toBe(4);
    chmodSync(locked, 0o755);
  }, 60_000);
});

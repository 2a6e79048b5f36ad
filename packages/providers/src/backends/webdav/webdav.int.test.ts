import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  giveToServer,
  startApacheWebdav,
  startFaultyProxy,
  startRcloneServe,
  type FaultyProxy,
  type FaultyProxyOptions,
  type WebdavServer,
} from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { WEBDAV_STALE_TEMP_MS, WEBDAV_TEMP_PREFIX, openWebdav, type WebdavProvider } from './webdav.ts';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Apache with the faulty proxy in front and a provider talking through it, for one describe. */
function apacheBehindProxy(faults: Omit<FaultyProxyOptions, 'target'>) {
  const fx = {} as { server: WebdavServer; proxy: FaultyProxy; dav: WebdavProvider };
  beforeAll(async () => {
    fx.server = await startApacheWebdav();
    const target = new URL(fx.server.url);
    fx.proxy = await startFaultyProxy({ target: { host: target.hostname, port: Number(target.port) }, ...faults });
    const via = new URL(fx.server.url);
    via.host = `${fx.proxy.host}:${fx.proxy.port}`;
    fx.dav = await openWebdav({ url: via.href, username: fx.server.username, password: fx.server.password });
  });
  afterAll(async () => {
    await fx.dav?.close();
    await fx.proxy?.stop();
    await fx.server?.stop();
  });
  return fx;
}

const servers: Array<[string, () => Promise<WebdavServer>]> = [
  ['apache mod_dav', startApacheWebdav],
  ['rclone serve webdav', () => startRcloneServe('webdav')],
];

// Backend-specific behaviour; the shared conformance suite covers the rest.
describe.each(servers)('webdav on %s', (name, start) => {
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

  // rclone's directory cache hides files made on its disk directly; Apache reads the disk.
  if (name === 'apache mod_dav') {
    it('removes the temporary files a cut-off upload left, once stale, when their folder is listed or written to', async () => {
      const stale = `${WEBDAV_TEMP_PREFIX}0123456789abcdef`;
      const fresh = `${WEBDAV_TEMP_PREFIX}fedcba9876543210`;
      const notOurs = `${WEBDAV_TEMP_PREFIX}not-ours`;
      const folder = `${WEBDAV_TEMP_PREFIX}00000000000000aa`;
      const old = new Date(Date.now() - 3 * WEBDAV_STALE_TEMP_MS);
      const age = (path: string) => utimesSync(path, old, old);
      const leave = (dir: string, name: string, aged: boolean) => {
        writeFileSync(join(server.dir, dir, name), 'partial upload');
        giveToServer(join(server.dir, dir, name));
        if (aged) age(join(server.dir, dir, name));
      };
      const temps = (dir: string) => readdirSync(join(server.dir, dir)).filter((n) => n.startsWith(WEBDAV_TEMP_PREFIX));
      await dav.mkdir('/left');
      await dav.put('/left/kept.txt', Readable.from([Buffer.from('k')]), { size: 1 });
      leave('left', stale, true);
      leave('left', fresh, false);
      leave('left', notOurs, true);
      mkdirSync(join(server.dir, 'left', folder));
      giveToServer(join(server.dir, 'left', folder));
      age(join(server.dir, 'left', folder));
      // An upload of this process still writing: its temporary file is kept, however old it looks.
      const w = await (dav.openChunkWriter as NonNullable<typeof dav.openChunkWriter>)('/left/slow.bin', { size: 6 });
      await w.writeChunk(0, Buffer.from('abcdef'));
      const [active] = temps('left').filter((n) => ![stale, fresh, notOurs, folder].includes(n));
      expect(active).toMatch(/^\.skyferry-tmp-[0-9a-f]{16}$/);
      age(join(server.dir, 'left', active!));
      // Only the exact names temporary files get are hidden: a user's file with the prefix is listed.
      expect((await dav.list('/left')).entries.map((e) => e.name)).toEqual([notOurs, 'kept.txt']);
      expect(readdirSync(join(server.dir, 'left')).sort()).toEqual([active, fresh, notOurs, folder, 'kept.txt'].sort());
      expect((await w.close()).size).toBe(6);
      // A write into a folder (left by an earlier run, not made by this process) sweeps it too.
      mkdirSync(join(server.dir, 'left2'));
      giveToServer(join(server.dir, 'left2'));
      leave('left2', stale, true);
      await dav.put('/left2/new.txt', Readable.from([Buffer.from('n')]), { size: 1 });
      expect(readdirSync(join(server.dir, 'left2'))).toEqual(['new.txt']);
    });
  }
});

describe('webdav through a struggling server (faulty proxy in front of Apache)', () => {
  const fx = apacheBehindProxy({ errorRate: 0.3, resetRate: 0, retryAfterSeconds: 0, seed: 7 });
  beforeAll(() => fx.proxy.setEnabled(false));

  it('retries 500, 503 and 429 answers of requests it can repeat, through the pacer', async () => {
    await fx.dav.put('/f/a.txt', Readable.from([Buffer.from('abc')]), { size: 3 });
    fx.proxy.setEnabled(true);
    await fx.dav.mkdir('/f/x/y/z');
    for (let i = 0; i < 5; i += 1) {
      expect((await fx.dav.stat('/f/a.txt')).size).toBe(3);
      expect((await fx.dav.list('/f')).entries.map((e) => e.name)).toEqual(['a.txt', 'x']);
    }
    const c = await fx.dav.copy(await fx.dav.stat('/f/a.txt'), '/f/x/b.txt');
    expect(c.size).toBe(3);
    await fx.dav.rename('/f/x/b.txt', 'c.txt');
    await fx.dav.rmdir('/f/x');
    fx.proxy.setEnabled(false);
    expect((await fx.dav.list('/f')).entries.map((e) => e.name)).toEqual(['a.txt']);
    expect(Object.values(fx.proxy.stats.errors).reduce((a, b) => a + b, 0)).toBeGreaterThan(3);
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

describe('webdav on Apache: the round trips of a write', () => {
  // No faults: the proxy only records what reaches the server.
  const fx = apacheBehindProxy({ errorRate: 0, resetRate: 0 });
  // Requests the proxy passed on since `from`, as "METHOD /path status" (the base path dropped).
  const since = (from: number) =>
    fx.proxy.stats.passed.slice(from).map((c) => c.replace(new URL(fx.server.url).pathname.replace(/\/$/, ''), ''));
  const code = async (p: Promise<unknown>) => ((await p.catch((e: unknown) => e)) as ProviderError).code;

  it('makes folders under one a look found missing from the top down, never asking for one whose parent is missing', async () => {
    expect(await code(fx.dav.stat('/fresh'))).toBe('not_found');
    let from = fx.proxy.stats.passed.length;
    await fx.dav.put('/fresh/a/b/file.txt', Readable.from([Buffer.from('hi')]), { size: 2 });
    expect(since(from).filter((c) => c.startsWith('MKCOL'))).toEqual([
      'MKCOL /fresh/ 201',
      'MKCOL /fresh/a/ 201',
      'MKCOL /fresh/a/b/ 201',
    ]);
    expect((await readAll(await fx.dav.openRead('/fresh/a/b/file.txt'))).toString()).toBe('hi');
    // Made meanwhile by someone else: the hint is wrong, the write still lands.
    expect(await code(fx.dav.stat('/later'))).toBe('not_found');
    const other = await openWebdav({ url: fx.server.url, username: fx.server.username, password: fx.server.password });
    await other.mkdir('/later');
    await other.close();
    from = fx.proxy.stats.passed.length;
    await fx.dav.put('/later/x/file.txt', Readable.from([Buffer.from('ok')]), { size: 2 });
    expect(since(from).filter((c) => c.startsWith('MKCOL'))).toEqual(['MKCOL /later/ 405', 'MKCOL /later/x/ 201']);
    expect((await readAll(await fx.dav.openRead('/later/x/file.txt'))).toString()).toBe('ok');
  });

  it('writes a new file with no look at its path first, and replaces an existing file after the move is refused', async () => {
    await fx.dav.mkdir('/moves');
    let from = fx.proxy.stats.passed.length;
    await fx.dav.put('/moves/f.txt', Readable.from([Buffer.from('one')]), { size: 3 });
    const fresh = since(from).map((c) => c.replace(/\/moves\/\.skyferry-tmp-\w+/, 'TMP'));
    expect(fresh).toEqual(['PUT TMP 201', 'MOVE TMP 201', 'PROPFIND /moves/f.txt 207']);
    from = fx.proxy.stats.passed.length;
    await fx.dav.put('/moves/f.txt', Readable.from([Buffer.from('two!')]), { size: 4 });
    const update = since(from).map((c) => c.replace(/\/moves\/\.skyferry-tmp-\w+/, 'TMP'));
    expect(update).toEqual([
      'PUT TMP 201',
      'MOVE TMP 412',
      'PROPFIND /moves/f.txt 207',
      expect.stringMatching(/^MOVE TMP 20[14]$/),
      'PROPFIND /moves/f.txt 207',
    ]);
    expect((await readAll(await fx.dav.openRead('/moves/f.txt'))).toString()).toBe('two!');
    expect(readdirSync(join(fx.server.dir, 'moves'))).toEqual(['f.txt']);
  });

  it('probes ranged writes on the upload’s own temporary file, which the ranges then fill: nothing to delete', async () => {
    const size = 8 * 1024 * 1024 + 10;
    const data = randomBytes(size);
    await fx.dav.mkdir('/big');
    const from = fx.proxy.stats.passed.length;
    const w = await (fx.dav.openChunkWriter as NonNullable<typeof fx.dav.openChunkWriter>)('/big/file.bin', { size });
    await w.writeChunk(1, data.subarray(w.chunkSize));
    await w.writeChunk(0, data.subarray(0, w.chunkSize));
    expect((await w.close()).size).toBe(size);
    const calls = since(from);
    const tmp = /PUT (\/big\/\.skyferry-tmp-\w+)/.exec(calls.join('\n'))?.[1];
    expect(tmp).toBeDefined();
    expect(calls.filter((c) => !c.startsWith('PROPFIND'))).toEqual([
      `PUT ${tmp} 201`, // "b" at byte 1
      `PUT ${tmp} 204`, // "a" at byte 0
      `GET ${tmp} 200`, // reads "ab"
      `PUT ${tmp} 204`,
      `PUT ${tmp} 204`,
      `MOVE ${tmp} 201`,
    ]);
    expect((await readAll(await fx.dav.openRead('/big/file.bin'))).equals(data)).toBe(true);
    expect(readdirSync(join(fx.server.dir, 'big'))).toEqual(['file.bin']);
  });

  it('probes beside an upload too small to cover the probe’s two bytes, and deletes that probe', async () => {
    // Straight to the server: an account (URL) not probed yet in this process.
    const direct = await openWebdav({ url: fx.server.url, username: fx.server.username, password: fx.server.password });
    try {
      await direct.mkdir('/tiny');
      const w = await (direct.openChunkWriter as NonNullable<typeof direct.openChunkWriter>)('/tiny/one.bin', {
        size: 1,
      });
      await w.writeChunk(0, Buffer.from('z'));
      expect((await w.close()).size).toBe(1);
      expect((await readAll(await direct.openRead('/tiny/one.bin'))).toString()).toBe('z');
      expect(readdirSync(join(fx.server.dir, 'tiny'))).toEqual(['one.bin']);
    } finally {
      await direct.close();
    }
  });

  it('finds a folder at the path by moving without overwriting: refused (is_dir), folder, files and no temporary file left', async () => {
    await fx.dav.mkdir('/taken/dir');
    await fx.dav.put('/taken/dir/keep.txt', Readable.from([Buffer.from('keep')]), { size: 4 });
    const from = fx.proxy.stats.passed.length;
    expect(await code(fx.dav.put('/taken/dir', Readable.from([Buffer.from('never')]), { size: 5 }))).toBe('is_dir');
    expect(
      since(from)
        .filter((c) => c.startsWith('MOVE'))
        .map((c) => c.replace(/\S+ (\d+)$/, '$1')),
    ).toEqual(['MOVE 412']);
    const size = 8 * 1024 * 1024 + 10;
    const data = randomBytes(size);
    const chunked = (async () => {
      const w = await (fx.dav.openChunkWriter as NonNullable<typeof fx.dav.openChunkWriter>)('/taken/dir', { size });
      try {
        await w.writeChunk(0, data.subarray(0, w.chunkSize));
        await w.writeChunk(1, data.subarray(w.chunkSize));
        return await w.close();
      } catch (err) {
        await w.abort();
        throw err;
      }
    })();
    expect(await code(chunked)).toBe('is_dir');
    expect(readdirSync(join(fx.server.dir, 'taken'))).toEqual(['dir']);
    expect(readdirSync(join(fx.server.dir, 'taken', 'dir'))).toEqual(['keep.txt']);
  });
});

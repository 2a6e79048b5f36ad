import { mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFtpSrv, startVsftpd, type FtpServer } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { recycle } from '../../recycle.ts';
import { FTP_STALE_TEMP_MS, FTP_TEMP_PREFIX, openFtp, type FtpProvider } from './ftp.ts';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) b[i] = (i * 13 + (i >> 12)) & 255;
  return b;
}

const servers: Array<[string, () => Promise<FtpServer>, boolean]> = [
  ['vsftpd', () => startVsftpd(), false],
  ['vsftpd with explicit TLS', () => startVsftpd({ tls: true }), true],
  ['ftp-srv', () => startFtpSrv(), false],
  ['ftp-srv with explicit TLS', () => startFtpSrv({ tls: true }), true],
];

// Backend-specific behaviour; the shared conformance suite covers the rest.
describe.each(servers)('ftp on %s', (name, start, secure) => {
  let server: FtpServer;
  let ftp: FtpProvider;
  const creds = () => ({
    host: server.host,
    port: server.port,
    username: server.username,
    password: server.password,
    root: server.root,
    secure,
    ...(secure ? { tls_fingerprint: server.certFingerprint256 } : {}),
  });

  beforeAll(async () => {
    server = await start();
    ftp = await openFtp(creds());
  });
  afterAll(async () => {
    await ftp?.close();
    await server?.stop();
  });

  it('refuses a wrong login', async () => {
    const err = await openFtp({ ...creds(), username: 'nobody', password: 'wrong' }).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'auth_invalid')).toBe(true);
  });

  if (secure) {
    it('pins the self-signed certificate: a wrong fingerprint is refused before login', async () => {
      const err = await openFtp({ ...creds(), tls_fingerprint: 'AB'.repeat(32) }).catch((e: unknown) => e);
      expect(ProviderError.is(err, 'host_key_changed')).toBe(true);
      // Without a pin or a trusted CA, the self-signed certificate is refused.
      const unpinned = { ...creds() } as Record<string, unknown>;
      delete unpinned.tls_fingerprint;
      expect(
        await openFtp(unpinned).then(
          () => 'opened',
          () => 'refused',
        ),
      ).toBe('refused');
    });
  }

  it('reads ranges with REST and cuts the transfer off at the range end', async () => {
    const data = pattern(3 * 1024 * 1024 + 5);
    await ftp.put('/ranges/data.bin', Readable.from([data]), { size: data.length });
    const mid = await readAll(await ftp.openRead('/ranges/data.bin', { range: { start: 1_000_003, end: 1_500_000 } }));
    expect(mid.equals(data.subarray(1_000_003, 1_500_001))).toBe(true);
    const tail = await readAll(await ftp.openRead('/ranges/data.bin', { range: { start: data.length - 10 } }));
    expect(tail.equals(data.subarray(data.length - 10))).toBe(true);
    // The pool goes on working after cut-off transfers.
    expect((await ftp.stat('/ranges/data.bin')).size).toBe(data.length);
  });

  it('downloads into a few reused buffers (plain FTP), and a reader that stops for a while is no stalled server', async () => {
    const data = pattern(16 * 1024 * 1024 + 7);
    await ftp.put('/big/data.bin', Readable.from([data]), { size: data.length });
    // A short silence limit: the reader below stops for longer than that.
    const quick = await openFtp(creds(), {}, { timeoutMs: 1000 });
    try {
      const body = await quick.openRead('/big/data.bin');
      const copies: Buffer[] = [];
      const memory = new Set<ArrayBufferLike>();
      let chunks = 0;
      for await (const c of body) {
        const chunk = c as Buffer;
        chunks += 1;
        memory.add(chunk.buffer);
        copies.push(Buffer.from(chunk));
        // Given back once used, as the local writer and the uploads do.
        recycle(chunk);
        if (chunks === 2) await new Promise((r) => setTimeout(r, 2500));
      }
      expect(Buffer.concat(copies).equals(data)).toBe(true);
      expect(chunks).toBeGreaterThan(16);
      // Over TLS the bytes come through basic-ftp's stream, a new buffer per read; plain FTP
      // reads into the same few (a new buffer per read: as many as reads).
      if (!secure) expect(memory.size).toBeLessThanOrEqual(8);
      // The connection goes on serving after the download.
      expect((await quick.stat('/big/data.bin')).size).toBe(data.length);
    } finally {
      await quick.close();
    }
  });

  it('a download its reader leaves or cancels midway ends its connection; the pool goes on serving', async () => {
    const data = pattern(8 * 1024 * 1024 + 3);
    await ftp.put('/cut/data.bin', Readable.from([data]), { size: data.length });
    // The reader takes one chunk and goes away.
    const left = await ftp.openRead('/cut/data.bin');
    for await (const c of left) {
      expect((c as Buffer).length).toBeGreaterThan(0);
      break;
    }
    expect(left.destroyed).toBe(true);
    // Cancelled through its signal after the first chunk.
    const ac = new AbortController();
    const cancelled = await ftp.openRead('/cut/data.bin', { signal: ac.signal });
    const err = await (async () => {
      for await (const _c of cancelled) ac.abort();
    })().catch((e: unknown) => e);
    expect(ProviderError.is(err, 'canceled')).toBe(true);
    // Every connection of the pool still serves whole downloads, in parallel.
    const back = await Promise.all(Array.from({ length: 4 }, async () => readAll(await ftp.openRead('/cut/data.bin'))));
    for (const b of back) expect(b.equals(data)).toBe(true);
    expect((await ftp.list('/cut')).entries.map((e) => e.name)).toEqual(['data.bin']);
  });

  it('stores empty files and names with spaces and unicode', async () => {
    const e = await ftp.put('/names/ä b €.txt', Readable.from([]), { size: 0 });
    expect(e.size).toBe(0);
    expect((await ftp.list('/names')).entries.map((x) => [x.name, x.size])).toEqual([['ä b €.txt', 0]]);
    const err = await ftp.put('/names/bad\nname', Readable.from([]), { size: 0 }).catch((x: unknown) => x);
    expect(ProviderError.is(err, 'invalid_name')).toBe(true);
  });

  it('leaves nothing visible after a cancelled upload', async () => {
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(512 * 1024, 3));
    setTimeout(() => ac.abort(), 150);
    const err = await ftp
      .put('/cancel/big.bin', body, { size: 64 * 1024 * 1024 }, { signal: ac.signal })
      .catch((x: unknown) => x);
    expect(ProviderError.is(err, 'canceled')).toBe(true);
    expect((await ftp.list('/cancel')).entries).toEqual([]);
  });

  it('a cancel ends the uploads waiting for a connection at once, and the pool goes on serving', async () => {
    const one = await openFtp(creds(), {}, { maxConnections: 1 });
    try {
      // The only connection is busy with an upload that goes on until released.
      const slow = new Readable({ read() {} });
      slow.push(Buffer.alloc(64 * 1024, 1));
      const holding = one.put('/queue/held.bin', slow, { size: 128 * 1024 });
      const ac = new AbortController();
      const settled: string[] = [];
      const waiting = Array.from({ length: 4 }, (_, i) => {
        const body = Readable.from([Buffer.from(`waiting ${i}`)]);
        return one
          .put(`/queue/w${i}.txt`, body, { size: 9 }, { signal: ac.signal })
          .then(
            () => 'ok',
            (err: unknown) => (ProviderError.is(err, 'canceled') ? 'canceled' : String(err)),
          )
          .then((outcome) => void settled.push(outcome));
      });
      await new Promise((r) => setTimeout(r, 100));
      ac.abort();
      await Promise.all(waiting);
      // Every waiting upload ended while the held one still had its connection.
      expect(settled).toEqual(['canceled', 'canceled', 'canceled', 'canceled']);
      slow.push(Buffer.alloc(64 * 1024, 2));
      slow.push(null);
      expect((await holding).size).toBe(128 * 1024);
      await one.put('/queue/after.txt', Readable.from([Buffer.from('after')]), { size: 5 });
      expect((await one.list('/queue')).entries.map((e) => e.name).sort()).toEqual(['after.txt', 'held.bin']);
    } finally {
      await one.close();
    }
  });

  it('a cancel ends the downloads waiting for a connection at once; none of them starts a transfer later', async () => {
    const one = await openFtp(creds(), {}, { maxConnections: 1 });
    try {
      const data = pattern(2 * 1024 * 1024 + 5);
      await one.put('/rqueue/data.bin', Readable.from([data]), { size: data.length });
      // The only connection is busy with a download nobody reads yet.
      const held = await one.openRead('/rqueue/data.bin');
      const ac = new AbortController();
      const settled: string[] = [];
      const waiting = Array.from({ length: 3 }, () =>
        one.openRead('/rqueue/data.bin', { signal: ac.signal }).then(
          async (r) => `opened (${(await readAll(r).catch(() => Buffer.alloc(0))).length} bytes)`,
          (err: unknown) => (ProviderError.is(err, 'canceled') ? 'canceled' : String(err)),
        ),
      );
      for (const w of waiting) void w.then((outcome) => settled.push(outcome));
      await new Promise((r) => setTimeout(r, 100));
      expect(settled).toEqual([]);
      ac.abort();
      // Each waiting read ends while the held one still has the connection (before, they waited for
      // it and then each downloaded the whole file, the cancel unheard).
      expect(await Promise.all(waiting)).toEqual(['canceled', 'canceled', 'canceled']);
      expect((await readAll(held)).equals(data)).toBe(true);
      expect((await readAll(await one.openRead('/rqueue/data.bin'))).equals(data)).toBe(true);
    } finally {
      await one.close();
    }
  });

  it('removes the temporary files a cut-off upload left, once stale, when their folder is listed or written to', async () => {
    const stale = `${FTP_TEMP_PREFIX}0123456789abcdef`;
    const fresh = `${FTP_TEMP_PREFIX}fedcba9876543210`;
    const notOurs = `${FTP_TEMP_PREFIX}not-ours`;
    const old = new Date(Date.now() - 3 * FTP_STALE_TEMP_MS);
    const leave = (dir: string, name: string, aged: boolean) => {
      writeFileSync(join(server.dir, dir, name), 'partial upload');
      if (aged) utimesSync(join(server.dir, dir, name), old, old);
    };
    await ftp.mkdir('/left');
    await ftp.put('/left/kept.txt', Readable.from([Buffer.from('k')]), { size: 1 });
    leave('left', stale, true);
    leave('left', fresh, false);
    leave('left', notOurs, true);
    // Only the exact names temporary files get are hidden: a user's file with the prefix is listed.
    expect((await ftp.list('/left')).entries.map((e) => e.name)).toEqual([notOurs, 'kept.txt']);
    expect(readdirSync(join(server.dir, 'left')).sort()).toEqual([fresh, notOurs, 'kept.txt'].sort());
    // A write into a folder sweeps it too.
    await ftp.mkdir('/left2');
    leave('left2', stale, true);
    await ftp.put('/left2/new.txt', Readable.from([Buffer.from('n')]), { size: 1 });
    expect(readdirSync(join(server.dir, 'left2'))).toEqual(['new.txt']);
  });

  it('runs parallel transfers over the pool', async () => {
    const data = pattern(1024 * 1024);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => ftp.put(`/par/f${i}`, Readable.from([data]), { size: data.length })),
    );
    const back = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => readAll(await ftp.openRead(`/par/f${i}`))),
    );
    for (const b of back) expect(b.equals(data)).toBe(true);
  });

  if (name.startsWith('vsftpd')) {
    it('lists symbolic links as themselves, with what they resolve to inside the root', async () => {
      const dir = join(server.dir, 'links');
      // Made by the server's user, so that it may remove what is in it.
      await ftp.mkdir('/links');
      mkdirSync(join(dir, 'folder'), { recursive: true });
      writeFileSync(join(dir, 'folder', 'a.txt'), 'abc');
      symlinkSync('folder', join(dir, 'folder-link'));
      symlinkSync('folder/a.txt', join(dir, 'file-link.txt'));
      symlinkSync('nowhere', join(dir, 'dangling'));
      symlinkSync('../../..', join(dir, 'leaves'));
      const listed = (await ftp.list('/links')).entries.map((e) => ({
        name: e.name,
        kind: e.kind,
        size: e.size,
        link: e.link,
      }));
      expect(listed).toEqual([
        { name: 'dangling', kind: 'file', size: 0, link: { broken: 'dangling' } },
        { name: 'file-link.txt', kind: 'file', size: 3, link: { target: '/links/folder/a.txt' } },
        { name: 'folder', kind: 'dir', size: 0, link: undefined },
        { name: 'folder-link', kind: 'dir', size: 0, link: { target: '/links/folder' } },
        { name: 'leaves', kind: 'file', size: 0, link: { broken: 'outside' } },
      ]);
      // Removing a link to a folder removes the link, never what is in the folder.
      await ftp.rmdir('/links/folder-link');
      expect(readdirSync(join(dir, 'folder'))).toEqual(['a.txt']);
    });

    it('keeps modification times (vsftpd MDTM with a time)', async () => {
      expect(ftp.features.setModTime).toBe(true);
      const mtime = new Date('2020-02-03T04:05:06Z');
      const e = await ftp.put('/mt/t.txt', Readable.from([Buffer.from('t')]), { size: 1, modTime: mtime });
      expect(e.modTime?.getTime()).toBe(mtime.getTime());
    });
  }
});

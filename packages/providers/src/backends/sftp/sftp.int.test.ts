import { mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRcloneServe, startSshd, type RcloneServer, type SshServer } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import type { ProviderContext } from '../../api/registry.ts';
import { chunksOf, recycle } from '../../recycle.ts';
import { SFTP_STALE_TEMP_MS, SFTP_TEMP_PREFIX, openSftp, type SftpProvider } from './sftp.ts';

async function readAll(r: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of r) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function memoryContext(): ProviderContext & { saved: Record<string, unknown>[] } {
  const ctx: ProviderContext & { saved: Record<string, unknown>[] } = {
    state: {},
    saved: [],
    async saveState(s) {
      ctx.state = s;
      ctx.saved.push(s);
    },
  };
  return ctx;
}

function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += 1) b[i] = (i * 31 + (i >> 10)) & 255;
  return b;
}

// Backend-specific behaviour; the shared conformance suite covers the rest.
describe('sftp on OpenSSH sshd', () => {
  let server: SshServer;
  const ctx = memoryContext();
  let sftp: SftpProvider;
  const creds = () => ({
    host: server.host,
    port: server.port,
    username: server.username,
    private_key: server.privateKey,
  });

  beforeAll(async () => {
    server = await startSshd();
    sftp = await openSftp(creds(), ctx);
  });
  afterAll(async () => {
    await sftp?.close();
    await server?.stop();
  });

  it('spreads a chunked upload over several channels of one connection and reassembles it in order', async () => {
    const mib = 1024 * 1024;
    const p = await openSftp(creds(), ctx, { maxConnections: 1, maxChannels: 4, concurrency: 4, chunkSize: mib });
    try {
      const data = pattern(6 * mib + 123);
      const w = await p.openChunkWriter('/lanes/big.bin', {
        size: data.length,
        modTime: new Date('2020-01-02T03:04:05Z'),
      });
      const chunks = [0, 1, 2, 3, 4, 5, 6].map((i) => data.subarray(i * mib, (i + 1) * mib));
      // Written out of order, four at a time.
      for (const group of [
        [6, 5, 4, 3],
        [2, 1, 0],
      ]) {
        await Promise.all(group.map((i) => w.writeChunk(i, chunks[i] as Buffer)));
      }
      expect(p.poolCounts()).toEqual({ channels: 4, connections: 1 });
      const e = await w.close();
      expect(e.size).toBe(data.length);
      expect(e.modTime?.toISOString()).toBe('2020-01-02T03:04:05.000Z');
      expect((await readAll(await p.openRead('/lanes/big.bin'))).equals(data)).toBe(true);
      expect((await p.list('/lanes')).entries.map((x) => x.name)).toEqual(['big.bin']);
    } finally {
      await p.close();
    }
  });

  it('downloads into the same few buffers when the writer gives them back, byte for byte, a range too', async () => {
    const data = pattern(4 * 1024 * 1024 + 777);
    await sftp.put('/ring/down.bin', Readable.from([data]), { size: data.length });
    const read = async (give: boolean, range?: { start: number; end: number }) => {
      const buffers = new Set<ArrayBufferLike>();
      const parts: Buffer[] = [];
      // One chunk at a time, as a writer takes them (for-await alone joins queued chunks into copies).
      for await (const c of chunksOf(await sftp.openRead('/ring/down.bin', range ? { range } : {}))) {
        const chunk = c as Buffer;
        buffers.add(chunk.buffer);
        parts.push(Buffer.from(chunk));
        if (give) recycle(chunk);
      }
      return { body: Buffer.concat(parts), buffers: buffers.size };
    };
    const given = await read(true);
    expect(given.body.equals(data)).toBe(true);
    // 129 requests of 32 KiB; given back, no more buffers than requests in flight (32) and a few.
    expect(given.buffers).toBeLessThanOrEqual(40);
    const kept = await read(false);
    expect(kept.body.equals(data)).toBe(true);
    expect(kept.buffers).toBeGreaterThanOrEqual(100);
    const part = await read(true, { start: 100_000, end: 3_000_000 });
    expect(part.body.equals(data.subarray(100_000, 3_000_001))).toBe(true);
  });

  it('records the host key at first connect and accepts it again', async () => {
    expect(ctx.saved).toHaveLength(1);
    expect(String(ctx.state?.host_key)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    const again = await openSftp(creds(), ctx);
    await again.close();
    expect(ctx.saved).toHaveLength(1);
  });

  it('logs in with a passphrase-protected key, and refuses a wrong passphrase', async () => {
    const withKey = await openSftp(
      { ...creds(), private_key: server.encryptedKey, passphrase: server.passphrase },
      { state: { ...ctx.state } },
    );
    expect((await withKey.stat('/')).kind).toBe('dir');
    await withKey.close();
    const err = await openSftp({ ...creds(), private_key: server.encryptedKey, passphrase: 'nope' }, {}).catch(
      (e: unknown) => e,
    );
    expect(ProviderError.is(err, 'auth_invalid')).toBe(true);
  });

  it('keeps modification times and reports quota through statvfs', async () => {
    const mtime = new Date('2021-03-04T05:06:07Z');
    const e = await sftp.put('/mt/file.txt', Readable.from([Buffer.from('abc')]), { size: 3, modTime: mtime });
    expect(e.modTime?.getTime()).toBe(mtime.getTime());
    expect(sftp.features.about).toBe(true);
    const about = (await sftp.about?.()) ?? {};
    expect(about.total).toBeGreaterThan(0);
    expect(about.free).toBeGreaterThan(0);
  });

  it('copies server-side with copy-data and writes out-of-order chunks', async () => {
    const data = pattern(3 * 1024 * 1024 + 123);
    const w = await sftp.openChunkWriter('/chunks/out.bin', { size: data.length });
    const n = Math.ceil(data.length / w.chunkSize);
    const order = Array.from({ length: n }, (_, i) => n - 1 - i);
    await Promise.all(order.map((i) => w.writeChunk(i, data.subarray(i * w.chunkSize, (i + 1) * w.chunkSize))));
    expect((await sftp.list('/chunks')).entries).toEqual([]);
    const e = await w.close();
    expect(e.size).toBe(data.length);
    expect((await readAll(await sftp.openRead('/chunks/out.bin'))).equals(data)).toBe(true);
    expect(sftp.features.copy).toBe(true);
    const c = await sftp.copy?.(e, '/chunks/copy.bin');
    expect(c?.size).toBe(data.length);
    expect(
      (await readAll(await sftp.openRead('/chunks/copy.bin', { range: { start: 1000, end: 1999 } }))).equals(
        data.subarray(1000, 2000),
      ),
    ).toBe(true);
  });

  it('runs parallel transfers over several pooled connections', async () => {
    const data = pattern(2 * 1024 * 1024);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => sftp.put(`/par/f${i}`, Readable.from([data]), { size: data.length })),
    );
    const back = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => readAll(await sftp.openRead(`/par/f${i}`))),
    );
    for (const b of back) expect(b.equals(data)).toBe(true);
  });

  it('removes the temporary files a cut-off upload left, once stale, when their folder is listed or written to', async () => {
    const stale = `${SFTP_TEMP_PREFIX}0123456789abcdef`;
    const fresh = `${SFTP_TEMP_PREFIX}fedcba9876543210`;
    const notOurs = `${SFTP_TEMP_PREFIX}not-ours`;
    const folder = `${SFTP_TEMP_PREFIX}00000000000000aa`;
    const old = new Date(Date.now() - 3 * SFTP_STALE_TEMP_MS);
    const age = (path: string) => utimesSync(path, old, old);
    const leave = (dir: string, name: string, aged: boolean) => {
      writeFileSync(join(server.dir, dir, name), 'partial upload');
      if (aged) age(join(server.dir, dir, name));
    };
    const temps = (dir: string) => readdirSync(join(server.dir, dir)).filter((n) => n.startsWith(SFTP_TEMP_PREFIX));
    await sftp.mkdir('/left');
    await sftp.put('/left/kept.txt', Readable.from([Buffer.from('k')]), { size: 1 });
    leave('left', stale, true);
    leave('left', fresh, false);
    leave('left', notOurs, true);
    mkdirSync(join(server.dir, 'left', folder));
    age(join(server.dir, 'left', folder));
    // An upload of this process still writing: its temporary file is kept, however old it looks.
    const w = await sftp.openChunkWriter('/left/slow.bin', { size: 6 });
    await w.writeChunk(0, Buffer.from('abcdef'));
    const [active] = temps('left').filter((n) => ![stale, fresh, notOurs, folder].includes(n));
    expect(active).toMatch(/^\.skyferry-tmp-[0-9a-f]{16}$/);
    age(join(server.dir, 'left', active!));
    // Only the exact names temporary files get are hidden: a user's file with the prefix is listed.
    expect((await sftp.list('/left')).entries.map((e) => e.name)).toEqual([notOurs, 'kept.txt']);
    expect(readdirSync(join(server.dir, 'left')).sort()).toEqual([active, fresh, notOurs, folder, 'kept.txt'].sort());
    expect((await w.close()).size).toBe(6);
    // A write into a folder (left by an earlier run, not made by this process) sweeps it too.
    mkdirSync(join(server.dir, 'left2'));
    leave('left2', stale, true);
    await sftp.put('/left2/new.txt', Readable.from([Buffer.from('n')]), { size: 1 });
    expect(readdirSync(join(server.dir, 'left2'))).toEqual(['new.txt']);
  });

  it('lists symbolic links as themselves (lstat), with what they resolve to inside the root', async () => {
    const dir = join(server.dir, 'links');
    mkdirSync(join(dir, 'folder'), { recursive: true });
    writeFileSync(join(dir, 'folder', 'a.txt'), 'abc');
    symlinkSync('folder', join(dir, 'folder-link'));
    symlinkSync('folder/a.txt', join(dir, 'file-link.txt'));
    symlinkSync('nowhere', join(dir, 'dangling'));
    symlinkSync('../..', join(dir, 'leaves'));
    const listed = (await sftp.list('/links')).entries.map((e) => ({
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
    // Removing a link removes the link, not what it points to.
    await sftp.remove('/links/file-link.txt');
    await sftp.rmdir('/links/folder');
    expect(readdirSync(dir).sort()).toEqual(['dangling', 'folder-link', 'leaves']);
  });

  it('refuses a changed host key with host_key_changed and a clear message', async () => {
    await server.rotateHostKey();
    const err = await openSftp(creds(), ctx).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'host_key_changed')).toBe(true);
    expect((err as Error).message).toMatch(/different host key/);
    expect((err as ProviderError).retry).toBe('fatal');
  });
});

describe('sftp on rclone serve sftp', () => {
  let server: RcloneServer;
  let sftp: SftpProvider;

  beforeAll(async () => {
    server = await startRcloneServe('sftp');
    sftp = await openSftp(
      { host: server.host, port: server.port, username: server.username, password: server.password },
      memoryContext(),
    );
  });
  afterAll(async () => {
    await sftp?.close();
    await server?.stop();
  });

  it('logs in with a password and refuses a wrong one', async () => {
    expect((await sftp.stat('/')).kind).toBe('dir');
    const err = await openSftp(
      { host: server.host, port: server.port, username: server.username, password: 'wrong' },
      {},
    ).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'auth_invalid')).toBe(true);
  });

  it('hides nothing half-written after a cancelled upload', async () => {
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(512 * 1024, 7));
    setTimeout(() => ac.abort(), 150);
    const err = await sftp
      .put('/cancel/big.bin', body, { size: 64 * 1024 * 1024 }, { signal: ac.signal })
      .catch((e: unknown) => e);
    expect(ProviderError.is(err, 'canceled')).toBe(true);
    expect((await sftp.list('/cancel')).entries).toEqual([]);
  });

  it('streams a file up and down intact', async () => {
    const data = pattern(5 * 1024 * 1024 + 17);
    const e = await sftp.put('/rt/data.bin', Readable.from([data]), { size: data.length });
    expect(e.size).toBe(data.length);
    expect((await readAll(await sftp.openRead('/rt/data.bin'))).equals(data)).toBe(true);
  });
});

describe('sftp on rclone serve sftp on its defaults (no VFS cache: writes only in order)', () => {
  let server: RcloneServer;
  let sftp: SftpProvider;

  beforeAll(async () => {
    server = await startRcloneServe('sftp', { vfsCacheMode: 'off' });
    sftp = await openSftp(
      { host: server.host, port: server.port, username: server.username, password: server.password },
      memoryContext(),
      { chunkSize: 1024 * 1024, concurrency: 4 },
    );
  });
  afterAll(async () => {
    await sftp?.close();
    await server?.stop();
  });

  it('refuses a chunk writer (its writes land out of order) and takes the file through put, in order', async () => {
    const data = pattern(6 * 1024 * 1024 + 3);
    const err = await sftp.openChunkWriter('/big/data.bin', { size: data.length }).catch((e: unknown) => e);
    expect(ProviderError.is(err, 'not_supported')).toBe(true);
    // The probe left nothing behind.
    expect(readdirSync(join(server.dir, 'big'))).toEqual([]);
    const e = await sftp.put('/big/data.bin', Readable.from([data]), { size: data.length });
    expect(e.size).toBe(data.length);
    expect((await readAll(await sftp.openRead('/big/data.bin'))).equals(data)).toBe(true);
  });
});

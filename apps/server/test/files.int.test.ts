/**
 * The file calls against real protocol servers: the local disk, S3 (s3rver), WebDAV (Apache
 * mod_dav and rclone serve), SFTP (OpenSSH sshd and rclone serve), FTP (vsftpd). Every backend
 * goes through the same walk over real HTTP: folders, names, plain and resumable uploads (with a connection dropped mid-part),
 * streamed and ranged downloads, zips, renames, deletes, paging, the listing cache and space info.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, UPLOAD_PART_SIZE, type FileItem, type ListFilesData, type UploadSession } from '@skyferry/contract';
import {
  startApacheWebdav,
  startRcloneServe,
  startS3rver,
  startSshd,
  startVsftpd,
  type FtpServer,
  type RcloneServer,
  type S3rverServer,
  type SshServer,
  type WebdavServer,
} from '@skyferry/testing';
import { startTestApp, type SignedUpUser, type TestApp } from './support/app.ts';
import { FileClient } from './support/files.ts';

interface Backend {
  name: string;
  start(t: TestApp): Promise<{ cloud_name: string; credentials: Record<string, unknown>; stop(): Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: 'local folder',
    async start(t) {
      return { cloud_name: 'local', credentials: { path: t.makeLocalFolder() }, stop: async () => undefined };
    },
  },
  {
    name: 'S3 (s3rver)',
    async start() {
      const s3: S3rverServer = await startS3rver({ buckets: ['files'] });
      return {
        cloud_name: 's3_compatible',
        credentials: {
          bucket: 'files',
          access_key_id: s3.accessKeyId,
          secret_access_key: s3.secretAccessKey,
          endpoint: s3.endpoint,
          region: s3.region,
          path_style: true,
        },
        stop: () => s3.stop(),
      };
    },
  },
  {
    name: 'WebDAV (Apache mod_dav)',
    async start() {
      const dav: WebdavServer = await startApacheWebdav();
      return {
        cloud_name: 'webdav',
        credentials: { url: dav.url, username: dav.username, password: dav.password },
        stop: () => dav.stop(),
      };
    },
  },
  {
    name: 'WebDAV (rclone serve)',
    async start() {
      const dav: RcloneServer = await startRcloneServe('webdav');
      return {
        cloud_name: 'webdav',
        credentials: { url: dav.url, username: dav.username, password: dav.password },
        stop: () => dav.stop(),
      };
    },
  },
  {
    name: 'SFTP (OpenSSH sshd)',
    async start() {
      const ssh: SshServer = await startSshd();
      return {
        cloud_name: 'sftp',
        credentials: { host: ssh.host, port: ssh.port, username: ssh.username, private_key: ssh.privateKey },
        stop: () => ssh.stop(),
      };
    },
  },
  {
    name: 'FTP (vsftpd)',
    async start() {
      const ftp: FtpServer = await startVsftpd();
      return {
        cloud_name: 'ftp',
        credentials: { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, root: ftp.root },
        stop: () => ftp.stop(),
      };
    },
  },
  {
    name: 'SFTP (rclone serve)',
    async start() {
      const sftp: RcloneServer = await startRcloneServe('sftp');
      return {
        cloud_name: 'sftp',
        credentials: { host: sftp.host, port: sftp.port, username: sftp.username, password: sftp.password },
        stop: () => sftp.stop(),
      };
    },
  },
];

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const backend of BACKENDS) {
  describe(`file calls on ${backend.name}`, () => {
    let t: TestApp;
    let u: SignedUpUser;
    let api: FileClient;
    let cloudId: string;
    let stop: () => Promise<void>;

    beforeAll(async () => {
      t = await startTestApp();
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      u = await t.signUp();
      api = new FileClient(base, u.headers);
      const server = await backend.start(t);
      stop = server.stop;
      const cloud = await api.ok<{ id: string }>('POST', '/api/clouds', {
        cloud_name: server.cloud_name,
        alias: backend.name,
        credentials: server.credentials,
      });
      cloudId = cloud.id;
    });
    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    it('creates folders; a taken name is 409002 unless not_allow_conflict reuses it; names follow the rules', async () => {
      const id = await api.ok<string>('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: 'docs' });
      expect(typeof id).toBe('string');
      const again = await api.call('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: 'docs' });
      expect([again.status, again.code, again.msg]).toEqual([
        409,
        Code.ALREADY_EXISTS,
        'A file or folder with this name already exists.',
      ]);
      const reused = await api.ok<string>('POST', '/api/cloud-manager/mkdir', {
        token_id: cloudId,
        folder_name: 'docs',
        not_allow_conflict: true,
      });
      expect(reused).toBe(id);
      for (const bad of ['a:b', 'x?', 'q"', 'p|', 'l<', '>g', 'st*r', 'back\\slash']) {
        const r = await api.call('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: bad });
        expect([r.status, r.code]).toEqual([400, Code.BAD_REQUEST]);
        expect(r.msg).toContain('/ : * ? \\ " < > |');
      }
      const nested = await api.call('POST', '/api/cloud-manager/mkdir', {
        cloud_id: cloudId,
        path: '/no-such-parent',
        folder_name: 'x',
      });
      expect([nested.status, nested.code, nested.msg]).toEqual([404, Code.NOT_FOUND, 'The path does not exist.']);
      const root = await api.listAll(cloudId, '/');
      expect(root.map((i) => [i.name, i.type])).toEqual([['docs', 0]]);
    });

    it('uploads a file with a plain PUT and lists it with size and modified date', async () => {
      const data = Buffer.from('hello, skyferry — ünïcödé\n'.repeat(100));
      const modified = Date.UTC(2023, 4, 6, 7, 8, 9);
      const put = await api.put(cloudId, '/docs/hello.txt', data, `&modified=${modified}`);
      expect(put.code).toBe(0);
      expect(put.data).toMatchObject({ name: 'hello.txt', path: '/docs/hello.txt', type: 1, size: data.length });
      const items = await api.listAll(cloudId, '/docs');
      const item = items.find((i) => i.name === 'hello.txt');
      expect(item).toMatchObject({ type: 1, size: data.length, path: '/docs/hello.txt' });
      expect(item?.modified).toBeGreaterThan(0);
      const keep = await api.put(cloudId, '/docs/hello.txt', Buffer.from('other'), '&overwrite=0');
      expect([keep.status, keep.code]).toEqual([409, Code.ALREADY_EXISTS]);
      const badName = await api.put(cloudId, '/docs/bad:name.txt', Buffer.from('x'));
      expect([badName.status, badName.code]).toEqual([400, Code.BAD_REQUEST]);
    });

    it('a missing path is "The path does not exist."', async () => {
      const r = await api.call('POST', '/api/cloud-manager/list', { cloud_id: cloudId, path: '/nowhere/deeper' });
      expect([r.status, r.code, r.msg]).toEqual([404, Code.NOT_FOUND, 'The path does not exist.']);
      const dl = await api.get(cloudId, '/docs/missing.bin');
      expect(dl.status).toBe(404);
      expect(((await dl.json()) as { msg: string }).msg).toBe('The path does not exist.');
    });

    it('downloads streamed, with ranges (206, suffix, If-Range) and 416 out of range', async () => {
      const data = Buffer.from('hello, skyferry — ünïcödé\n'.repeat(100));
      const full = await api.get(cloudId, '/docs/hello.txt');
      expect(full.status).toBe(200);
      expect(full.headers.get('accept-ranges')).toBe('bytes');
      expect(full.headers.get('content-length')).toBe(String(data.length));
      expect(full.headers.get('content-disposition')).toContain("filename*=UTF-8''hello.txt");
      expect(Buffer.from(await full.arrayBuffer()).equals(data)).toBe(true);
      const etag = full.headers.get('etag') ?? '';

      const part = await api.get(cloudId, '/docs/hello.txt', { range: 'bytes=7-20' });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 7-20/${data.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(7, 21))).toBe(true);

      const tail = await api.get(cloudId, '/docs/hello.txt', { range: 'bytes=-10' });
      expect(tail.status).toBe(206);
      expect(Buffer.from(await tail.arrayBuffer()).equals(data.subarray(data.length - 10))).toBe(true);

      const stale = await api.get(cloudId, '/docs/hello.txt', { range: 'bytes=0-1', 'if-range': '"stale"' });
      expect(stale.status).toBe(200);
      await stale.arrayBuffer();
      const fresh = await api.get(cloudId, '/docs/hello.txt', { range: 'bytes=0-1', 'if-range': etag });
      expect(fresh.status).toBe(206);
      await fresh.arrayBuffer();

      const out = await api.get(cloudId, '/docs/hello.txt', { range: `bytes=${data.length + 5}-` });
      expect(out.status).toBe(416);
      expect(out.headers.get('content-range')).toBe(`bytes */${data.length}`);
      await out.arrayBuffer();
    });

    it('a resumable upload survives a connection dropped mid-part and a lost answer', async () => {
      const data = randomBytes(UPLOAD_PART_SIZE * 2 + 12_345);
      const session = await api.ok<UploadSession>('POST', '/api/cloud-manager/uploads', {
        cloud_id: cloudId,
        path: '/docs/big/resumed.bin',
        size: data.length,
      });
      expect(session).toMatchObject({ offset: 0, part_size: UPLOAD_PART_SIZE, size: data.length });
      const part = (i: number) => data.subarray(i * UPLOAD_PART_SIZE, (i + 1) * UPLOAD_PART_SIZE);
      expect((await api.putPart(session.upload_id, 0, part(0))).data).toEqual({ offset: UPLOAD_PART_SIZE });
      // The connection drops halfway through the second part: nothing of it is taken.
      await api.dropMidPart(session.upload_id, UPLOAD_PART_SIZE, part(1), 1_000_000);
      await new Promise((r) => setTimeout(r, 200));
      const status = await api.ok<UploadSession>('GET', `/api/cloud-manager/uploads/${session.upload_id}`);
      expect(status.offset).toBe(UPLOAD_PART_SIZE);
      // A gap is refused with where to resume.
      const gap = await api.putPart(session.upload_id, UPLOAD_PART_SIZE * 2, part(2));
      expect([gap.status, gap.code, gap.data]).toEqual([409, Code.CONFLICT, { offset: UPLOAD_PART_SIZE }]);
      expect((await api.putPart(session.upload_id, UPLOAD_PART_SIZE, part(1))).data.offset).toBe(UPLOAD_PART_SIZE * 2);
      // The first part again (its answer was "lost"): accepted, nothing changes.
      expect((await api.putPart(session.upload_id, 0, part(0))).data.offset).toBe(UPLOAD_PART_SIZE * 2);
      const early = await api.call('POST', `/api/cloud-manager/uploads/${session.upload_id}/complete`);
      expect(early.code).toBe(Code.CONFLICT);
      expect((await api.putPart(session.upload_id, UPLOAD_PART_SIZE * 2, part(2))).data.offset).toBe(data.length);
      const item = await api.ok<FileItem>('POST', `/api/cloud-manager/uploads/${session.upload_id}/complete`);
      expect(item).toMatchObject({ path: '/docs/big/resumed.bin', size: data.length, type: 1 });
      const back = Buffer.from(await (await api.get(cloudId, '/docs/big/resumed.bin')).arrayBuffer());
      expect(sha256(back)).toBe(sha256(data));
      const gone = await api.call('GET', `/api/cloud-manager/uploads/${session.upload_id}`);
      expect(gone.code).toBe(Code.NOT_FOUND);
    });

    it('an abandoned upload leaves nothing behind', async () => {
      const session = await api.ok<UploadSession>('POST', '/api/cloud-manager/uploads', {
        cloud_id: cloudId,
        path: '/docs/abandoned.bin',
        size: UPLOAD_PART_SIZE + 10,
      });
      await api.putPart(session.upload_id, 0, randomBytes(UPLOAD_PART_SIZE));
      await api.ok('DELETE', `/api/cloud-manager/uploads/${session.upload_id}`);
      await new Promise((r) => setTimeout(r, 300));
      const names = (await api.listAll(cloudId, '/docs', undefined, true)).map((i) => i.name);
      expect(names).not.toContain('abandoned.bin');
    });

    it('downloads a folder, and several files, as one zip (through a signed link, no headers)', async () => {
      await api.put(cloudId, '/docs/sub/inner.txt', Buffer.from('inner'));
      const link = await api.ok<{ url: string; expires_at: number }>('POST', '/api/cloud-manager/download-link', {
        cloud_id: cloudId,
        paths: ['/docs'],
      });
      expect(link.expires_at).toBeGreaterThan(Date.now());
      const res = await fetch(api.base + link.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      expect(res.headers.get('content-disposition')).toContain('docs.zip');
      const zip = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-length')).toBe(String(zip.length));
      const dir = mkdtempSync(join(tmpdir(), 'skyferry-zip-'));
      try {
        writeFileSync(join(dir, 'a.zip'), zip);
        execFileSync('unzip', ['-q', '-t', join(dir, 'a.zip')]);
        execFileSync('unzip', ['-q', join(dir, 'a.zip'), '-d', join(dir, 'out')]);
        expect(readFileSync(join(dir, 'out', 'sub', 'inner.txt'), 'utf8')).toBe('inner');
        expect(readFileSync(join(dir, 'out', 'hello.txt')).length).toBe(
          Buffer.from('hello, skyferry — ünïcödé\n'.repeat(100)).length,
        );
        expect(sha256(readFileSync(join(dir, 'out', 'big', 'resumed.bin')))).toHaveLength(64);

        const two = await api.ok<{ url: string }>('POST', '/api/cloud-manager/download-link', {
          cloud_id: cloudId,
          paths: ['/docs/hello.txt', '/docs/sub'],
          name: 'picked',
        });
        const res2 = await fetch(api.base + two.url);
        expect(res2.headers.get('content-disposition')).toContain('picked.zip');
        writeFileSync(join(dir, 'b.zip'), Buffer.from(await res2.arrayBuffer()));
        const listing = execFileSync('unzip', ['-Z1', join(dir, 'b.zip')])
          .toString()
          .trim()
          .split('\n')
          .sort();
        expect(listing).toEqual(['hello.txt', 'sub/', 'sub/inner.txt']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const forged = await fetch(api.base + link.url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
      expect(forged.status).toBe(404);
      await forged.arrayBuffer();
    });

    it('renames files and folders; a taken or bad name is refused', async () => {
      const item = await api.ok<FileItem>('POST', '/api/cloud-manager/rename', {
        cloud_id: cloudId,
        path: '/docs/hello.txt',
        new_name: 'hi.txt',
      });
      expect(item).toMatchObject({ name: 'hi.txt', path: '/docs/hi.txt', type: 1 });
      await api.put(cloudId, '/docs/other.txt', Buffer.from('x'));
      const taken = await api.call('POST', '/api/cloud-manager/rename', {
        cloud_id: cloudId,
        path: '/docs/other.txt',
        new_name: 'hi.txt',
      });
      expect([taken.status, taken.code]).toEqual([409, Code.ALREADY_EXISTS]);
      const bad = await api.call('POST', '/api/cloud-manager/rename', {
        cloud_id: cloudId,
        path: '/docs/other.txt',
        new_name: 'a/b',
      });
      expect([bad.status, bad.code]).toEqual([400, Code.BAD_REQUEST]);
      const folder = await api.ok<FileItem>('POST', '/api/cloud-manager/rename', {
        cloud_id: cloudId,
        path: '/docs/sub',
        new_name: 'renamed sub',
      });
      expect(folder).toMatchObject({ path: '/docs/renamed sub', type: 0 });
      const inner = await api.listAll(cloudId, '/docs/renamed sub');
      expect(inner.map((i) => i.name)).toEqual(['inner.txt']);
      const names = (await api.listAll(cloudId, '/docs')).map((i) => i.name).sort();
      expect(names).toEqual(['big', 'hi.txt', 'other.txt', 'renamed sub']);
    });

    it('pages a folder with page_token', async () => {
      await api.ok('POST', '/api/cloud-manager/mkdir', { cloud_id: cloudId, folder_name: 'many' });
      for (let i = 0; i < 23; i += 1)
        await api.put(cloudId, `/many/f${String(i).padStart(2, '0')}.txt`, Buffer.from(String(i)));
      const first = await api.ok<ListFilesData>('POST', '/api/cloud-manager/list', {
        cloud_id: cloudId,
        path: '/many',
        page_size: 10,
      });
      expect(first.items.length).toBeLessThanOrEqual(10);
      expect(first.page_token).not.toBeNull();
      const all = await api.listAll(cloudId, '/many', 10);
      expect(all.map((i) => i.name).sort()).toEqual(
        Array.from({ length: 23 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`),
      );
    });

    it('deletes files and folders (to the trash where there is one) and reports each failure', async () => {
      const r = await api.ok<{
        deleted: string[];
        failed: Array<{ path: string; code: number; msg: string }>;
        trashed: boolean;
      }>('POST', '/api/cloud-manager/delete', {
        cloud_id: cloudId,
        files: ['/docs/hi.txt', '/docs/renamed sub', '/docs/not-there.txt'],
      });
      expect(r.deleted.sort()).toEqual(['/docs/hi.txt', '/docs/renamed sub']);
      expect(r.failed).toEqual([
        { path: '/docs/not-there.txt', code: Code.NOT_FOUND, msg: 'The path does not exist.' },
      ]);
      const names = (await api.listAll(cloudId, '/docs')).map((i) => i.name).sort();
      expect(names).toEqual(['big', 'other.txt']);
      const many = await api.ok<{ deleted: string[] }>('POST', '/api/cloud-manager/delete', {
        cloud_id: cloudId,
        files: ['/many'],
        permanent: true,
      });
      expect(many.deleted).toEqual(['/many']);
      expect((await api.listAll(cloudId, '/')).map((i) => i.name)).not.toContain('many');
    });

    it('answers the space (info) and stores it on the cloud', async () => {
      const info = await api.ok<{ space_amount: number; space_used: number }>('POST', '/api/cloud-manager/info', {
        cloud_id: cloudId,
      });
      expect(info.space_amount).toBeGreaterThanOrEqual(0);
      expect(info.space_used).toBeGreaterThanOrEqual(0);
      const me = await api.ok<{ clouds: Array<{ id: string; space: number; used_space: number }> }>(
        'GET',
        '/api/v2/clouds/me',
      );
      const cloud = me.clouds.find((c) => c.id === cloudId);
      expect(cloud?.space).toBe(info.space_amount);
      expect(cloud?.used_space).toBe(info.space_used);
    });
  });
}

describe('photos: previews and albums', () => {
  let t: TestApp;
  let api: FileClient;
  let cloudId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const u = await t.signUp();
    api = new FileClient(base, u.headers);
    cloudId = (
      await api.ok<{ id: string }>('POST', '/api/clouds', {
        cloud_name: 'local',
        credentials: { path: t.makeLocalFolder() },
      })
    ).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves a thumbnail made by the server (WebP, longest side as asked, never enlarged), with an ETag (304 when unchanged), also through a link; not for other files', async () => {
    const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#3080c0' } })
      .jpeg()
      .toBuffer();
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    await api.put(cloudId, '/pics/photo.jpg', photo);
    await api.put(cloudId, '/pics/dot.png', png);
    await api.put(cloudId, '/pics/broken.png', Buffer.from('not an image at all'));
    await api.put(cloudId, '/pics/notes.txt', Buffer.from('text'));
    const thumb = (path: string, query = '', headers: Record<string, string> = {}) =>
      fetch(`${api.base}/api/cloud-manager/thumbnail?cloud_id=${cloudId}&path=${path}${query}`, {
        headers: { ...api.headers, ...headers },
      });

    const res = await thumb('/pics/photo.jpg');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    const small = Buffer.from(await res.arrayBuffer());
    expect(small.length).toBeLessThan(photo.length);
    expect(await sharp(small).metadata()).toMatchObject({ format: 'webp', width: 256, height: 192 });
    const etag = res.headers.get('etag') ?? '';
    const again = await thumb('/pics/photo.jpg', '', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    await again.arrayBuffer();

    const tiny = await thumb('/pics/photo.jpg', '&size=128');
    expect(tiny.headers.get('etag')).not.toBe(etag);
    expect(await sharp(Buffer.from(await tiny.arrayBuffer())).metadata()).toMatchObject({ width: 128, height: 96 });
    const bad = await thumb('/pics/photo.jpg', '&size=300');
    expect(bad.status).toBe(400);
    await bad.arrayBuffer();
    // A 1x1 picture stays 1x1; a file that does not decode is served as it is.
    expect(await sharp(Buffer.from(await (await thumb('/pics/dot.png')).arrayBuffer())).metadata()).toMatchObject({
      format: 'webp',
      width: 1,
      height: 1,
    });
    const broken = await thumb('/pics/broken.png');
    expect([broken.status, broken.headers.get('content-type')]).toEqual([200, 'image/png']);
    expect(Buffer.from(await broken.arrayBuffer()).toString()).toBe('not an image at all');

    const link = await api.ok<{ url: string }>('POST', '/api/cloud-manager/download-link', {
      cloud_id: cloudId,
      paths: ['/pics/photo.jpg'],
    });
    const viaLink = await fetch(`${api.base}${link.url.replace('/files?', '/thumbnail?')}`);
    expect(viaLink.status).toBe(200);
    expect(viaLink.headers.get('content-type')).toBe('image/webp');
    await viaLink.arrayBuffer();
    const text = await thumb('/pics/notes.txt');
    expect(text.status).toBe(404);
    await text.arrayBuffer();
  });

  it('album calls answer 403003 for a cloud whose backend has no albums', async () => {
    for (const [path, body] of [
      ['/api/cloud-manager/albums/list', {}],
      ['/api/cloud-manager/albums/create', { title: 'Trip' }],
      ['/api/cloud-manager/albums/add', { album_id: 'a', files: ['/pics/dot.png'] }],
      ['/api/cloud-manager/albums/items', { album_id: 'a' }],
    ] as const) {
      const r = await api.call('POST', path, { cloud_id: cloudId, ...body });
      expect([path, r.status, r.code]).toEqual([path, 403, Code.FORBIDDEN]);
    }
  });
});

describe('the listing cache over HTTP', () => {
  it('serves a folder from the cache until refresh, and forgets it when Skyferry changes the folder', async () => {
    const t = await startTestApp();
    try {
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const api = new FileClient(base, (await t.signUp()).headers);
      const folder = t.makeLocalFolder();
      const cloudId = (
        await api.ok<{ id: string }>('POST', '/api/clouds', { cloud_name: 'local', credentials: { path: folder } })
      ).id;
      expect(await api.listAll(cloudId, '/')).toEqual([]);
      // A change behind Skyferry's back is not seen until the cache expires or the user refreshes.
      writeFileSync(join(folder, 'outside.txt'), 'x');
      expect(await api.listAll(cloudId, '/')).toEqual([]);
      expect((await api.listAll(cloudId, '/', undefined, true)).map((i) => i.name)).toEqual(['outside.txt']);
      // A change made through Skyferry drops the folder's pages at once.
      await api.put(cloudId, '/inside.txt', Buffer.from('y'));
      expect((await api.listAll(cloudId, '/')).map((i) => i.name).sort()).toEqual(['inside.txt', 'outside.txt']);
    } finally {
      await t.close();
    }
  });
});

describe('a cloud whose credentials stop working', () => {
  it('answers 401 "Authorization has expired, please reauthorize." and marks the cloud expired', async () => {
    const [t, dav] = await Promise.all([startTestApp(), startApacheWebdav()]);
    try {
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const api = new FileClient(base, (await t.signUp()).headers);
      const cloudId = (
        await api.ok<{ id: string }>('POST', '/api/clouds', {
          cloud_name: 'webdav',
          credentials: { url: dav.url, username: dav.username, password: dav.password },
        })
      ).id;
      expect(await api.listAll(cloudId, '/')).toEqual([]);
      // The server's password changes (Apache reads its password file on every request).
      writeFileSync(
        join(dirname(dav.dir), 'htpasswd'),
        `${dav.username}:{SHA}${createHash('sha1').update('changed').digest('base64')}\n`,
      );
      const r = await api.call('POST', '/api/cloud-manager/list', { cloud_id: cloudId, path: '/', refresh: true });
      expect([r.status, r.code, r.msg]).toEqual([
        401,
        Code.CLOUD_AUTH_EXPIRED,
        'Authorization has expired, please reauthorize.',
      ]);
      const me = await api.ok<{ clouds: Array<{ id: string; status: string }> }>('GET', '/api/v2/clouds/me');
      expect(me.clouds.find((c) => c.id === cloudId)?.status).toBe('expired');
      // Every file call on it now answers 401 until it is reauthorized.
      const again = await api.call('POST', '/api/cloud-manager/info', { cloud_id: cloudId });
      expect(again.code).toBe(Code.CLOUD_AUTH_EXPIRED);
    } finally {
      await t.close();
      await dav.stop();
    }
  });
});

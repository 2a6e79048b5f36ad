/**
 * The photos view's calls over HTTP on a Google Photos cloud (the local emulator of the Library API,
 * built from Google's published documentation, with the emulated OAuth server): upload a picture,
 * its server-made thumbnail, create an album, "add to album", the album's items and the albums list;
 * another user reaches none of it.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, type Album, type FileItem, type ListFilesData } from '@skyferry/contract';
import type { SignedUpUser } from './support/app.ts';
import { FileClient } from './support/files.ts';
import { connectOAuth, startOAuthTestApp, type OAuthTestApp } from './support/oauth.ts';

describe('photos and albums on Google Photos (emulated)', () => {
  let app: OAuthTestApp;
  let user: SignedUpUser;
  let api: FileClient;
  let cloudId: string;

  beforeAll(async () => {
    app = await startOAuthTestApp();
    const base = await app.t.app.listen({ port: 0, host: '127.0.0.1' });
    user = await app.t.signUp();
    api = new FileClient(base, user.headers);
    cloudId = (await connectOAuth(app, user.headers, 'google_photos', 'pics@example.com', 'Pictures')).id;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  it('uploads a picture, shows its thumbnail, and adds it to a new album', async () => {
    const jpg = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#d08030' } })
      .jpeg()
      .toBuffer();
    const put = await api.put(cloudId, '/beach.jpg', jpg);
    expect(put.code).toBe(0);
    const root = await api.listAll(cloudId, '/', undefined, true);
    expect(root.map((i) => [i.name, i.type])).toEqual([['beach.jpg', 1]]);

    const res = await fetch(`${api.base}/api/cloud-manager/thumbnail?cloud_id=${cloudId}&path=/beach.jpg&size=512`, {
      headers: api.headers,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/webp']);
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({ width: 512, height: 384 });

    expect(await api.ok<{ albums: Album[] }>('POST', '/api/cloud-manager/albums/list', { cloud_id: cloudId })).toEqual({
      albums: [],
    });
    const album = await api.ok<Album>('POST', '/api/cloud-manager/albums/create', { cloud_id: cloudId, title: 'Trip' });
    expect(album.title).toBe('Trip');
    const added = await api.ok<{ added: number }>('POST', '/api/cloud-manager/albums/add', {
      cloud_id: cloudId,
      album_id: album.id,
      files: ['/beach.jpg'],
    });
    expect(added).toEqual({ added: 1 });
    const items = await api.ok<ListFilesData>('POST', '/api/cloud-manager/albums/items', {
      cloud_id: cloudId,
      album_id: album.id,
    });
    expect(items.items.map((i: FileItem) => [i.name, i.path])).toEqual([['beach.jpg', '/Trip/beach.jpg']]);
    const albums = await api.ok<{ albums: Album[] }>('POST', '/api/cloud-manager/albums/list', { cloud_id: cloudId });
    expect(albums.albums.map((a) => [a.id, a.title, a.count])).toEqual([[album.id, 'Trip', 1]]);
    // The album shows as a folder of the cloud.
    expect((await api.listAll(cloudId, '/', undefined, true)).map((i) => [i.name, i.type]).sort()).toEqual([
      ['Trip', 0],
      ['beach.jpg', 1],
    ]);
  });

  it('a file that is not a picture or a video is refused with an answer; adding what is not there is "not found"', async () => {
    // An answer with the reason, not a closed connection (the backend destroys the stream it refuses).
    const text = await api.put(cloudId, '/notes.txt', Buffer.from('text'));
    expect([text.status, text.code]).toEqual([403, Code.FORBIDDEN]);
    expect(text.msg).not.toBe('');
    const album = await api.ok<Album>('POST', '/api/cloud-manager/albums/create', {
      cloud_id: cloudId,
      title: 'Empty',
    });
    const missing = await api.call('POST', '/api/cloud-manager/albums/add', {
      cloud_id: cloudId,
      album_id: album.id,
      files: ['/nowhere.jpg'],
    });
    expect([missing.status, missing.code]).toEqual([404, Code.NOT_FOUND]);
  });

  it('another user reaches none of it', async () => {
    const other = new FileClient(api.base, (await app.t.signUp()).headers);
    for (const [path, body] of [
      ['/api/cloud-manager/albums/list', {}],
      ['/api/cloud-manager/albums/create', { title: 'Mine now' }],
      ['/api/cloud-manager/albums/add', { album_id: 'x', files: ['/beach.jpg'] }],
    ] as const) {
      const r = await other.call('POST', path, { cloud_id: cloudId, ...body });
      expect([path, r.status, r.code]).toEqual([path, 404, Code.NOT_FOUND]);
    }
    const albums = await api.ok<{ albums: Album[] }>('POST', '/api/cloud-manager/albums/list', { cloud_id: cloudId });
    expect(albums.albums.map((a) => a.title).sort()).toEqual(['Empty', 'Trip']);
  });
});

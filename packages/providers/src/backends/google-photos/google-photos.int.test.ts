import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GooglePhotosEmulator, PHOTOS_SCOPES } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { openProvider } from '../../api/registry.ts';
import { errorCode, patternBytes, readAll, runConformance } from '../../testkit/index.ts';
import {
  conformanceTarget,
  runOAuthChecks,
  startEmulatedService,
  type EmulatedService,
} from '../oauth-common/emulated.ts';
import { OAUTH_KINDS } from '../oauth-common/services.ts';
import type { Provider } from '../../api/types.ts';
import type { GooglePhotosProvider } from './google-photos.ts';
import '../index.ts';

// Google Photos against the local emulator built from the Library API documentation, including
// the March 2025 rules (packages/testing/src/emulators/google-photos).
//
// The shared conformance suite runs with the capabilities the Library API has: no delete, rename
// or replace (a second upload of a name adds another item), albums one level deep, pictures and
// videos only. The cases for what it lacks check that the backend refuses it (not_supported).
const MiB = 1024 * 1024;
const CHUNK = 256 * 1024;

const start = () =>
  startEmulatedService({
    kind: 'google_photos',
    service: 'google',
    scopes: OAUTH_KINDS.google_photos!.scopes,
    make: (oauth) => new GooglePhotosEmulator({ oauth }),
  });

runConformance(
  'google_photos (emulated Library API)',
  async () => conformanceTarget(await start(), 'google_photos', { chunk_size: CHUNK }),
  {
    // Photos pages hold at most 100 items: 450 cross four page boundaries.
    pagingCount: 450,
    bigFileSize: 3 * MiB,
    streamFileSize: 3 * MiB,
    capabilities: {
      remove: false,
      rename: false,
      overwrite: 'keep-both',
      nestedDirs: false,
      anyFileType: false,
      fileExtension: 'jpg',
    },
  },
);

runOAuthChecks('google_photos', start, {
  bigSize: 5 * CHUNK + 1000,
  sessionRequests: (emulator) => emulator.chunkPosts,
  settings: { chunk_size: CHUNK },
  fileExt: 'mp4',
  // Resumable upload URLs carry their own authority: expire the token before the session starts.
  expireAtFraction: 0.1,
});

describe('google_photos (emulated Library API)', () => {
  let svc: EmulatedService<GooglePhotosEmulator>;
  let p: GooglePhotosProvider;
  beforeAll(async () => {
    svc = await start();
    p = (await svc.open({ chunk_size: CHUNK })) as GooglePhotosProvider;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('declares only what the API can do', () => {
    expect(p.features).toMatchObject({
      copy: false,
      move: false,
      trash: false,
      about: false,
      chunkWriter: false,
      setModTime: false,
    });
    const asProvider: Provider = p;
    expect(asProvider.copy).toBeUndefined();
    expect(asProvider.trash).toBeUndefined();
    expect(asProvider.about).toBeUndefined();
    expect([...p.hashes]).toEqual([]);
  });

  it('uploads pictures and videos to the library and reads them back', async () => {
    const jpg = patternBytes(40_000, 1);
    const mp4 = patternBytes(3 * CHUNK + 17, 2);
    const before = svc.emulator.chunkPosts;
    const a = await p.put('/beach.jpg', Readable.from([jpg]), { size: jpg.length });
    const b = await p.put('/clip.mp4', Readable.from([mp4]), { size: mp4.length });
    // The video is larger than a chunk: a resumable upload in granularity multiples.
    expect(svc.emulator.chunkPosts - before).toBe(4);
    expect(a).toMatchObject({ path: '/beach.jpg', kind: 'file', size: jpg.length });
    expect(b).toMatchObject({ path: '/clip.mp4', size: mp4.length, mimeType: 'video/mp4' });
    expect((await readAll(await p.openRead('/beach.jpg'))).equals(jpg)).toBe(true);
    expect((await readAll(await p.openRead('/clip.mp4'))).equals(mp4)).toBe(true);
    expect(
      (await readAll(await p.openRead('/clip.mp4', { range: { start: 10, end: 19 } }))).equals(mp4.subarray(10, 20)),
    ).toBe(true);
  });

  it('refuses anything but pictures and videos', async () => {
    expect(await errorCode(p.put('/notes.txt', Readable.from([Buffer.from('text')]), { size: 4 }))).toBe(
      'not_supported',
    );
    expect(await errorCode(p.put('/sheet.xlsx', Readable.from([Buffer.from('x')]), { size: 1 }))).toBe('not_supported');
  });

  it('creates albums, lists them, and uploads into them', async () => {
    await p.mkdir('/Holidays');
    await p.mkdir('/Holidays');
    const img = patternBytes(1000, 3);
    await p.put('/Holidays/day1.png', Readable.from([img]), { size: img.length });
    await p.put('/Trips/train.heic', Readable.from([img]), { size: img.length });
    const root = (await p.list('/')).entries;
    expect(
      root
        .filter((e) => e.kind === 'dir')
        .map((e) => e.name)
        .sort(),
    ).toEqual(['Holidays', 'Trips']);
    expect((await p.list('/Holidays')).entries.map((e) => e.name)).toEqual(['day1.png']);
    expect((await p.list('/Trips')).entries.map((e) => e.name)).toEqual(['train.heic']);
    // Items in albums are in the library too.
    expect(root.map((e) => e.name)).toEqual(expect.arrayContaining(['day1.png', 'train.heic']));
    expect(
      [...svc.emulator.albums.values()]
        .filter((a) => a.owner === svc.user)
        .map((a) => a.title)
        .sort(),
    ).toEqual(['Holidays', 'Trips']);
  });

  it('adds uploaded media to an album', async () => {
    const img = patternBytes(500, 4);
    await p.put('/later.jpg', Readable.from([img]), { size: img.length });
    const album = await p.createAlbum('Best of');
    expect(await p.addToAlbum(album.id, ['/later.jpg'])).toBe(1);
    expect((await p.list('/Best of')).entries.map((e) => e.name)).toEqual(['later.jpg']);
    expect(await p.listAlbumItems(album.id)).toEqual({ paths: ['/Best of/later.jpg'] });
    expect((await p.listAlbums()).find((a) => a.title === 'Best of')).toMatchObject({ id: album.id, count: 1 });
  });

  it('lists only what this app uploaded (the API reads nothing else since March 2025)', async () => {
    svc.emulator.seedForeign(svc.user, 'from-phone.jpg', Buffer.from('not ours'));
    svc.emulator.seedForeignAlbum(svc.user, 'Phone album');
    const names = (await p.list('/')).entries.map((e) => e.name);
    expect(names).not.toContain('from-phone.jpg');
    expect(names).not.toContain('Phone album');
    expect(await errorCode(p.stat('/from-phone.jpg'))).toBe('not_found');
  });

  it('keeps duplicate names apart, and cannot delete, rename or nest', async () => {
    const one = Buffer.from('one');
    await p.put('/Dupes/same.jpg', Readable.from([one]), { size: 3 });
    await p.put('/Dupes/same.jpg', Readable.from([Buffer.from('two!')]), { size: 4 });
    const listed = (await p.list('/Dupes')).entries;
    expect(listed).toHaveLength(2);
    expect(new Set(listed.map((e) => e.path)).size).toBe(2);
    for (const e of listed) expect((await readAll(await p.openRead(e.path))).length).toBe(e.size);
    expect(await errorCode(p.remove('/Dupes/same.jpg'))).toBe('not_supported');
    expect(await errorCode(p.rename('/beach.jpg', 'sea.jpg'))).toBe('not_supported');
    expect(await errorCode(p.rmdir('/Dupes'))).toBe('not_supported');
    expect(await errorCode(p.mkdir('/a/b'))).toBe('not_supported');
    expect(await errorCode(p.put('/a/b/c.jpg', Readable.from([one]), { size: 3 }))).toBe('not_supported');
  });

  it('streams a video of unknown size through a resumable upload', async () => {
    const data = patternBytes(2 * MiB + 5, 6);
    const e = await p.put('/unknown.mov', Readable.from([data]), { size: -1 });
    expect(e.size).toBe(data.length);
    expect((await readAll(await p.openRead('/unknown.mov'))).equals(data)).toBe(true);
  });

  it('needs the post-2025 scopes: a token with only the removed photoslibrary.readonly scope lists nothing', async () => {
    const creds = svc.credentials();
    const old = svc.oauth.issueTokens(
      svc.user,
      String(creds.client_id),
      'https://www.googleapis.com/auth/photoslibrary.readonly',
    );
    const legacy = await openProvider(
      'google_photos',
      { ...creds, access_token: old.access_token, refresh_token: old.refresh_token },
      {},
    );
    const err = await legacy.list('/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).code).toBe('permission');
    expect(OAUTH_KINDS.google_photos!.scopes).toEqual(
      expect.arrayContaining([PHOTOS_SCOPES.appendonly, PHOTOS_SCOPES.readAppCreated]),
    );
  });
});

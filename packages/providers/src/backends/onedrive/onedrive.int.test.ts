import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OneDriveEmulator, quickXorHash } from '@skyferry/testing';
import type { ProviderError } from '../../api/errors.ts';
import { openProvider } from '../../api/registry.ts';
import { checkNameSearch, patternBytes, readAll, runConformance, SEARCH_FOUND } from '../../testkit/index.ts';
import { hashBuffer } from '../../hashing.ts';
import {
  conformanceTarget,
  runOAuthChecks,
  startEmulatedService,
  type EmulatedService,
} from '../oauth-common/emulated.ts';
import { OAUTH_KINDS } from '../oauth-common/services.ts';
import '../index.ts';

// OneDrive (Microsoft Graph) against the local emulator built from Graph's published
// documentation (packages/testing/src/emulators/onedrive). Sizes shrink when CI is set.
const CI = Boolean(process.env.CI);
const MiB = 1024 * 1024;
const FRAGMENT = 320 * 1024;
const CHUNK = 4 * FRAGMENT;

const start = (kind: 'onedrive' | 'onedrive_business' = 'onedrive') =>
  startEmulatedService({
    kind,
    service: 'microsoft',
    scopes: OAUTH_KINDS[kind]!.scopes,
    make: (oauth) => new OneDriveEmulator({ oauth, copyPolls: 2 }),
  });

runConformance(
  'onedrive (emulated Microsoft Graph)',
  async () => conformanceTarget(await start(), 'onedrive', { chunk_size: CHUNK }),
  { bigFileSize: CI ? 6 * MiB : 40 * MiB, streamFileSize: CI ? 6 * MiB : 24 * MiB, pagingCount: CI ? 1100 : 2500 },
);

runConformance(
  'onedrive_business (emulated Microsoft Graph, business drive)',
  async () => {
    const svc = await start('onedrive_business');
    const drive = svc.emulator.createDrive(svc.user, 'business');
    return {
      provider: await svc.open({ chunk_size: CHUNK, drive_id: drive.id }),
      cleanup: () => svc.close(),
      badCredentials: () =>
        openProvider(
          'onedrive_business',
          { access_token: 'not-a-token', api_url: svc.emulator.url, drive_id: drive.id },
          {},
        ),
    };
  },
  { pagingCount: 300, bigFileSize: 3 * MiB, streamFileSize: 5 * MiB },
);

runOAuthChecks('onedrive', () => start(), {
  bigSize: 4 * MiB + 3 * FRAGMENT + 99,
  sessionRequests: (emulator) => emulator.fragmentPuts,
  settings: { chunk_size: CHUNK },
  // Upload URLs carry their own authority: the token must expire before the session is created.
  expireAtFraction: 0.2,
});

describe('onedrive specifics (emulated)', () => {
  let svc: EmulatedService<OneDriveEmulator>;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('sends fragments of a multiple of 320 KiB, in order, without the bearer token', async () => {
    // 1 MB rounds down to 960 KiB (3 x 320 KiB).
    const p = await svc.open({ chunk_size: 1_000_000 });
    const data = patternBytes(5 * MiB + 7, 2);
    const before = svc.emulator.fragmentPuts;
    const e = await p.put('/frag/f.bin', Readable.from([data]), {
      size: data.length,
      modTime: new Date('2020-02-02T02:02:02Z'),
    });
    expect(svc.emulator.fragmentPuts - before).toBe(Math.ceil(data.length / (3 * FRAGMENT)));
    expect(e.modTime?.toISOString()).toBe('2020-02-02T02:02:02.000Z');
    expect(e.hashes?.quickxor).toBe(quickXorHash(data));
    expect(e.hashes?.quickxor).toBe(await hashBuffer(data, 'quickxor'));
    // The session URL refuses a bearer token (the emulator answers 401 when one is sent).
    expect(svc.emulator.requests.filter((r) => r.path.startsWith('/up/') && r.status === 401)).toEqual([]);
  });

  it('takes a chunked upload of unknown size by spooling it, then uploading through a session', async () => {
    const p = await svc.open({ chunk_size: CHUNK });
    const data = patternBytes(4 * CHUNK + 999, 11);
    const w = await p.openChunkWriter!('/spool/unknown.bin', { size: -1 });
    const n = Math.ceil(data.length / w.chunkSize);
    for (let i = n - 1; i >= 0; i--) await w.writeChunk(i, data.subarray(i * w.chunkSize, (i + 1) * w.chunkSize));
    const before = svc.emulator.fragmentPuts;
    const e = await w.close();
    expect(e.size).toBe(data.length);
    expect(svc.emulator.fragmentPuts - before).toBeGreaterThanOrEqual(2);
    expect((await readAll(await p.openRead('/spool/unknown.bin'))).equals(data)).toBe(true);
  });

  it('copies on the server by following the asynchronous monitor', async () => {
    const p = await svc.open();
    await p.put('/cp/src.txt', Readable.from([Buffer.from('copy me')]), { size: 7 });
    const polls = svc.emulator.monitorPolls;
    const c = await p.copy!(await p.stat('/cp/src.txt'), '/cp/sub/dst.txt');
    expect(c.path).toBe('/cp/sub/dst.txt');
    expect(svc.emulator.monitorPolls - polls).toBe(3);
    expect((await readAll(await p.openRead('/cp/sub/dst.txt'))).toString()).toBe('copy me');
  });

  it('trash moves items to the recycle bin', async () => {
    const p = await svc.open();
    await p.put('/bin/gone.txt', Readable.from([Buffer.from('bye')]), { size: 3 });
    await p.trash!('/bin/gone.txt');
    expect(await p.stat('/bin/gone.txt').catch((e: unknown) => (e as ProviderError).code)).toBe('not_found');
    const drive = svc.emulator.driveFor(svc.user);
    expect(svc.emulator.recycleBin(drive).map((i) => i.name)).toContain('gone.txt');
  });

  it("searches below a folder through Graph's search(q=), keeping names that hold the query", async () => {
    const p = await svc.open();
    await checkNameSearch(p);
    // A quote in the query is doubled in the OData string.
    expect((await p.search!('/', "bob's")).entries.map((e) => e.path)).toEqual([SEARCH_FOUND[1]]);
    // Results without parentReference.path are placed through their folder's own record.
    svc.emulator.searchOmitsPaths = true;
    try {
      expect((await p.search!('/find', 'invoice')).entries.map((e) => e.path).sort()).toEqual(SEARCH_FOUND);
    } finally {
      svc.emulator.searchOmitsPaths = false;
    }
    // Graph lists no recycle bin: there is no trash to list here.
    expect(p.listTrash).toBeUndefined();
  });

  it('encodes names OneDrive refuses and reads them back unchanged', async () => {
    const p = await svc.open();
    const name = 'what? a:b <c> "d" | e* #1 %2 ';
    await p.put(`/names/${name}`, Readable.from([Buffer.from('odd')]), { size: 3 });
    expect((await p.list('/names')).entries.map((e) => e.name)).toEqual([name]);
    expect((await readAll(await p.openRead(`/names/${name}`))).toString()).toBe('odd');
  });

  it('waits out 429 activityLimitReached and 503 answers with Retry-After', async () => {
    const p = await svc.open();
    svc.emulator.rateLimitNext(1, 1);
    svc.emulator.rateLimitNext(1, 1, '503');
    const t = Date.now();
    await p.list('/');
    expect(Date.now() - t).toBeGreaterThanOrEqual(1900);
  });

  it('works on a business drive, removing permanently', async () => {
    const biz = await start('onedrive_business');
    try {
      const drive = biz.emulator.createDrive(biz.user, 'business');
      const p = await biz.open({ drive_id: drive.id });
      await p.put('/b/x.txt', Readable.from([Buffer.from('biz')]), { size: 3 });
      await p.remove('/b/x.txt');
      expect(biz.emulator.recycleBin(drive)).toEqual([]);
      expect(await p.stat('/b/x.txt').catch((e: unknown) => (e as ProviderError).code)).toBe('not_found');
      expect((await p.about!()).total).toBeGreaterThan(0);
    } finally {
      await biz.close();
    }
  });
});

import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropboxContentHash, DropboxEmulator } from '@skyferry/testing';
import { openProvider } from '../../api/registry.ts';
import { checkNameSearch, errorCode, patternBytes, readAll, runConformance, writeFiles } from '../../testkit/index.ts';
import {
  conformanceTarget,
  runOAuthChecks,
  startEmulatedService,
  type EmulatedService,
} from '../oauth-common/emulated.ts';
import { OAUTH_KINDS } from '../oauth-common/services.ts';
import '../index.ts';

// Dropbox against the local emulator built from Dropbox's published API v2 documentation
// (packages/testing/src/emulators/dropbox). Sizes shrink when CI is set.
const CI = Boolean(process.env.CI);
const MiB = 1024 * 1024;
const CHUNK = 4 * MiB;

const start = (kind: 'dropbox' | 'dropbox_business' = 'dropbox') =>
  startEmulatedService({
    kind,
    service: 'dropbox',
    scopes: OAUTH_KINDS[kind]!.scopes,
    make: (oauth) => new DropboxEmulator({ oauth }),
  });

runConformance(
  'dropbox (emulated Dropbox API v2)',
  async () => conformanceTarget(await start(), 'dropbox', { chunk_size: CHUNK }),
  { bigFileSize: CI ? 9 * MiB : 40 * MiB, streamFileSize: CI ? 9 * MiB : 24 * MiB, pagingCount: CI ? 1100 : 2500 },
);

runConformance(
  'dropbox_business (emulated Dropbox API v2, team space)',
  async () => {
    const svc = await start('dropbox_business');
    svc.emulator.account(svc.user, { memberFolder: 'Member home' });
    return {
      provider: await svc.open({ chunk_size: CHUNK }),
      cleanup: () => svc.close(),
      badCredentials: () =>
        openProvider('dropbox_business', { access_token: 'not-a-token', api_url: svc.emulator.url }, {}),
    };
  },
  { pagingCount: 300, bigFileSize: 9 * MiB, streamFileSize: 5 * MiB },
);

runOAuthChecks('dropbox', () => start(), {
  bigSize: 3 * CHUNK + 777,
  sessionRequests: (emulator) => emulator.appendCalls,
  settings: { chunk_size: CHUNK },
});

describe('dropbox specifics (emulated)', () => {
  let svc: EmulatedService<DropboxEmulator>;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('reports the Dropbox content hash and keeps client_modified', async () => {
    const p = await svc.open({ chunk_size: CHUNK });
    const data = patternBytes(CHUNK + 5, 9);
    const e = await p.put('/h/f.bin', Readable.from([data]), {
      size: data.length,
      modTime: new Date('2018-08-08T08:08:08Z'),
    });
    expect(e.hashes?.dropbox).toBe(dropboxContentHash(data));
    expect(e.modTime?.toISOString()).toBe('2018-08-08T08:08:08.000Z');
  });

  it('waits out too_many_write_operations (429 and 409 forms) with the Retry-After sent', async () => {
    const p = await svc.open();
    svc.emulator.rateLimitNext(1, 1, 'too_many_write_operations');
    const t = Date.now();
    await p.mkdir('/contention');
    expect(Date.now() - t).toBeGreaterThanOrEqual(950);
    expect(svc.emulator.faultsServed('rate_limit')).toHaveLength(1);
    expect((await p.stat('/contention')).kind).toBe('dir');
  });

  it('deleted items stay in Dropbox deleted files (the trash)', async () => {
    const p = await svc.open();
    await p.put('/t/gone.txt', Readable.from([Buffer.from('x')]), { size: 1 });
    await p.trash!('/t/gone.txt');
    expect(svc.emulator.deleted.map((d) => d.path)).toContain('/t/gone.txt');
  });

  it('searches file names through search_v2, below the folder searched, page by page', async () => {
    await checkNameSearch(await svc.open());
  });

  it('lists its deleted files (a deleted folder once, for what it held), restores files and folders where they were', async () => {
    const own = await start();
    try {
      const p = await own.open();
      await writeFiles(p, { '/bin/Docs/report.txt': 'report v1', '/bin/Old/a.txt': 'a', '/bin/Old/deep/b.txt': 'bb' });
      await p.mkdir('/bin/Old/empty');
      await p.trash!('/bin/Docs/report.txt');
      await p.trash!('/bin/Old');
      const listed = (await p.listTrash!()).entries;
      expect(listed.map((e) => e.id).sort()).toEqual(['/bin/Docs/report.txt', '/bin/Old']);
      const report = listed.find((e) => e.name === 'report.txt')!;
      expect(report).toMatchObject({ kind: 'file', size: 9, originalPath: '/bin/Docs/report.txt' });
      expect(report.deletedAt).toBeInstanceOf(Date);
      expect(listed.find((e) => e.name === 'Old')).toMatchObject({ kind: 'dir', originalPath: '/bin/Old' });

      const back = await p.restoreTrash!(report.id);
      expect(back).toMatchObject({ path: '/bin/Docs/report.txt', kind: 'file', size: 9 });
      expect((await readAll(await p.openRead('/bin/Docs/report.txt'))).toString()).toBe('report v1');
      const dir = await p.restoreTrash!('/bin/Old');
      expect(dir).toMatchObject({ path: '/bin/Old', kind: 'dir' });
      expect((await readAll(await p.openRead('/bin/Old/deep/b.txt'))).toString()).toBe('bb');
      expect((await p.list('/bin/Old')).entries.map((e) => e.name).sort()).toEqual(['a.txt', 'deep', 'empty']);
      expect((await p.listTrash!()).entries).toEqual([]);
      // A live path is no trash; a personal account cannot delete for good and has no way to empty.
      expect(await errorCode(p.restoreTrash!('/bin/Old'))).toBe('not_found');
      expect(p.purgeTrash).toBeUndefined();
      expect(p.emptyTrash).toBeUndefined();
    } finally {
      await own.close();
    }
  });

  it('deletes trashed items for good in a team account (permanently_delete), never a live one', async () => {
    const team = await start('dropbox_business');
    try {
      team.emulator.account(team.user, { memberFolder: 'Alice Home' });
      const biz = await team.open();
      await writeFiles(biz, { '/Team Docs/old.txt': 'old', '/Team Docs/live.txt': 'live' });
      await biz.trash!('/Team Docs/old.txt');
      expect((await biz.listTrash!()).entries.map((e) => e.id)).toEqual(['/Team Docs/old.txt']);
      expect(await errorCode(biz.purgeTrash!('/Team Docs/live.txt'))).toBe('not_found');
      await biz.purgeTrash!('/Team Docs/old.txt');
      expect((await biz.listTrash!()).entries).toEqual([]);
      expect((await biz.stat('/Team Docs/live.txt')).size).toBe(4);
    } finally {
      await team.close();
    }
  });

  it('sends non-ASCII names in the Dropbox-API-Arg header escaped', async () => {
    const p = await svc.open();
    await writeFiles(p, { '/ünï/日本.txt': 'ok' });
    expect((await readAll(await p.openRead('/ünï/日本.txt'))).toString()).toBe('ok');
  });

  it('works in a team space through Dropbox-API-Path-Root', async () => {
    const team = await start('dropbox_business');
    try {
      team.emulator.account(team.user, { memberFolder: 'Alice Home' });
      const biz = await team.open();
      expect((await biz.list('/')).entries.map((e) => e.name)).toEqual(['Alice Home']);
      await writeFiles(biz, { '/Team Docs/plan.txt': 'team' });
      const personal = await openProvider('dropbox', team.credentials(), {});
      expect(await errorCode(personal.stat('/Team Docs'))).toBe('not_found');
      expect(team.emulator.requests.some((r) => r.path === '/2/users/get_current_account')).toBe(true);
    } finally {
      await team.close();
    }
  });
});

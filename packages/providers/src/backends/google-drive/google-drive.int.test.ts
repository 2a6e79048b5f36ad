import { Readable } from 'node:stream';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { GoogleDriveEmulator, GOOGLE_DOC_MIME, GOOGLE_SHEET_MIME } from '@skyferry/testing';
import { ProviderError } from '../../api/errors.ts';
import { openProvider } from '../../api/registry.ts';
import { patternBytes, readAll, runConformance } from '../../testkit/index.ts';
import {
  conformanceTarget,
  runOAuthChecks,
  startEmulatedService,
  type EmulatedService,
} from '../oauth-common/emulated.ts';
import { OAUTH_KINDS } from '../oauth-common/services.ts';
import { googleDocsLeftOut, setGoogleDocsMode } from './google-drive.ts';
import '../index.ts';

// Google Drive against the local emulator built from Drive's published API documentation
// (packages/testing/src/emulators/google-drive). Sizes shrink when CI is set.
const CI = Boolean(process.env.CI);
const MiB = 1024 * 1024;
const CHUNK = MiB;

const start = () =>
  startEmulatedService({
    kind: 'google_drive',
    service: 'google',
    scopes: OAUTH_KINDS.google_drive!.scopes,
    make: (oauth) => new GoogleDriveEmulator({ oauth }),
  });

runConformance(
  'google_drive (emulated Drive API v3)',
  async () => conformanceTarget(await start(), 'google_drive', { chunk_size: CHUNK }),
  { bigFileSize: CI ? 6 * MiB : 40 * MiB, streamFileSize: CI ? 5 * MiB : 24 * MiB, pagingCount: CI ? 1100 : 2500 },
);

runConformance(
  'google_drive in a shared drive (emulated Drive API v3)',
  async () => {
    const svc = await start();
    const driveId = svc.emulator.createSharedDrive('Conformance team', [svc.user]);
    return {
      provider: await svc.open({ chunk_size: CHUNK, drive_id: driveId }),
      cleanup: () => svc.close(),
      badCredentials: () =>
        openProvider('google_drive', { access_token: 'not-a-token', api_url: svc.emulator.url, drive_id: driveId }, {}),
    };
  },
  { pagingCount: 300, bigFileSize: 3 * MiB, streamFileSize: 3 * MiB },
);

runOAuthChecks('google_drive', start, {
  bigSize: 4 * CHUNK + 12345,
  sessionRequests: (emulator) => emulator.chunkPuts,
  settings: { chunk_size: CHUNK },
  // Session URIs carry their own authority: expire the token before the session starts.
  expireAtFraction: 0.1,
});

describe('google_drive specifics (emulated)', () => {
  let svc: EmulatedService<GoogleDriveEmulator>;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('uploads in resumable sessions of 256 KiB multiples and keeps the modification time', async () => {
    const p = await svc.open({ chunk_size: 300 * 1024 });
    const data = patternBytes(3 * 256 * 1024 + 17, 1);
    const before = svc.emulator.chunkPuts;
    const e = await p.put('/chunks/a.bin', Readable.from([data]), {
      size: data.length,
      modTime: new Date('2021-03-04T05:06:07Z'),
    });
    // 300 KiB rounds down to 256 KiB: four requests.
    expect(svc.emulator.chunkPuts - before).toBe(4);
    expect(e.modTime?.toISOString()).toBe('2021-03-04T05:06:07.000Z');
    expect(e.hashes?.md5).toMatch(/^[0-9a-f]{32}$/);
    expect((await readAll(await p.openRead('/chunks/a.bin'))).equals(data)).toBe(true);
  });

  it('exports Google Docs to Office formats on download, or skips them', async () => {
    const p = await svc.open();
    await p.mkdir('/docs');
    const folder = await p.stat('/docs');
    svc.emulator.seed(svc.user, folder.id!, 'Plan', { mimeType: GOOGLE_DOC_MIME, docText: 'the plan' });
    svc.emulator.seed(svc.user, folder.id!, 'Budget', { mimeType: GOOGLE_SHEET_MIME, docText: 'a,b' });
    svc.emulator.seed(svc.user, folder.id!, 'Form', { mimeType: 'application/vnd.google-apps.form' });
    const listed = (await p.list('/docs')).entries;
    expect(listed.map((e) => e.name).sort()).toEqual(['Budget.xlsx', 'Plan.docx']);
    const doc = listed.find((e) => e.name === 'Plan.docx')!;
    expect(doc.size).toBe(-1);
    expect(doc.mimeType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    const text = (await readAll(await p.openRead('/docs/Plan.docx'))).toString();
    expect(text).toContain('as application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(text).toContain('the plan');
    // The form has no export format: left out, and counted, in either mode.
    expect(googleDocsLeftOut(p)).toBe(1);
    setGoogleDocsMode(p, 'skip');
    expect((await p.list('/docs')).entries).toEqual([]);
    expect(googleDocsLeftOut(p)).toBe(3);
    // Listing again counts each item once.
    await p.list('/docs');
    expect(googleDocsLeftOut(p)).toBe(3);
    const skipping = await svc.open({ google_docs: 'skip' });
    expect((await skipping.list('/docs')).entries).toEqual([]);
    expect(googleDocsLeftOut(skipping)).toBe(3);
  });

  it('reports the daily upload cap as a clear, fatal quota error', async () => {
    const p = await svc.open();
    svc.emulator.dailyUploadCapBytes = 1000;
    try {
      const err = await p
        .put('/cap/too-much.bin', Readable.from([patternBytes(2000, 3)]), { size: 2000 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as ProviderError).code).toBe('quota');
      expect((err as ProviderError).retry).toBe('fatal');
      expect((err as ProviderError).message).toContain('750 GB');
    } finally {
      svc.emulator.dailyUploadCapBytes = 750 * 1024 ** 3;
      svc.emulator.newDay();
    }
  });

  it('waits out 403 rateLimitExceeded and 429 answers with the Retry-After sent, like userRateLimitExceeded', async () => {
    const p = await svc.open();
    await p.list('/');
    for (const variant of ['rateLimitExceeded', '429']) {
      const before = svc.emulator.faultsServed('rate_limit').length;
      svc.emulator.rateLimitNext(1, 1, variant);
      const started = Date.now();
      await p.list('/');
      expect(Date.now() - started, variant).toBeGreaterThanOrEqual(950);
      expect(svc.emulator.faultsServed('rate_limit').length - before, variant).toBe(1);
      expect(svc.emulator.pendingFaults()).toBe(0);
    }
  });

  it('works inside a shared drive', async () => {
    const driveId = svc.emulator.createSharedDrive('Team', [svc.user]);
    const p = await svc.open({ drive_id: driveId });
    await p.put('/in-team/x.txt', Readable.from([Buffer.from('team')]), { size: 4 });
    expect((await readAll(await p.openRead('/in-team/x.txt'))).toString()).toBe('team');
    expect([...svc.emulator.files.values()].some((f) => f.name === 'x.txt' && f.driveId === driveId)).toBe(true);
    const mine = await svc.open();
    expect(await mine.stat('/in-team').catch((e: unknown) => (e as ProviderError).code)).toBe('not_found');
  });

  it('lists "Shared with me" read-only', async () => {
    const owner = 'bob@example.com';
    const folder = svc.emulator.seed(owner, svc.emulator.rootId(owner), 'Bob shares');
    svc.emulator.seed(owner, folder.id, 'note.txt', { content: Buffer.from('from bob') });
    svc.emulator.share(folder.id, svc.user);
    const shared = await openProvider('google_drive_shared', svc.credentials(), {});
    expect(shared.features.copy).toBe(false);
    expect(shared.copy).toBeUndefined();
    expect((await shared.list('/')).entries.map((e) => e.name)).toEqual(['Bob shares']);
    expect((await readAll(await shared.openRead('/Bob shares/note.txt'))).toString()).toBe('from bob');
    const err = await shared.mkdir('/x').catch((e: unknown) => e);
    expect((err as ProviderError).code).toBe('permission');
  });

  it('finds names exactly although Drive compares them without case, and keeps "/" in names', async () => {
    const p = await svc.open();
    await p.mkdir('/case');
    const folder = await p.stat('/case');
    svc.emulator.seed(svc.user, folder.id!, 'Report.txt', { content: Buffer.from('upper') });
    svc.emulator.seed(svc.user, folder.id!, 'a/b', { content: Buffer.from('slash') });
    expect(await p.stat('/case/report.txt').catch((e: unknown) => (e as ProviderError).code)).toBe('not_found');
    const names = (await p.list('/case')).entries.map((e) => e.name).sort();
    expect(names).toEqual(['Report.txt', 'a／b']);
    expect((await readAll(await p.openRead('/case/a／b'))).toString()).toBe('slash');
  });

  it('searches by name through Drive itself, keeping only what lies below the folder searched', async () => {
    const p = await svc.open();
    const put = (path: string) => p.put(path, Readable.from([Buffer.from('x')]), { size: 1 });
    await put('/find/Taxes 2024/invoice-march.pdf');
    await put('/find/Taxes 2024/notes.txt');
    await put('/elsewhere/Invoice summary.txt');
    await p.mkdir('/find/Invoices');
    await put('/find/gone invoice.txt');
    await p.trash?.('/find/gone invoice.txt');
    const below = (await p.search?.('/find', 'invoice'))?.entries.map((e) => e.path).sort();
    expect(below).toEqual(['/find/Invoices', '/find/Taxes 2024/invoice-march.pdf']);
    const all = (await p.search?.('/', 'invoice'))?.entries.map((e) => e.path).sort();
    expect(all).toEqual(['/elsewhere/Invoice summary.txt', '/find/Invoices', '/find/Taxes 2024/invoice-march.pdf']);
    const missing = await p.search?.('/nope', 'x').catch((e: unknown) => (e as ProviderError).code);
    expect(missing).toBe('not_found');
  });

  it('lists its trash (items trashed themselves), restores them where they were, and deletes only trashed items for good', async () => {
    const p = await svc.open();
    const put = (path: string, text: string) =>
      p.put(path, Readable.from([Buffer.from(text)]), { size: Buffer.byteLength(text) });
    await put('/bin/Docs/report.txt', 'report');
    await put('/bin/Old/a.txt', 'a');
    await put('/bin/b.txt', 'b');
    await p.trash?.('/bin/Docs/report.txt');
    await p.trash?.('/bin/Old');
    const listed = (await p.listTrash?.())?.entries ?? [];
    const mine = listed.filter((e) => e.originalPath?.startsWith('/bin/'));
    expect(mine.map((e) => [e.name, e.originalPath, e.kind, e.size]).sort()).toEqual([
      ['Old', '/bin/Old', 'dir', 0],
      ['report.txt', '/bin/Docs/report.txt', 'file', 6],
    ]);
    const report = mine.find((e) => e.name === 'report.txt')!;
    const restored = await p.restoreTrash?.(report.id);
    expect(restored?.path).toBe('/bin/Docs/report.txt');
    expect((await readAll(await p.openRead('/bin/Docs/report.txt'))).toString()).toBe('report');
    // A live item is no trash: the trash calls refuse it.
    const live = await p.stat('/bin/b.txt');
    expect(await p.purgeTrash?.(live.id!).catch((e: unknown) => (e as ProviderError).code)).toBe('not_found');
    expect((await p.stat('/bin/b.txt')).size).toBe(1);
    const old = mine.find((e) => e.name === 'Old')!;
    await p.purgeTrash?.(old.id);
    expect((await p.listTrash?.())?.entries.map((e) => e.id)).not.toContain(old.id);
    await p.trash?.('/bin/b.txt');
    await p.emptyTrash?.();
    expect((await p.listTrash?.())?.entries).toEqual([]);
  });
});

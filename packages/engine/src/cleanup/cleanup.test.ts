import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '@skyferry/providers';
import { MemoryProvider, MemoryStore } from '../testing/memory-provider.ts';
import { overlappingReads, recordReads } from './read-recorder.ts';
import { anyCopyRemains, removeEmptyFolder, removeScannedFile } from './remove.ts';
import { scanForCleanup } from './scan.ts';
import { CleanupMode, type CleanupScanProgress } from './types.ts';

const KB = 1024;
const E = 64 * KB;

/** A memory cloud without service hashes, so the scan must read to compare. */
function noHashCloud(store = new MemoryStore(), opts: ConstructorParameters<typeof MemoryProvider>[0] = {}) {
  return new MemoryProvider({ store, hashes: [], ...opts });
}

/** Same size, same first and last 64 KiB, different middle byte. */
function nearTwins(size: number): [Buffer, Buffer] {
  const a = randomBytes(size);
  const b = Buffer.from(a);
  const mid = Math.floor(size / 2);
  b[mid] = (b[mid] as number) ^ 0x01;
  return [a, b];
}

const groupPaths = (groups: { files: { path: string }[] }[]) => groups.map((g) => g.files.map((f) => f.path)).sort();

describe('empty folders', () => {
  it('reports top-most empty folders with their nested empties; a folder of empty folders is empty', async () => {
    const store = new MemoryStore();
    store.mkdirp('/a/b/c');
    store.mkdirp('/a/b/d/e');
    store.mkdirp('/solo');
    store.mkdirp('/keep/inner/empty');
    store.writeFile('/keep/file.txt', 'x');
    store.mkdirp('/deep/x/y');
    store.writeFile('/deep/x/y/z.txt', 'data');
    store.mkdirp('/deep/sibling');
    const r = await scanForCleanup({ provider: noHashCloud(store), modes: CleanupMode.emptyFolders });
    expect(r.emptyFolders.map((f) => [f.path, f.nestedCount])).toEqual([
      ['/a', 4],
      ['/deep/sibling', 0],
      ['/keep/inner', 1],
      ['/solo', 0],
    ]);
    expect(r.emptyFolderTotal).toBe(5 + 1 + 2 + 1);
    expect(r.duplicateGroups).toEqual([]);
    expect(r.largeFiles).toEqual([]);
  });

  it('never reports the scanned folder itself, and scans below a path', async () => {
    const store = new MemoryStore();
    store.mkdirp('/root/empty/one');
    store.mkdirp('/outside/empty');
    const r = await scanForCleanup({ provider: noHashCloud(store), root: '/root/empty', modes: 1 });
    expect(r.emptyFolders.map((f) => f.path)).toEqual(['/root/empty/one']);
    const all = await scanForCleanup({ provider: noHashCloud(store), root: '/root', modes: 1 });
    expect(all.emptyFolders.map((f) => [f.path, f.nestedCount])).toEqual([['/root/empty', 1]]);
  });

  it('a folder that cannot be listed is not empty, nor is anything above it', async () => {
    const store = new MemoryStore();
    store.mkdirp('/p/locked');
    store.mkdirp('/p/open');
    const r = await scanForCleanup({ provider: noHashCloud(store, { forbidden: ['/p/locked'] }), modes: 1 });
    expect(r.emptyFolders.map((f) => f.path)).toEqual(['/p/open']);
    expect(r.errors).toEqual([expect.objectContaining({ path: '/p/locked', code: 'permission' })]);
  });

  it('a missing folder fails the scan', async () => {
    await expect(scanForCleanup({ provider: noHashCloud(), root: '/nope' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('duplicate files', () => {
  it('settles groups by the service hash without reading a byte', async () => {
    const store = new MemoryStore();
    const a = randomBytes(300 * KB);
    store.writeFile('/x/a.jpg', a);
    store.writeFile('/y/a copy.jpg', a);
    store.writeFile('/y/other.jpg', randomBytes(300 * KB));
    const rec = recordReads(new MemoryProvider({ store, hashes: ['md5'] }));
    const r = await scanForCleanup({ provider: rec.provider, modes: CleanupMode.duplicates });
    expect(groupPaths(r.duplicateGroups)).toEqual([['/x/a.jpg', '/y/a copy.jpg']]);
    expect(r.duplicateGroups[0]).toMatchObject({ method: 'service_hash', hashType: 'md5', size: 300 * KB });
    expect(r.duplicateGroups[0]?.files.map((f) => f.category)).toEqual(['picture', 'picture']);
    expect(rec.reads).toEqual([]);
    expect(r.stats.settledByServiceHash).toBe(3);
  });

  it('reads edges, then only the middles of what still collides, never a byte twice', async () => {
    const store = new MemoryStore();
    const size = 512 * KB;
    const dup = randomBytes(size);
    const [n1, n2] = nearTwins(size);
    store.writeFile('/d/one.mp4', dup);
    store.writeFile('/d/two.mp4', dup);
    store.writeFile('/d/sub/three.mp4', dup);
    store.writeFile('/near/n1.bin', n1);
    store.writeFile('/near/n2.bin', n2);
    // Same size, different from the first byte: the edges settle them.
    store.writeFile('/near/h1.bin', randomBytes(size));
    // A unique size is never read at all.
    store.writeFile('/unique.bin', randomBytes(size + 1));
    const rec = recordReads(noHashCloud(store));
    const r = await scanForCleanup({ provider: rec.provider, modes: CleanupMode.duplicates });
    expect(groupPaths(r.duplicateGroups)).toEqual([['/d/one.mp4', '/d/sub/three.mp4', '/d/two.mp4']]);
    expect(r.duplicateGroups[0]).toMatchObject({ method: 'content', hashType: 'sha256' });
    expect(overlappingReads(rec.reads)).toEqual([]);
    expect(rec.reads.some((x) => x.path === '/unique.bin')).toBe(false);
    // Six files of this size: every one's edges; the three copies and the two near twins in full.
    expect(rec.bytes()).toBe(6 * 2 * E + 5 * (size - 2 * E));
    expect(r.stats.bytesRead).toBe(rec.bytes());
    expect(r.stats).toMatchObject({ partiallyRead: 6, fullyRead: 5 });
    // The h1 file was read only at its edges.
    expect(rec.reads.filter((x) => x.path === '/near/h1.bin').map((x) => x.bytes)).toEqual([E, E]);
  });

  it('reads small files whole, once; leaves empty files out; keeps same-size different files apart', async () => {
    const store = new MemoryStore();
    const s = randomBytes(40 * KB);
    store.writeFile('/s1.txt', s);
    store.writeFile('/s2.txt', s);
    store.writeFile('/s3.txt', randomBytes(40 * KB));
    store.writeFile('/edge.bin', randomBytes(2 * E));
    store.writeFile('/edge-copy.bin', store.readFile('/edge.bin'));
    store.writeFile('/zero1', '');
    store.writeFile('/zero2', '');
    const rec = recordReads(noHashCloud(store));
    const r = await scanForCleanup({ provider: rec.provider, modes: CleanupMode.duplicates });
    expect(groupPaths(r.duplicateGroups)).toEqual([
      ['/edge-copy.bin', '/edge.bin'],
      ['/s1.txt', '/s2.txt'],
    ]);
    expect(r.duplicateGroups[0]?.size).toBe(2 * E);
    expect(rec.reads.length).toBe(5);
    expect(overlappingReads(rec.reads)).toEqual([]);
    expect(rec.bytes()).toBe(3 * 40 * KB + 2 * 2 * E);
  });

  it('falls back to reading when not every member has the service hash', async () => {
    const store = new MemoryStore();
    const a = randomBytes(10 * KB);
    store.writeFile('/a', a);
    store.writeFile('/b', a);
    const provider = new MemoryProvider({ store, hashes: ['md5'] });
    const original = provider.list.bind(provider);
    provider.list = async (dir, opts) => {
      const page = await original(dir, opts);
      for (const e of page.entries) if (e.path === '/b') delete e.hashes;
      return page;
    };
    const rec = recordReads(provider);
    const r = await scanForCleanup({ provider: rec.provider, modes: 2 });
    expect(groupPaths(r.duplicateGroups)).toEqual([['/a', '/b']]);
    expect(r.duplicateGroups[0]?.method).toBe('content');
    expect(rec.bytes()).toBe(20 * KB);
  });

  it('a file that cannot be read is skipped with an error, never called a duplicate', async () => {
    const store = new MemoryStore();
    const a = randomBytes(10 * KB);
    store.writeFile('/a', a);
    store.writeFile('/b', a);
    store.writeFile('/c', a);
    const provider = noHashCloud(store, {
      faults: {
        before: (op, p) => (op === 'openRead' && p === '/c' ? new ProviderError('permission', 'no') : undefined),
      },
    });
    const r = await scanForCleanup({ provider, modes: 2 });
    expect(groupPaths(r.duplicateGroups)).toEqual([['/a', '/b']]);
    expect(r.errors).toEqual([expect.objectContaining({ path: '/c', code: 'permission' })]);
  });
});

describe('large files and the whole scan', () => {
  it('reports files at or above the threshold, largest first, with size, date and category', async () => {
    const store = new MemoryStore();
    store.addSynthetic('/v/movie.mkv', 5000, { mtime: Date.UTC(2024, 0, 2) });
    store.addSynthetic('/v/song.flac', 3000, { mtime: Date.UTC(2024, 0, 3), fill: 1 });
    store.addSynthetic('/v/notes.docx', 2999);
    store.addSynthetic('/v/exact', 3000, { fill: 2 });
    const r = await scanForCleanup({
      provider: noHashCloud(store),
      modes: CleanupMode.largeFiles,
      largeThreshold: 3000,
    });
    expect(r.largeFiles).toEqual([
      { path: '/v/movie.mkv', size: 5000, modTime: Date.UTC(2024, 0, 2), category: 'video' },
      { path: '/v/exact', size: 3000, modTime: expect.any(Number), category: 'other' },
      { path: '/v/song.flac', size: 3000, modTime: Date.UTC(2024, 0, 3), category: 'audio' },
    ]);
  });

  it('runs all three by default, reporting progress through listing and hashing', async () => {
    const store = new MemoryStore();
    const a = randomBytes(200 * KB);
    store.writeFile('/a.pdf', a);
    store.writeFile('/b/a.pdf', a);
    store.mkdirp('/empty');
    const events: CleanupScanProgress[] = [];
    const r = await scanForCleanup({
      provider: noHashCloud(store),
      largeThreshold: 100 * KB,
      onProgress: (p) => events.push({ ...p }),
    });
    expect(r.modes).toBe(7);
    expect(r.emptyFolders.map((f) => f.path)).toEqual(['/empty']);
    expect(groupPaths(r.duplicateGroups)).toEqual([['/a.pdf', '/b/a.pdf']]);
    expect(r.largeFiles.map((f) => f.path)).toEqual(['/a.pdf', '/b/a.pdf']);
    expect(r.stats).toMatchObject({ files: 2, folders: 2, bytes: 400 * KB });
    const phases = [...new Set(events.map((e) => e.phase))];
    expect(phases).toEqual(['listing', 'hashing', 'finishing']);
    const last = events[events.length - 1];
    expect(last?.hashBytesRead).toBe(last?.hashBytesPlanned);
    expect(last?.hashBytesRead).toBe(400 * KB);
  });

  it('stops when cancelled', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 50; i++) store.writeFile(`/f/${i}.bin`, randomBytes(8 * KB));
    for (let i = 0; i < 50; i++) store.writeFile(`/g/${i}.bin`, store.readFile(`/f/${i}.bin`));
    const controller = new AbortController();
    const provider = noHashCloud(store, { latencyMs: 5 });
    const scan = scanForCleanup({
      provider,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === 'hashing' && p.hashBytesRead > 0) controller.abort();
      },
    });
    await expect(scan).rejects.toMatchObject({ code: 'canceled' });
    expect(provider.opCount('openRead')).toBeLessThan(100);
  });
});

describe('removing what a scan found', () => {
  it('trashes an unchanged file, leaves a changed one, and reports one already gone', async () => {
    const store = new MemoryStore();
    store.writeFile('/a.txt', 'hello', { mtime: 1_000_000 });
    store.writeFile('/b.txt', 'hello', { mtime: 1_000_000 });
    const p = new MemoryProvider({ store });
    expect(await removeScannedFile(p, { path: '/a.txt', size: 5, modTime: 1_000_000 })).toEqual({
      ok: true,
      trashed: true,
      alreadyGone: false,
    });
    expect(store.exists('/a.txt')).toBe(false);
    expect(store.trashed.map((t) => t.path)).toEqual(['/a.txt']);
    store.writeFile('/b.txt', 'hello!', { mtime: 1_000_000 });
    expect(await removeScannedFile(p, { path: '/b.txt', size: 5, modTime: 1_000_000 })).toMatchObject({
      ok: false,
      reason: 'changed',
    });
    expect(store.exists('/b.txt')).toBe(true);
    expect(await removeScannedFile(p, { path: '/a.txt', size: 5, modTime: 1_000_000 })).toMatchObject({
      ok: true,
      alreadyGone: true,
    });
  });

  it('deletes for good where the cloud has no trash', async () => {
    const store = new MemoryStore();
    store.writeFile('/a.txt', 'hello', { mtime: 5000 });
    const p = new MemoryProvider({ store, features: { trash: false } });
    expect(await removeScannedFile(p, { path: '/a.txt', size: 5, modTime: 5000 })).toMatchObject({ trashed: false });
    expect(store.exists('/a.txt')).toBe(false);
    expect(store.trashed).toEqual([]);
  });

  it('removes an empty folder tree, but not one that has gained a file', async () => {
    const store = new MemoryStore();
    store.mkdirp('/e/f/g');
    store.mkdirp('/h/i');
    const p = new MemoryProvider({ store });
    expect(await removeEmptyFolder(p, '/e')).toMatchObject({ ok: true, trashed: true });
    expect(store.exists('/e')).toBe(false);
    store.writeFile('/h/i/new.txt', 'new');
    expect(await removeEmptyFolder(p, '/h')).toMatchObject({ ok: false, reason: 'not_empty' });
    expect(store.exists('/h/i/new.txt')).toBe(true);
  });

  it('knows whether a copy of a group remains', async () => {
    const store = new MemoryStore();
    store.writeFile('/a', 'same');
    const p = new MemoryProvider({ store });
    expect(await anyCopyRemains(p, [{ path: '/gone', size: 4, modTime: null }])).toBe(false);
    expect(
      await anyCopyRemains(p, [
        { path: '/gone', size: 4, modTime: null },
        { path: '/a', size: 4, modTime: null },
      ]),
    ).toBe(true);
  });
});

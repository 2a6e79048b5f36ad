import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '@skyferry/testing';
import { RCLONE_ENV, startBackend, type BackendFixture, type BackendName } from '../testing/backends.ts';
import { overlappingReads, recordReads } from './read-recorder.ts';
import { scanForCleanup } from './scan.ts';
import type { CleanupScanResult } from './types.ts';

// Scans of real servers holding planted clutter, checked against rclone (an independent
// implementation) on the same data: `rclone dedupe --by-hash --dedupe-mode list` for duplicates,
// `rclone rmdirs --dry-run --leave-root` for empty folders, `rclone lsjson --min-size` for large files.

const KB = 1024;
const E = 64 * KB;
const LARGE = 1024 * KB;
const MTIME = new Date('2024-05-06T07:08:09Z');

/** Deterministic bytes, so every backend holds exactly the same data. */
function bytes(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  let off = 0;
  for (let i = 0; off < size; i++) {
    const block = createHash('sha256').update(`${seed}:${i}`).digest();
    off += block.copy(out, off);
  }
  return out;
}

function twin(of: Buffer): Buffer {
  const b = Buffer.from(of);
  const mid = Math.floor(b.length / 2);
  b[mid] = (b[mid] as number) ^ 0x5a;
  return b;
}

const beach = bytes('beach', 300 * KB);
const report = bytes('report', 50 * KB);
const movie = bytes('movie', 1536 * KB);
const twinA = bytes('twin', 400 * KB);

/** The planted files: path -> content. */
const FILES: Record<string, Buffer> = {
  '/Photos/2023/beach.jpg': beach,
  '/Photos/backup/beach.jpg': beach,
  '/Backup/old/beach (1).jpg': beach,
  '/Docs/report.pdf': report,
  '/Docs/Archive/report-copy.pdf': report,
  '/Docs/tiny.txt': Buffer.from('hello world\n'),
  '/Notes/tiny-copy.txt': Buffer.from('hello world\n'),
  // Near-duplicates: same size, different content (in the middle; from the first byte).
  '/Near/twin-a.bin': twinA,
  '/Near/twin-b.bin': twin(twinA),
  '/Near/other-300k.jpg': bytes('other', 300 * KB),
  '/Near/other-50k.pdf': bytes('other50', 50 * KB),
  '/Near/tiny-other.txt': Buffer.from('hello World\n'),
  // Large files (threshold 1 MiB in these tests), one of them duplicated.
  '/Video/movie.mp4': movie,
  '/Video/Copies/movie.mp4': movie,
  '/Video/clip.mov': bytes('clip', 1200 * KB),
  '/Video/short.mp4': bytes('short', 900 * KB),
  '/Music/exactly-1m.flac': bytes('exact', LARGE),
  // Empty files free nothing and are not duplicates.
  '/zero-a.txt': Buffer.alloc(0),
  '/Notes/zero-b.txt': Buffer.alloc(0),
};
const EMPTY_FOLDERS = ['/Empty/Nested/Deeper', '/Empty/Other', '/Solo', '/Docs/Archive/EmptyInside', '/Photos/2024'];

async function plant(fx: BackendFixture): Promise<void> {
  for (const dir of EMPTY_FOLDERS) await fx.provider.mkdir(dir);
  for (const [path, data] of Object.entries(FILES)) {
    await fx.provider.put(path, Readable.from([data]), { size: data.length, modTime: MTIME });
  }
}

/** rclone's duplicate groups (paths relative to the root, sorted), leaving out empty files. */
async function rcloneDuplicates(remote: string, flags: string[], env: NodeJS.ProcessEnv): Promise<string[][]> {
  const out = await run('rclone', ['dedupe', '--by-hash', '--dedupe-mode', 'list', remote, ...flags], { env });
  const groups: string[][] = [];
  let current: { paths: string[]; size: number } | undefined;
  for (const line of out.split('\n')) {
    if (/^\S+: \d+ duplicates$/.test(line)) {
      current = { paths: [], size: -1 };
      groups.push(current.paths);
      continue;
    }
    const m = /^\s+\d+:\s+(\d+) bytes, [^,]+, (.+)$/.exec(line);
    if (m && current) {
      current.paths.push(`/${m[2]}`);
      if (Number(m[1]) === 0) current.paths.push('\u0000empty');
    }
  }
  return groups
    .filter((g) => !g.includes('\u0000empty'))
    .map((g) => g.sort())
    .sort();
}

/** Every folder `rclone rmdirs` would remove, as /paths. */
async function rcloneEmptyFolders(remote: string, flags: string[]): Promise<string[]> {
  const args = ['rmdirs', '--dry-run', '--leave-root', remote, ...flags];
  // rclone reports each folder on stderr as a NOTICE; `run` gives stdout, so ask for everything on stdout.
  const out = await run('sh', ['-c', `rclone ${args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')} 2>&1`], {
    env: RCLONE_ENV,
  });
  return [...out.matchAll(/NOTICE: (.+): Skipped remove directory as --dry-run is set/g)].map((m) => `/${m[1]}`).sort();
}

async function rcloneLarge(remote: string, flags: string[]): Promise<string[]> {
  const out = await run('rclone', ['lsjson', '-R', '--files-only', '--min-size', `${LARGE}B`, remote, ...flags], {
    env: RCLONE_ENV,
  });
  return (JSON.parse(out) as Array<{ Path: string }>).map((e) => `/${e.Path}`).sort();
}

/** The oracle's folder list as top-most folders with nested counts. */
function topMost(all: string[]): Array<[string, number]> {
  const set = new Set(all);
  const parent = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';
  const tops = all.filter((p) => !set.has(parent(p)));
  return tops
    .map((t): [string, number] => [t, all.filter((p) => p.startsWith(`${t}/`)).length])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

const groupPaths = (r: CleanupScanResult) => r.duplicateGroups.map((g) => g.files.map((f) => f.path).sort()).sort();

const backends: BackendName[] = ['local', 's3', 'webdav'];

describe.each(backends)('clean-up scan of a %s cloud', (name) => {
  let fx: BackendFixture;
  let result: CleanupScanResult;
  let recorder: ReturnType<typeof recordReads>;

  beforeAll(async () => {
    fx = await startBackend(name);
    await plant(fx);
    recorder = recordReads(fx.provider);
    result = await scanForCleanup({ provider: recorder.provider, largeThreshold: LARGE });
  }, 120_000);
  afterAll(async () => {
    await fx?.stop();
  });

  /** The time files were given, where the service keeps it (plain WebDAV keeps its own upload time). */
  const keptTime = () => (fx.provider.features.setModTime ? MTIME.getTime() : expect.any(Number));

  /**
   * rclone's view of this backend for dedupe. A plain WebDAV server reports no hashes, so there
   * rclone's hasher backend reads every file to compute them (auto_size), with its cache in a temp dir.
   */
  const oracle = (): { remote: string; env: NodeJS.ProcessEnv } => {
    const remote = fx.remote('/').replace(/\/$/, '');
    if (name !== 'webdav') return { remote, env: RCLONE_ENV };
    const m = /url='([^']+)',vendor=other,user=([^,]+),pass=([^:]+):/.exec(remote);
    if (!m) throw new Error(`unexpected WebDAV remote ${remote}`);
    return {
      remote: 'hashed:',
      env: {
        ...RCLONE_ENV,
        RCLONE_CACHE_DIR: mkdtempSync(join(tmpdir(), 'skyferry-rclone-cache-')),
        RCLONE_CONFIG_DAV_TYPE: 'webdav',
        RCLONE_CONFIG_DAV_URL: m[1],
        RCLONE_CONFIG_DAV_VENDOR: 'other',
        RCLONE_CONFIG_DAV_USER: m[2],
        RCLONE_CONFIG_DAV_PASS: m[3],
        RCLONE_CONFIG_HASHED_TYPE: 'hasher',
        RCLONE_CONFIG_HASHED_REMOTE: 'dav:',
        RCLONE_CONFIG_HASHED_HASHES: 'md5',
        RCLONE_CONFIG_HASHED_MAX_AGE: 'off',
        RCLONE_CONFIG_HASHED_AUTO_SIZE: '10G',
      },
    };
  };

  it('finds the duplicate groups rclone dedupe --by-hash finds, near-duplicates apart', async () => {
    const { remote, env } = oracle();
    const expected = await rcloneDuplicates(remote, fx.rcloneFlags, env);
    if (env.RCLONE_CACHE_DIR) rmSync(env.RCLONE_CACHE_DIR, { recursive: true, force: true });
    expect(expected).toEqual([
      ['/Backup/old/beach (1).jpg', '/Photos/2023/beach.jpg', '/Photos/backup/beach.jpg'],
      ['/Docs/Archive/report-copy.pdf', '/Docs/report.pdf'],
      ['/Docs/tiny.txt', '/Notes/tiny-copy.txt'],
      ['/Video/Copies/movie.mp4', '/Video/movie.mp4'],
    ]);
    expect(groupPaths(result)).toEqual(expected);
    const movieGroup = result.duplicateGroups[0];
    expect(movieGroup).toMatchObject({ size: movie.length });
    expect(movieGroup?.files.map((f) => [f.category, f.modTime])).toEqual([
      ['video', keptTime()],
      ['video', keptTime()],
    ]);
  });

  it('finds the empty folders rclone rmdirs would remove, reporting the top-most ones', async () => {
    // rclone 1.60 sees S3 folder markers only in delimited listings, so not with --fast-list here.
    const flags = fx.rcloneFlags.filter((f) => f !== '--fast-list');
    const expected = await rcloneEmptyFolders(fx.remote('/').replace(/\/$/, ''), flags);
    expect(expected).toEqual(
      [
        '/Docs/Archive/EmptyInside',
        '/Empty',
        '/Empty/Nested',
        '/Empty/Nested/Deeper',
        '/Empty/Other',
        '/Photos/2024',
        '/Solo',
      ].sort(),
    );
    expect(result.emptyFolders.map((f) => [f.path, f.nestedCount])).toEqual(topMost(expected));
    expect(result.emptyFolderTotal).toBe(expected.length);
  });

  it('finds the large files rclone lists at or above the threshold, largest first', async () => {
    const expected = await rcloneLarge(fx.remote('/').replace(/\/$/, ''), fx.rcloneFlags);
    expect(expected).toEqual([
      '/Music/exactly-1m.flac',
      '/Video/Copies/movie.mp4',
      '/Video/clip.mov',
      '/Video/movie.mp4',
    ]);
    expect(result.largeFiles.map((f) => f.path)).toEqual([
      '/Video/Copies/movie.mp4',
      '/Video/movie.mp4',
      '/Video/clip.mov',
      '/Music/exactly-1m.flac',
    ]);
    expect(result.largeFiles[0]).toEqual({
      path: '/Video/Copies/movie.mp4',
      size: movie.length,
      modTime: keptTime(),
      category: 'video',
    });
  });

  it('reads no byte of any file twice, and only what it must', () => {
    expect(overlappingReads(recorder.reads)).toEqual([]);
    expect(result.stats.bytesRead).toBe(recorder.bytes());
    if (fx.provider.hashes.has('md5') && name === 's3') {
      // The service reports MD5s for these objects: nothing is downloaded.
      expect(recorder.bytes()).toBe(0);
      return;
    }
    const sizes = (paths: string[]) => paths.reduce((n, p) => n + (FILES[p]?.length ?? 0), 0);
    // Small candidates whole; 300 KiB, 400 KiB and 1.5 MiB candidates at both edges; the true copies
    // and the middle-twins also in the middle. Nothing of unique sizes, nothing of empty files.
    const small = sizes([
      '/Docs/report.pdf',
      '/Docs/Archive/report-copy.pdf',
      '/Near/other-50k.pdf',
      '/Docs/tiny.txt',
      '/Notes/tiny-copy.txt',
      '/Near/tiny-other.txt',
    ]);
    const edged = ['/Photos/2023/beach.jpg', '/Photos/backup/beach.jpg', '/Backup/old/beach (1).jpg'];
    const edgedAll = [...edged, '/Near/other-300k.jpg', '/Near/twin-a.bin', '/Near/twin-b.bin'];
    const middles = [...edged, '/Near/twin-a.bin', '/Near/twin-b.bin', '/Video/movie.mp4', '/Video/Copies/movie.mp4'];
    const expected =
      small + (edgedAll.length + 2) * 2 * E + middles.reduce((n, p) => n + (FILES[p]?.length ?? 0) - 2 * E, 0);
    expect(recorder.bytes()).toBe(expected);
    const total = Object.values(FILES).reduce((n, b) => n + b.length, 0);
    expect(recorder.bytes()).toBeLessThan(total);
  });
});

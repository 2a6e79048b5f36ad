/**
 * Clean-up benchmark: Skyferry's duplicate scan next to `rclone dedupe --by-hash --dedupe-mode
 * list` on the same data in the same run: 50,000 files (10 % of them extra copies of others, plus
 * near-duplicates: same size, one byte different in the middle) in about 2,000 folders.
 *
 *   npm run bench:cleanup
 *   BENCH_FILES=10000 npm run bench:cleanup         # a smaller data set
 *   BENCH_TARGETS=local npm run bench:cleanup        # local folder only (default local,webdav)
 *
 * Targets: the local folder, and the same folder served by Apache mod_dav (WebDAV reports no hashes,
 * so rclone reads every file through its hasher backend, and Skyferry reads what it must). Each tool
 * runs in its own process; bytes read are the kernel's count of bytes the process read (rchar, from
 * /proc/<pid>/io, sampled until exit; Skyferry's during its scan), and for Skyferry also the file
 * content it read (the engine's own count, which the engine's tests check against a recording provider). Both
 * tools must find the same groups, or the benchmark fails. The data is synced to disk first and then
 * read from the page cache; the tools run alternately, rclone first, and each one's faster run counts.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openLocal, openWebdav, type Provider } from '@skyferry/providers';
import { scanForCleanup } from '@skyferry/engine';
import { run, startApacheWebdav, type WebdavServer } from '@skyferry/testing';
import { table, vmHwm } from './lib/measure.ts';
import { prng } from './lib/random.ts';

const FILES = Number(process.env.BENCH_FILES ?? 50_000);
const TARGETS = (process.env.BENCH_TARGETS ?? 'local,webdav').split(',').filter(Boolean);
/** Rounds per target (rclone's WebDAV run, through its hasher, takes minutes: one round there). */
const ROUNDS = (target: string) => Number(process.env.BENCH_ROUNDS ?? (target === 'local' ? 2 : 1));
const RCLONE_ENV = { RCLONE_CONFIG: '/dev/null', AWS_CA_BUNDLE: '' };
const MiB = 1024 * 1024;
const KiB = 1024;

/** 8 MiB of incompressible bytes; each file is a slice of it with its own number in the first bytes. */
function pool(): Buffer {
  const rnd = prng(7);
  const b = Buffer.alloc(8 * MiB);
  for (let i = 0; i < b.length; i += 4) b.writeUInt32LE(Math.floor(rnd() * 0x1_0000_0000), i);
  return b;
}

/** Sizes like a user's files: mostly small documents and photos, some media, a few big ones. */
function sizeOf(r: number, r2: number): number {
  if (r < 0.88) return Math.floor(1 * KiB + r2 * 31 * KiB);
  if (r < 0.98) return Math.floor(32 * KiB + r2 * 224 * KiB);
  return Math.floor(256 * KiB + r2 * 1792 * KiB);
}

interface Dataset {
  files: number;
  bytes: number;
  copies: number;
  twins: number;
}

/**
 * Writes the data set: 90 % originals (1 % of them with a near-duplicate twin), 10 % extra copies of
 * randomly chosen originals, spread over ~2,000 folders up to three deep.
 */
function generate(root: string, total: number): Dataset {
  const rnd = prng(42);
  const data = pool();
  const folders: string[] = [];
  const top = Math.max(4, Math.round(total / 2500));
  for (let a = 0; a < top; a++) {
    for (let b = 0; b < 10; b++) {
      for (let c = 0; c < 5; c++) folders.push(`dir-${a}/sub-${b}/leaf-${c}`);
    }
  }
  for (const f of folders) mkdirSync(join(root, f), { recursive: true });
  const folder = () => folders[Math.floor(rnd() * folders.length)] as string;
  const exts = ['jpg', 'pdf', 'docx', 'mp3', 'txt', 'png', 'mp4', 'xlsx', 'zip', 'bin'];
  const copies = Math.round(total * 0.1);
  const originals: Array<{ path: string; content: Buffer }> = [];
  let bytes = 0;
  let twins = 0;
  let n = 0;
  const write = (path: string, content: Buffer) => {
    writeFileSync(join(root, path), content);
    bytes += content.length;
    n++;
  };
  const contentOf = (i: number, size: number) => {
    const off = Math.floor(rnd() * (data.length - size - 8));
    const c = Buffer.from(data.subarray(off, off + size));
    c.writeUInt32LE(i, 0);
    if (size >= 8) c.writeUInt32LE(Math.floor(rnd() * 0x1_0000_0000), 4);
    return c;
  };
  while (n < total - copies) {
    const size = sizeOf(rnd(), rnd());
    const content = contentOf(n, size);
    const path = `${folder()}/file-${n}.${exts[n % exts.length]}`;
    write(path, content);
    originals.push({ path, content });
    // 1 % get a near-duplicate: same size, same ends, one byte different in the middle.
    if (rnd() < 0.01 && n < total - copies) {
      const twin = Buffer.from(content);
      const mid = Math.floor(size / 2);
      twin[mid] = (twin[mid] as number) ^ 0xff;
      write(`${folder()}/near-${n}.${exts[n % exts.length]}`, twin);
      twins++;
    }
  }
  for (let i = 0; i < copies; i++) {
    const o = originals[Math.floor(rnd() * originals.length)] as { path: string; content: Buffer };
    const base = o.path.slice(o.path.lastIndexOf('/') + 1);
    write(`${folder()}/copy-${i}-${base}`, o.content);
  }
  return { files: n, bytes, copies, twins };
}

interface ProcessRun {
  ms: number;
  peakRss: number;
  /** Bytes the process read (rchar), last sample before exit. */
  rchar: number;
  stdout: string;
}

function rcharOf(pid: number): number | undefined {
  try {
    const m = /rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a program to completion, sampling its peak RSS and bytes read every 10 ms. */
function measure(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let rchar = 0;
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setInterval(() => {
      if (!child.pid) return;
      peak = Math.max(peak, vmHwm(child.pid) ?? 0);
      rchar = Math.max(rchar, rcharOf(child.pid) ?? 0);
    }, 10);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`${cmd} exited ${code}\n${stderr.slice(-3000)}`));
      else resolve({ ms: performance.now() - started, peakRss: peak, rchar, stdout });
    });
  });
}

interface ScanReport {
  scanMs: number;
  contentBytes: number;
  rcharDuringScan: number;
  reads: number;
  files: number;
  groups: string[][];
}

/** The child process: one Skyferry scan of a target, reporting JSON on stdout. */
async function scanChild(target: string, spec: string): Promise<void> {
  const s = JSON.parse(spec) as { dir?: string; url?: string; username?: string; password?: string };
  const base: Provider =
    target === 'local'
      ? await openLocal({ path: s.dir as string }, { localRoots: [s.dir as string] })
      : await openWebdav({ url: s.url as string, username: s.username as string, password: s.password as string });
  const before = rcharOf(process.pid) ?? 0;
  const t0 = performance.now();
  const result = await scanForCleanup({ provider: base, modes: 2 });
  const scanMs = performance.now() - t0;
  const report: ScanReport = {
    scanMs,
    contentBytes: result.stats.bytesRead,
    rcharDuringScan: (rcharOf(process.pid) ?? 0) - before,
    reads: result.stats.reads,
    files: result.stats.files,
    groups: result.duplicateGroups.map((g) => g.files.map((f) => f.path.slice(1)).sort()),
  };
  await base.close?.();
  process.stdout.write(JSON.stringify(report));
}

/** rclone's groups from `dedupe --dedupe-mode list` output. */
function parseRclone(out: string): string[][] {
  const groups: string[][] = [];
  let current: string[] | undefined;
  for (const line of out.split('\n')) {
    if (/^\S+: \d+ duplicates$/.test(line)) {
      current = [];
      groups.push(current);
      continue;
    }
    const m = /^\s+\d+:\s+\d+ bytes, [^,]+, (.+)$/.exec(line);
    if (m && current) current.push(m[1] as string);
  }
  return groups.map((g) => g.sort());
}

const key = (groups: string[][]) =>
  groups
    .map((g) => g.join('\u0000'))
    .sort()
    .join('\n');

const mb = (n: number) => (n / 1e6).toFixed(1);
const sec = (ms: number) => (ms / 1000).toFixed(2);

async function main(): Promise<void> {
  if (process.argv[2] === '--scan') {
    await scanChild(process.argv[3] as string, process.argv[4] as string);
    return;
  }
  const self = fileURLToPath(import.meta.url);
  let apache: WebdavServer | undefined;
  let scratch: string | undefined;
  let dir: string;
  if (TARGETS.includes('webdav')) {
    // Apache serves its folder straight from disk: the data set is written there, and the local
    // target scans the same folder.
    apache = await startApacheWebdav();
    dir = apache.dir;
  } else {
    scratch = mkdtempSync(join(tmpdir(), 'skyferry-bench-cleanup-'));
    dir = scratch;
  }
  try {
    console.log(`Generating ${FILES.toLocaleString('en')} files in ${dir} ...`);
    const t0 = performance.now();
    const ds = generate(dir, FILES);
    // Written data goes to disk before anything is timed, so no run competes with the write-back.
    await run('sync', []);
    console.log(
      `  ${ds.files.toLocaleString('en')} files, ${mb(ds.bytes)} MB, ${ds.copies} extra copies, ${ds.twins} near-duplicates, ` +
        `${sec(performance.now() - t0)} s`,
    );
    const rows: (string | number)[][] = [];
    for (const target of TARGETS) {
      const spec =
        target === 'local' ? { dir } : { url: apache?.url, username: apache?.username, password: apache?.password };
      let rcloneRemote: string;
      const env: NodeJS.ProcessEnv = { ...RCLONE_ENV };
      let cacheDir: string | undefined;
      if (target === 'local') rcloneRemote = dir;
      else {
        const pass = (await run('rclone', ['obscure', apache?.password ?? ''])).trim();
        cacheDir = mkdtempSync(join(tmpdir(), 'skyferry-bench-rclone-cache-'));
        Object.assign(env, {
          RCLONE_CACHE_DIR: cacheDir,
          RCLONE_CONFIG_DAV_TYPE: 'webdav',
          RCLONE_CONFIG_DAV_URL: apache?.url,
          RCLONE_CONFIG_DAV_VENDOR: 'other',
          RCLONE_CONFIG_DAV_USER: apache?.username,
          RCLONE_CONFIG_DAV_PASS: pass,
          RCLONE_CONFIG_HASHED_TYPE: 'hasher',
          RCLONE_CONFIG_HASHED_REMOTE: 'dav:',
          RCLONE_CONFIG_HASHED_HASHES: 'md5',
          RCLONE_CONFIG_HASHED_MAX_AGE: 'off',
          RCLONE_CONFIG_HASHED_AUTO_SIZE: '100G',
        });
        rcloneRemote = 'hashed:';
      }
      // Alternate the tools (rclone first) and keep each one's faster run: both then read from a warm
      // page cache, and a burst of load from other work on the machine hurts one run, not the figure.
      let sky: ProcessRun | undefined;
      let report: ScanReport | undefined;
      let rc: ProcessRun | undefined;
      for (let round = 1; round <= ROUNDS(target); round++) {
        console.log(`[${target}] round ${round}: rclone dedupe --by-hash ...`);
        const r = await measure('rclone', ['dedupe', '--by-hash', '--dedupe-mode', 'list', rcloneRemote], env);
        if (!rc || r.ms < rc.ms) rc = r;
        if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
        if (cacheDir) mkdirSync(cacheDir, { recursive: true });
        console.log(`[${target}] round ${round}: rclone ${sec(r.ms)} s; Skyferry scan ...`);
        const k = await measure(process.execPath, [self, '--scan', target, JSON.stringify(spec)]);
        const kr = JSON.parse(k.stdout) as ScanReport;
        console.log(`[${target}] round ${round}: Skyferry ${sec(k.ms)} s (scan ${sec(kr.scanMs)} s)`);
        if (!sky || !report || kr.scanMs < report.scanMs) {
          sky = k;
          report = kr;
        }
      }
      if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
      if (!sky || !report || !rc) throw new Error('no run');
      const theirs = parseRclone(rc.stdout);
      const same = key(theirs) === key(report.groups);
      if (!same) {
        throw new Error(
          `[${target}] the tools disagree: Skyferry ${report.groups.length} groups, rclone ${theirs.length}`,
        );
      }
      const label = target === 'local' ? 'local folder' : 'WebDAV (Apache mod_dav)';
      rows.push(
        [
          label,
          'Skyferry',
          mb(report.contentBytes),
          mb(report.rcharDuringScan),
          sec(report.scanMs),
          sec(sky.ms),
          `${Math.round(sky.peakRss / MiB)} MiB`,
          report.groups.length,
        ],
        [label, 'rclone 1.60', '', mb(rc.rchar), '', sec(rc.ms), `${Math.round(rc.peakRss / MiB)} MiB`, theirs.length],
      );
      console.log(
        `[${target}] same ${theirs.length} groups; Skyferry read ${mb(report.contentBytes)} MB of content in ` +
          `${report.reads} reads (the whole process read ${mb(sky.rchar)} MB with Node's start-up), ` +
          `${sec(report.scanMs)} s; rclone ${mb(rc.rchar)} MB, ${sec(rc.ms)} s`,
      );
    }
    console.log(
      `\n${FILES.toLocaleString('en')} files, ${mb(ds.bytes)} MB; load average ${loadavg()[0]?.toFixed(1)} on ` +
        `${cpus().length} cores\n`,
    );
    console.log(
      table(
        ['target', 'tool', 'content read (MB)', 'bytes read (MB)', 'scan (s)', 'whole run (s)', 'peak RSS', 'groups'],
        rows,
      ),
    );
  } finally {
    await apache?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  existsSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openProvider } from '../../api/registry.ts';
import { ProviderError } from '../../api/errors.ts';
import '../index.ts';
import type { LocalProvider } from './local.ts';
import { LOCAL_STALE_TEMP_MS, LOCAL_TEMP_PREFIX, SyncDisk, openLocal, turnDue } from './local.ts';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof ProviderError ? err.code : `not a ProviderError: ${String(err)}`;
  }
}

describe('local backend confinement', () => {
  let base: string;
  let root: string;
  let outside: string;
  let provider: LocalProvider;

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-local-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(join(root, 'box'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    writeFileSync(join(root, 'box', 'inner.txt'), 'inner');
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'box', 'secret-link.txt'));
    symlinkSync(join(root, 'box', 'inner.txt'), join(root, 'inside-link.txt'));
    provider = await openLocal({ path: root }, { localRoots: [root] });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('is registered as kind local and refuses folders outside the operator roots', async () => {
    const p = await openProvider('local', { path: join(root, 'box') }, { localRoots: [root] });
    expect(p.kind).toBe('local');
    expect((await p.list('/')).entries.map((e) => `${e.name}:${e.link?.broken ?? ''}`)).toEqual([
      'inner.txt:',
      'secret-link.txt:outside',
    ]);
    expect(await code(openProvider('local', { path: outside }, { localRoots: [root] }))).toBe('permission');
    expect(await code(openProvider('local', { path: join(root, 'escape') }, { localRoots: [root] }))).toBe(
      'permission',
    );
    expect(await code(openProvider('local', { path: root }, { localRoots: [] }))).toBe('permission');
    expect(await code(openProvider('local', { path: 'relative/path' }, { localRoots: [root] }))).toBe('invalid_name');
  });

  it('detects that this disk tells names apart by case', () => {
    expect(provider.features.caseInsensitive).toBe(false);
  });

  it('never reads, lists or writes through a link that leaves the root', async () => {
    expect(await code(provider.stat('/escape/secret.txt'))).toBe('permission');
    expect(await code(provider.openRead('/box/secret-link.txt'))).toBe('permission');
    expect(await code(provider.list('/escape'))).toBe('permission');
    expect(await code(provider.put('/escape/new.txt', Readable.from([Buffer.from('x')]), { size: 1 }))).toBe(
      'permission',
    );
    expect(await code(provider.mkdir('/escape/sub'))).toBe('permission');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'sub'))).toBe(false);
    // Listings show links as themselves: one inside the root with what it points to, one that leaves
    // it as an empty file that says so (nothing about the outside is shown).
    const listed = (await provider.list('/')).entries.map((e) => ({
      name: e.name,
      kind: e.kind,
      size: e.size,
      link: e.link,
    }));
    expect(listed).toEqual([
      { name: 'box', kind: 'dir', size: 0, link: undefined },
      { name: 'escape', kind: 'file', size: 0, link: { broken: 'outside' } },
      { name: 'inside-link.txt', kind: 'file', size: 5, link: { target: '/box/inner.txt' } },
    ]);
    expect((await provider.list('/box')).entries.map((e) => `${e.name}:${e.link?.broken ?? ''}`)).toEqual([
      'inner.txt:',
      'secret-link.txt:outside',
    ]);
  });

  it('small files read, written and hashed in a folder that was swapped for a link leaving the root are refused', async () => {
    const small = (text: string) => Buffer.from(text);
    expect((await provider.putSmall('/box/a.txt', small('new'), { size: 3 })).size).toBe(3);
    expect((await provider.readSmall('/box/a.txt', 1024))?.toString()).toBe('new');
    expect((await provider.readSmall('/inside-link.txt', 1024))?.toString()).toBe('inner');
    expect(await code(provider.readSmall('/box/secret-link.txt', 1024))).toBe('permission');
    // The folder is moved away and a link of its name leads outside, where a file of the same name waits.
    renameSync(join(root, 'box'), join(root, 'box-before'));
    symlinkSync(outside, join(root, 'box'));
    writeFileSync(join(outside, 'a.txt'), 'outside');
    expect(await code(provider.readSmall('/box/a.txt', 1024))).toBe('permission');
    expect(await code(provider.hash('/box/a.txt', 'md5'))).toBe('permission');
    expect(await code(provider.putSmall('/box/b.txt', small('b'), { size: 1 }))).toBe('permission');
    expect(await code(provider.putSmall('/box/a.txt', small('b'), { size: 1 }))).toBe('permission');
    expect(existsSync(join(outside, 'b.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'a.txt'), 'utf8')).toBe('outside');
    // Its files are where the folder went.
    expect((await provider.readSmall('/box-before/a.txt', 1024))?.toString()).toBe('new');
  });

  it('refuses dot-dot segments and NUL in paths and names', async () => {
    expect(await code(provider.stat('/box/../../outside/secret.txt'))).toBe('invalid_name');
    expect(await code(provider.put('/../x.txt', Readable.from([]), { size: 0 }))).toBe('invalid_name');
    expect(await code(provider.rename('/box/inner.txt', '../inner.txt'))).toBe('invalid_name');
    expect(await code(provider.rename('/box/inner.txt', 'a/b'))).toBe('invalid_name');
    expect(await code(provider.stat('/box/a\0b'))).toBe('invalid_name');
  });

  it('removing a link that leaves the root is refused and the outside stays intact', async () => {
    expect(await code(provider.rmdir('/escape'))).toBe('permission');
    expect(await code(provider.remove('/box/secret-link.txt'))).toBe('permission');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('moves, copies and trashes never reach through a link that leaves the root', async () => {
    const inner = await provider.stat('/box/inner.txt');
    // Into the outside, through a link on the way.
    expect(await code(provider.move(inner, '/escape/moved.txt'))).toBe('permission');
    expect(await code(provider.copy(inner, '/escape/copied.txt'))).toBe('permission');
    expect(await code(provider.rename('/escape', 'renamed'))).toBe('permission');
    // Out of the outside: a source the caller names by a path through a link.
    const secret = { path: '/escape/secret.txt', name: 'secret.txt', kind: 'file' as const, size: 6 };
    expect(await code(provider.copy(secret, '/box/stolen.txt'))).toBe('permission');
    expect(await code(provider.move(secret, '/box/stolen.txt'))).toBe('permission');
    const link = { path: '/box/secret-link.txt', name: 'secret-link.txt', kind: 'file' as const, size: 6 };
    expect(await code(provider.copy(link, '/box/stolen.txt'))).toBe('permission');
    expect(await code(provider.move(link, '/box/stolen.txt'))).toBe('permission');
    expect(await code(provider.trash('/box/secret-link.txt'))).toBe('permission');
    expect(await code(provider.trash('/escape'))).toBe('permission');
    expect(await code(provider.hash('/escape/secret.txt', 'sha256'))).toBe('permission');
    expect(existsSync(join(root, 'box', 'stolen.txt'))).toBe(false);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    // Writing where a link to the outside sits replaces the link inside the root; the outside file is untouched.
    await provider.put('/box/secret-link.txt', Readable.from([Buffer.from('mine')]), { size: 4 });
    expect((await readAll(await provider.openRead('/box/secret-link.txt'))).toString()).toBe('mine');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    // The trash folder is out of reach by name.
    expect(await code(provider.put('/.skyferry-trash/x.txt', Readable.from([Buffer.from('x')]), { size: 1 }))).toBe(
      'invalid_name',
    );
    expect(await code(provider.list('/.skyferry-trash'))).toBe('not_found');
  });

  it('a cancelled write leaves no file and no temporary file behind', async () => {
    const ac = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        sent += 64 * 1024;
        if (sent > 1024 * 1024) ac.abort();
        this.push(Buffer.alloc(64 * 1024, 1));
      },
    });
    expect(await code(provider.put('/box/big.bin', body, { size: -1 }, { signal: ac.signal }))).toBe('canceled');
    expect(readdirSync(join(root, 'box')).sort()).toEqual(['inner.txt', 'secret-link.txt']);
  });

  it('a hash cancelled as its file opens is refused as canceled, and nothing is thrown past it', async () => {
    // Ctrl-C during a check: hashes whose files were being opened found their streams destroyed at
    // once, and the error event, emitted while the hasher was still being made, ended the process.
    // (A file above the small-file limit: those are streamed.)
    const big = Buffer.alloc(1024 * 1024, 7);
    writeFileSync(join(root, 'box', 'big.bin'), big);
    const uncaught: unknown[] = [];
    const heard = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', heard);
    try {
      for (const type of ['md5', 'sha1', 'sha256'] as const) {
        const ac = new AbortController();
        const asked = code(provider.hash('/box/big.bin', type, { signal: ac.signal }));
        ac.abort();
        expect(await asked).toBe('canceled');
        expect(await code(provider.hash('/box/big.bin', type, { signal: ac.signal }))).toBe('canceled');
        expect(await code(provider.hash('/box/inner.txt', type, { signal: ac.signal }))).toBe('canceled');
      }
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('uncaughtException', heard);
    }
    expect(uncaught).toEqual([]);
    // Not cancelled, the same files hash as before.
    expect(await provider.hash('/box/inner.txt', 'md5')).toBe('ea97586b4aa0c141e4456912f3325f7f');
    expect(await provider.hash('/box/big.bin', 'sha256')).toBe(createHash('sha256').update(big).digest('hex'));
  });

  it('hashes small files from one read and larger ones streamed, with the same answers and errors', async () => {
    const KiB = 1024;
    // Around the small-file limit (128 KiB), both ways.
    for (const size of [0, 1, 4 * KiB, 128 * KiB - 1, 128 * KiB, 128 * KiB + 1, 3 * 128 * KiB + 5]) {
      const data = Buffer.alloc(size);
      for (let i = 0; i < size; i++) data[i] = (i * 31 + (i >> 9)) & 255;
      writeFileSync(join(root, 'box', `s${size}.bin`), data);
      for (const type of ['md5', 'sha1', 'sha256'] as const) {
        expect(await provider.hash(`/box/s${size}.bin`, type), `${type} of ${size} bytes`).toBe(
          createHash(type).update(data).digest('hex'),
        );
      }
    }
    // Many at once (a check hashes in parallel): each its own file's.
    const many = await Promise.all(
      [1, 4 * KiB, 128 * KiB, 1, 4 * KiB, 128 * KiB].map((size) => provider.hash(`/box/s${size}.bin`, 'md5')),
    );
    expect(new Set(many).size).toBe(3);
    expect(await code(provider.hash('/box', 'md5'))).toBe('is_dir');
    expect(await code(provider.hash('/box/missing.txt', 'md5'))).toBe('not_found');
    expect(await code(provider.hash('/box/inner.txt/below', 'md5'))).toBe('not_found');
    expect(await code(provider.hash('/box/secret-link.txt', 'md5'))).toBe('permission');
    expect(await provider.hash('/inside-link.txt', 'md5')).toBe('ea97586b4aa0c141e4456912f3325f7f');
    expect(await code(provider.hash('/.skyferry-trash/x', 'md5'))).toBe('not_found');
  });

  it("hashes many files at once on worker threads with the answers and errors of the event loop's own thread", async () => {
    const threads = await openLocal({ path: root }, { localRoots: [root] }, { hashThreads: true });
    const single = await openLocal({ path: root }, { localRoots: [root] }, { hashThreads: false });
    mkdirSync(join(root, 'box', 'many'), { recursive: true });
    const datas = Array.from({ length: 300 }, (_, i) => {
      const data = Buffer.alloc((i * 7919) % 300_000);
      for (let j = 0; j < data.length; j++) data[j] = (j * 13 + i) & 255;
      writeFileSync(join(root, 'box', 'many', `f${i}.bin`), data);
      return data;
    });
    const paths = datas.map((_, i) => `/box/many/f${i}.bin`);
    const both = await Promise.all([
      Promise.all(paths.map((p) => threads.hash(p, 'sha1'))),
      Promise.all(paths.map((p) => single.hash(p, 'sha1'))),
    ]);
    expect(both[0]).toEqual(datas.map((d) => createHash('sha1').update(d).digest('hex')));
    expect(both[1]).toEqual(both[0]);
    for (const p of ['/box', '/box/missing.txt', '/box/secret-link.txt', '/.skyferry-trash/x']) {
      expect(await code(threads.hash(p, 'md5')), p).toBe(await code(single.hash(p, 'md5')));
    }
  });

  it('hands the hashing threads many files a message, each answered with its own hash', async () => {
    // Every answer takes the CPU from its worker for the event loop's thread: a check of many
    // small files spent a second of CPU on messages that carried a few files each.
    const threads = await openLocal({ path: root }, { localRoots: [root] }, { hashThreads: true });
    mkdirSync(join(root, 'box', 'batch'), { recursive: true });
    const datas = Array.from({ length: 600 }, (_, i) => {
      const data = Buffer.from(`file ${i} `.repeat(i % 50));
      writeFileSync(join(root, 'box', 'batch', `f${i}.txt`), data);
      return data;
    });
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    try {
      // As a check asks: 128 files in flight, the next asked as each answer comes.
      const hashes: (string | undefined)[] = [];
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < datas.length; i = next++)
          hashes[i] = await threads.hash(`/box/batch/f${i}.txt`, 'md5');
      };
      await Promise.all(Array.from({ length: 128 }, lane));
      expect(hashes).toEqual(datas.map((d) => createHash('md5').update(d).digest('hex')));
      // Batches of 32 and more: not a message for every few files.
      expect(posted.mock.calls.length).toBeGreaterThan(0);
      expect(posted.mock.calls.length).toBeLessThanOrEqual(600 / 32);
    } finally {
      posted.mockRestore();
    }
  });

  it('without hashing threads (one CPU), streams small-file hashes for a while once half of the synchronous ones were slow (a slow disk keeps the event loop free)', async () => {
    const data = Buffer.from('a small file');
    writeFileSync(join(root, 'box', 'small.txt'), data);
    const md5 = createHash('md5').update(data).digest('hex');
    // Every synchronous hash counts as slow here.
    const slow = await openLocal({ path: root }, { localRoots: [root] }, { syncHashBudgetMs: -1, hashThreads: false });
    const streamed = vi.spyOn(slow, 'openRead');
    for (let i = 0; i < 8; i++) expect(await slow.hash('/box/small.txt', 'md5')).toBe(md5);
    expect(streamed).not.toHaveBeenCalled();
    expect(await slow.hash('/box/small.txt', 'md5')).toBe(md5);
    expect(await slow.hash('/box/inner.txt', 'md5')).toBe('ea97586b4aa0c141e4456912f3325f7f');
    expect(streamed).toHaveBeenCalledTimes(2);
    // A disk that answers within the budget keeps the synchronous read.
    const fast = await openLocal(
      { path: root },
      { localRoots: [root] },
      { syncHashBudgetMs: 60_000, hashThreads: false },
    );
    const read = vi.spyOn(fast, 'openRead');
    for (let i = 0; i < 5; i++) expect(await fast.hash('/box/small.txt', 'md5')).toBe(md5);
    expect(read).not.toHaveBeenCalled();
  });

  it('gives the event loop a turn after one slice of synchronous work, whatever the number of files in flight', async () => {
    // Eight files in flight, each step half a millisecond of synchronous work, as the backend's
    // small-file reads and writes are: between two turns of the event loop (a timer's calls) run
    // the steps of one slice (5 ms) in all, not a slice for each file.
    const step = () => {
      const until = performance.now() + 0.5;
      while (performance.now() < until) {
        // busy, as a synchronous system call is
      }
    };
    let steps = 0;
    let stepsPerTurn: number[] = [];
    let going = true;
    const timer = setInterval(() => {
      stepsPerTurn.push(steps);
      steps = 0;
    }, 0);
    const done = Array.from({ length: 8 }, () => 0);
    const lane = async (_: unknown, i: number) => {
      while (going) {
        for (let t = turnDue(); t; t = turnDue(true)) await t;
        step();
        steps++;
        done[i] = (done[i] ?? 0) + 1;
      }
    };
    const lanes = Array.from({ length: 8 }, lane);
    await new Promise((r) => setTimeout(r, 300));
    going = false;
    await Promise.all(lanes);
    clearInterval(timer);
    stepsPerTurn = stepsPerTurn.slice(1);
    expect(stepsPerTurn.length).toBeGreaterThan(5);
    expect(Math.max(...stepsPerTurn)).toBeLessThanOrEqual(12);
    // Every file moved on.
    expect(done.every((n) => n > 5)).toBe(true);
  });

  it('keeps synchronous calls when a few were slow among fast ones (the process waited for a core), not when half were', () => {
    const disk = new SyncDisk(2);
    const fast = () => disk.took(performance.now());
    const slow = () => disk.took(performance.now() - 50);
    // A busy machine: now and then three slow calls in a row, among fast ones.
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 3; i++) slow();
      for (let i = 0; i < 13; i++) fast();
      expect(disk.usable(), `round ${round}`).toBe(true);
    }
    // A slow disk: most calls slow.
    for (let i = 0; i < 7; i++) slow();
    expect(disk.usable()).toBe(true);
    slow();
    expect(disk.usable()).toBe(false);
  });

  it('tries synchronous calls again soon after a burst of slow ones, later each time they are still slow', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const disk = new SyncDisk(2);
      const slow = () => disk.took(performance.now() - 50);
      const pausedFor = () => {
        let ms = 0;
        for (; !disk.usable(); ms += 100) vi.advanceTimersByTime(100);
        return ms;
      };
      for (let i = 0; i < 8; i++) slow();
      expect(pausedFor()).toBe(1000);
      // Still slow: longer pauses, up to a minute.
      for (let i = 0; i < 8; i++) slow();
      expect(pausedFor()).toBe(2000);
      for (let round = 0; round < 8; round++) for (let i = 0; i < 8; i++) slow();
      expect(pausedFor()).toBe(60_000);
      // Fast for a good while: the next burst pauses for a second again.
      for (let i = 0; i < 300; i++) disk.took(performance.now());
      for (let i = 0; i < 8; i++) slow();
      expect(pausedFor()).toBe(1000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps modification times and hides in-progress temporary files', async () => {
    const modTime = new Date('2021-03-04T05:06:07.000Z');
    writeFileSync(join(root, 'box', LOCAL_TEMP_PREFIX + '0123456789abcdef'), 'x');
    const e = await provider.put('/box/t.txt', Readable.from([Buffer.from('hello')]), { size: 5, modTime });
    expect(e.modTime?.getTime()).toBe(modTime.getTime());
    expect(await readAll(await provider.openRead('/box/t.txt', { range: { start: 1, end: 3 } }))).toEqual(
      Buffer.from('ell'),
    );
    expect((await provider.list('/box')).entries.map((x) => x.name)).toEqual(['inner.txt', 'secret-link.txt', 't.txt']);
    expect(await code(provider.stat('/box/' + LOCAL_TEMP_PREFIX + '0123456789abcdef'))).toBe('not_found');
  });

  it('trash moves items into the hidden trash folder', async () => {
    await provider.trash('/box/inner.txt');
    expect(await code(provider.stat('/box/inner.txt'))).toBe('not_found');
    expect((await provider.list('/')).entries.map((e) => e.name)).not.toContain('.skyferry-trash');
    const bins = readdirSync(join(root, '.skyferry-trash'));
    expect(bins).toHaveLength(1);
    expect(readFileSync(join(root, '.skyferry-trash', bins[0] as string, 'box', 'inner.txt'), 'utf8')).toBe('inner');
  });
});

describe('local backend listings on a disk found slow while it lists', () => {
  let base: string;
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('lists every name of a large folder when its synchronous lstat stops partway (each call over budget)', async () => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-local-slow-'));
    mkdirSync(join(base, 'big'));
    const names = Array.from({ length: 1500 }, (_, i) => `f-${String(i).padStart(4, '0')}.txt`);
    for (const n of names) writeFileSync(join(base, 'big', n), n);
    // A budget below zero: every synchronous slice counts as slow, so the disk is set aside for a
    // while after a few slices and the names no slice reached are stated the async way.
    const slow = await openLocal({ path: base }, { localRoots: [base] }, { syncHashBudgetMs: -1 });
    const listed: string[] = [];
    let token: string | undefined;
    do {
      const page = await slow.list('/big', { pageToken: token, pageSize: 1000 });
      for (const e of page.entries) listed.push(e.name);
      token = page.nextPageToken;
    } while (token);
    expect(listed).toEqual(names);
    const first = (await slow.list('/big', { pageSize: 1000 })).entries;
    expect(first[999]).toMatchObject({ name: names[999], kind: 'file', size: names[999]?.length });
  });
});

describe('local backend: temporary files a cut-off write left behind', () => {
  let base: string;
  let root: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'skyferry-local-tmp-'));
    root = join(base, 'root');
    mkdirSync(join(root, 'in'), { recursive: true });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const temps = (dir: string) => readdirSync(dir).filter((n) => n.startsWith(LOCAL_TEMP_PREFIX));
  const age = (file: string, ms: number) => {
    const t = new Date(Date.now() - ms);
    utimesSync(file, t, t);
  };

  it('a write killed with SIGKILL leaves a temporary file; the next listing of its folder removes it once stale', async () => {
    // Another process writes through the backend and is killed mid-write.
    const script = join(base, 'writer.ts');
    writeFileSync(
      script,
      [
        `import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';`,
        `import { openLocal } from ${JSON.stringify(join(import.meta.dirname, 'local.ts'))};`,
        `const p = await openLocal({ path: ${JSON.stringify(root)} }, { localRoots: [${JSON.stringify(root)}] });`,
        `let sent = 0;`,
        `const body = new Readable({ read() { if (sent < 1 << 20) { sent += 65536; this.push(Buffer.alloc(65536, 7)); } } });`,
        `void p.put('/in/big.bin', body, { size: -1 });`,
        `setInterval(() => undefined, 1000);`,
      ].join('\n'),
    );
    const child = spawn(process.execPath, [script], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 20_000;
      while (temps(join(root, 'in')).length === 0) {
        if (Date.now() > deadline) throw new Error('the writer never started');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    const [left] = temps(join(root, 'in'));
    expect(left).toMatch(/^\.skyferry-tmp-[0-9a-f]{16}$/);
    const p = await openLocal({ path: root }, { localRoots: [root] });
    // Fresh, it may be a write still going on elsewhere: hidden, and kept.
    expect((await p.list('/in')).entries).toEqual([]);
    expect(temps(join(root, 'in'))).toEqual([left]);
    // Untouched for longer than a write may idle: the next listing removes it.
    age(join(root, 'in', left!), LOCAL_STALE_TEMP_MS + 60_000);
    expect((await p.list('/in')).entries).toEqual([]);
    expect(temps(join(root, 'in'))).toEqual([]);
    expect(existsSync(join(root, 'in', 'big.bin'))).toBe(false);
  }, 30_000);

  it('a write into the folder removes stale temporary files, and only files of exactly our name', async () => {
    const dir = join(root, 'in');
    const stale = join(dir, `${LOCAL_TEMP_PREFIX}0123456789abcdef`);
    const fresh = join(dir, `${LOCAL_TEMP_PREFIX}fedcba9876543210`);
    const otherName = join(dir, `${LOCAL_TEMP_PREFIX}not-ours`);
    const upper = join(dir, `${LOCAL_TEMP_PREFIX}0123456789ABCDEF`);
    const folder = join(dir, `${LOCAL_TEMP_PREFIX}00000000000000aa`);
    const link = join(dir, `${LOCAL_TEMP_PREFIX}00000000000000bb`);
    const userFile = join(dir, 'old notes.txt');
    for (const f of [stale, fresh, otherName, upper, userFile]) writeFileSync(f, 'x');
    mkdirSync(folder);
    writeFileSync(join(base, 'target.txt'), 'keep me');
    symlinkSync(join(base, 'target.txt'), link);
    for (const f of [stale, otherName, upper, folder, userFile]) age(f, 3 * LOCAL_STALE_TEMP_MS);
    const p = await openLocal({ path: root }, { localRoots: [root] });
    await p.put('/in/new.txt', Readable.from([Buffer.from('new')]), { size: 3 });
    expect(existsSync(stale)).toBe(false);
    for (const kept of [fresh, otherName, upper, folder, link, userFile]) expect(existsSync(kept), kept).toBe(true);
    expect(readFileSync(join(base, 'target.txt'), 'utf8')).toBe('keep me');
    // Only our exact names are hidden: a user's file that merely starts with the prefix is listed.
    expect((await p.list('/in')).entries.map((e) => e.name)).toEqual([
      `${LOCAL_TEMP_PREFIX}0123456789ABCDEF`,
      `${LOCAL_TEMP_PREFIX}not-ours`,
      'new.txt',
      'old notes.txt',
    ]);
  });

  it('never removes the temporary file of a write still running in this process, however old it looks', async () => {
    const p = await openLocal({ path: root }, { localRoots: [root] }, { staleTempMs: 1 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let pushed = false;
    const body = new Readable({
      read() {
        if (!pushed) {
          pushed = true;
          this.push(Buffer.from('first half '));
          void gate.then(() => {
            this.push(Buffer.from('second half'));
            this.push(null);
          });
        }
      },
    });
    const writing = p.put('/in/slow.txt', body, { size: -1 });
    while (temps(join(root, 'in')).length === 0) await new Promise((r) => setTimeout(r, 10));
    const [tmp] = temps(join(root, 'in'));
    age(join(root, 'in', tmp!), 10 * LOCAL_STALE_TEMP_MS);
    await p.list('/in');
    expect(temps(join(root, 'in'))).toEqual([tmp]);
    release();
    await writing;
    expect(readFileSync(join(root, 'in', 'slow.txt'), 'utf8')).toBe('first half second half');
    expect(temps(join(root, 'in'))).toEqual([]);
  });
});

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLocal, openWebdav, type Provider } from '@skyferry/providers';
import { startRcloneServe, type RcloneServer } from '@skyferry/testing';
import { executePlan } from './executor.ts';
import { planTransfer } from './planner.ts';
import { runTransfer } from './run.ts';
import { FileCheckpointStore, MemoryCheckpointStore } from './stores.ts';
import { slowReads } from './testing/backends.ts';

// Temporary files a run leaves on its target when it is cut off (issue 35: 13-16 partial
// `.skyferry-tmp-*` files on a WebDAV target after a kill or an outage): the run that resumes, and
// any run that ends, removes the ones its writes made, at once, not two hours later. The target is
// `rclone serve webdav`, which writes an upload straight into its file, so a cut-off upload stays.
// Also: a user's file whose name merely starts with the prefix is an ordinary file.

const CHILD = fileURLToPath(new URL('./testing/transfer-child.ts', import.meta.url));
const MiB = 1024 * 1024;
const FILES = 12;

let base: string;
let src: string;
let data: string;
let server: RcloneServer | undefined;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'skyferry-temps-'));
  src = join(base, 'src');
  data = join(base, 'data');
  mkdirSync(src);
  mkdirSync(data);
  for (let i = 0; i < FILES; i++) writeFileSync(join(src, `f${i}.bin`), randomBytes(4 * MiB));
});
afterEach(async () => {
  await server?.stop();
  server = undefined;
  rmSync(base, { recursive: true, force: true });
});

const temps = () => readdirSync(data).filter((n) => n.startsWith('.skyferry-tmp-'));

/**
 * Resolves once a temporary file in the served folder has 64 KiB or more (an upload under way; the
 * 1-byte file the provider writes when it opens, to learn how the server keeps times, is not one).
 */
async function uploadUnderWay(timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (temps().some((n) => (statSync(join(data, n), { throwIfNoEntry: false })?.size ?? 0) >= 64 * 1024)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no upload seen under way');
}

async function serve(port?: number, login?: { username: string; password: string }): Promise<RcloneServer> {
  return startRcloneServe('webdav', { dir: data, ...(port ? { port } : {}), ...login });
}

async function dav(s: RcloneServer): Promise<Provider> {
  return openWebdav({ url: s.url, username: s.username, password: s.password });
}

function sameFiles(): void {
  const names = readdirSync(data).sort();
  expect(names).toEqual(readdirSync(src).sort());
  for (const n of names) expect(readFileSync(join(data, n)).equals(readFileSync(join(src, n))), n).toBe(true);
}

describe('temporary files of cut-off writes', () => {
  it('a run whose target goes down and comes back removes its partial uploads when it ends', async () => {
    server = await serve();
    const target = await dav(server);
    const source = slowReads(await openLocal({ path: src }, { localRoots: [src] }), 15);
    const checkpoints = new MemoryCheckpointStore();
    const running = runTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/'],
      targetPath: '/',
      transfers: 4,
      checkpoints,
      retries: { retries: 10, minSleepMs: 300, maxSleepMs: 1500 },
    });
    await uploadUnderWay();
    // The outage: the server is gone for a second, uploads under way are cut off.
    const { port, username, password } = server;
    await server.stop();
    const left = temps();
    expect(left.length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1000));
    server = await serve(port, { username, password });
    const { result } = await running;
    await target.close?.();
    expect(result.failed.map((f) => `${f.item.rel} ${f.reason} ${f.message}`)).toEqual([]);
    expect(result.outcome).toBe('success');
    expect(temps()).toEqual([]);
    sameFiles();
    // Nothing is left to look for next time.
    expect(await checkpoints.tempFolders()).toEqual([]);
  }, 120_000);

  it('a run resumed after a kill removes what the killed one left before it writes', async () => {
    server = await serve();
    const checkpointFile = join(base, 'checkpoints.jsonl');
    const child = spawn(
      process.execPath,
      [CHILD, src, '', checkpointFile, join(base, 'writes.log'), server.url, server.username, server.password, '15'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await uploadUnderWay();
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const left = temps();
    expect(left.length, output).toBeGreaterThan(0);

    const source = await openLocal({ path: src }, { localRoots: [src] });
    const target = await dav(server);
    const checkpoints = new FileCheckpointStore(checkpointFile);
    const plan = await planTransfer({
      source,
      target,
      mode: 'migrate',
      sourcePaths: ['/'],
      targetPath: '/',
      sameNamePolicy: 'overwrite',
    });
    const result = await executePlan(plan, { source, target, checkpoints });
    await checkpoints.close();
    await target.close?.();
    expect(result.outcome).toBe('success');
    expect(temps()).toEqual([]);
    sameFiles();
  }, 120_000);
});

describe("a user's file named like a temporary file", () => {
  it('is listed, copied and written like any other', async () => {
    server = await serve();
    const target = await dav(server);
    rmSync(src, { recursive: true });
    mkdirSync(src);
    writeFileSync(join(src, '.skyferry-tmp-notes.txt'), 'mine');
    writeFileSync(join(src, '.skyferry-tmp-0123456789ABCDEF'), 'mine too');
    const source = await openLocal({ path: src }, { localRoots: [src] });
    const { result } = await runTransfer({ source, target, mode: 'migrate', sourcePaths: ['/'], targetPath: '/' });
    await target.close?.();
    expect(result.outcome).toBe('success');
    expect(result.summary.added).toBe(2);
    sameFiles();
  }, 60_000);
});

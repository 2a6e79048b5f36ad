import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SameNamePolicy } from '@skyferry/contract';
import { openWebdav } from '@skyferry/providers';
import { startApacheWebdav, startFaultyProxy, startRcloneServe } from '@skyferry/testing';
import { runTransfer, type RunRequest } from './run.ts';
import { MemoryTwoWayStateStore } from './stores.ts';
import {
  differences,
  rcloneCheck,
  startBackend,
  writeFileAt,
  type BackendFixture,
  type BackendName,
} from './testing/backends.ts';
import type { TransferPlan } from './types.ts';

// Every mode and policy against real servers, checked afterwards by rclone (an independent
// implementation) comparing contents, plus exact expectations of what was updated, skipped and deleted.

const PAST = new Date('2024-03-01T10:00:00Z');
const FUTURE = () => new Date(Date.now() + 3600_000);

let srcRoot: string;

const writeLocal = (rel: string, data: Buffer | string, mtime: Date = PAST) => writeFileAt(srcRoot, rel, data, mtime);

function actions(plan: TransferPlan | undefined): string[] {
  return (plan?.items ?? [])
    .filter((i) => i.kind === 'file' || i.action === 'delete')
    .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
    .sort();
}

const backends: BackendName[] = ['local', 's3', 'webdav', 'sftp'];

describe.each(backends)('engine with a %s target', (name) => {
  let src: BackendFixture;
  let dst: BackendFixture;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startBackend('local'), startBackend(name)]);
    srcRoot = src.remote('/');
  }, 60_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  const run = (req: Partial<RunRequest> & Pick<RunRequest, 'mode' | 'sourcePaths' | 'targetPath'>) =>
    runTransfer({
      source: src.provider,
      target: dst.provider,
      retries: { retries: 3, minSleepMs: 50, maxSleepMs: 500 },
      ...req,
    });
  const check = (s: string, d: string, oneWay = true) =>
    rcloneCheck(src.remote(s), dst.remote(d), { oneWay, flags: dst.rcloneFlags });

  it('migrate copies each selected folder under its own name, and files into the target', async () => {
    await writeLocal('/Photos/a.jpg', randomBytes(3000));
    await writeLocal('/Photos/2024/b.jpg', randomBytes(70_000));
    await writeLocal('/Photos/2024/c.png', '');
    await writeLocal('/Photos/deep/er/still.jpg', randomBytes(10));
    await mkdir(join(srcRoot, 'Photos/empty'), { recursive: true });
    await writeLocal('/top.txt', 'top');
    const { plan, result } = await run({
      mode: 'migrate',
      sourcePaths: ['/Photos', '/top.txt'],
      targetPath: '/m',
      sameNamePolicy: 'skip',
    });
    expect(result.outcome).toBe('success');
    expect(result.summary.added).toBe(5);
    expect(
      plan?.items
        .filter((i) => i.action === 'mkdir')
        .map((i) => i.rel)
        .sort(),
    ).toEqual(['/', '/', '/2024', '/deep', '/deep/er', '/empty']);
    const marks = await check('/Photos', '/m/Photos');
    expect(differences(marks)).toEqual([]);
    expect(marks.size).toBe(4);
    expect(differences(await check('/top.txt', '/m/top.txt'))).toEqual([]);
    expect((await dst.provider.stat('/m/Photos/empty')).kind).toBe('dir');
    // Run again: nothing to copy, every file skipped by the policy.
    const again = await run({ mode: 'migrate', sourcePaths: ['/Photos'], targetPath: '/m', sameNamePolicy: 'skip' });
    expect(again.result.summary).toMatchObject({ added: 0, updated: 0, skipped: 4 });
  });

  it.each<[SameNamePolicy, string[], string[]]>([
    ['overwrite', ['update target /s1 overwrite', 'update target /s2 overwrite', 'update target /s3 overwrite'], []],
    ['skip', ['skip target /s1 exists', 'skip target /s2 exists', 'skip target /s3 exists'], ['* s2', '* s3']],
    [
      'size_differs',
      ['skip target /s1 same_size', 'skip target /s3 same_size', 'update target /s2 size_differs'],
      ['* s3'],
    ],
    [
      'size_differs_or_newer',
      ['skip target /s1 not_newer', 'update target /s2 size_differs', 'update target /s3 newer'],
      [],
    ],
  ])('one-way sync with the %s policy updates and skips exactly as the policy says', async (policy, expected, left) => {
    const dir = `/Pol-${policy}`;
    await writeLocal(`${dir}/s1`, 'one');
    await writeLocal(`${dir}/s2`, 'two');
    await writeLocal(`${dir}/s3`, 'three');
    const first = await run({ mode: 'one_way', sourcePaths: [dir], targetPath: `/p-${policy}` });
    expect(first.result.outcome).toBe('success');
    await writeLocal(`${dir}/s2`, 'two, now longer');
    await writeLocal(`${dir}/s3`, 'THREE', FUTURE()); // same size, newer than any upload time
    await writeLocal(`${dir}/new1`, 'new');
    const { plan, result } = await run({
      mode: 'one_way',
      sourcePaths: [dir],
      targetPath: `/p-${policy}`,
      sameNamePolicy: policy,
    });
    expect(result.outcome).toBe('success');
    expect(actions(plan)).toEqual(['copy target /new1 new', ...expected].sort());
    expect(differences(await check(dir, `/p-${policy}`))).toEqual(left);
  });

  it('incremental copies new files and newer same-name files only', async () => {
    await writeLocal('/Inc/keep', 'keep');
    await writeLocal('/Inc/newer', 'v1');
    await writeLocal('/Inc/older', 'v1');
    expect((await run({ mode: 'one_way', sourcePaths: ['/Inc'], targetPath: '/inc' })).result.outcome).toBe('success');
    await writeLocal('/Inc/newer', 'v2 is longer', FUTURE());
    await writeLocal('/Inc/older', 'v2 is longer too', new Date('2020-01-01T00:00:00Z'));
    await writeLocal('/Inc/sub/fresh', 'fresh');
    const { plan, result } = await run({
      mode: 'incremental',
      sourcePaths: ['/Inc'],
      targetPath: '/inc',
      sameNamePolicy: 'overwrite',
    });
    expect(result.outcome).toBe('success');
    expect(actions(plan)).toEqual([
      'copy target /sub/fresh new',
      'skip target /keep not_newer',
      'skip target /older not_newer',
      'update target /newer newer',
    ]);
    expect(differences(await check('/Inc', '/inc'))).toEqual(['* older']);
  });

  it('mirror makes the target an exact copy, deleting extras only after the copies', async () => {
    for (let i = 0; i < 6; i++) await writeLocal(`/Mir/f${i}.txt`, `file ${i}`);
    await writeLocal('/Mir/sub/g.txt', 'g');
    expect((await run({ mode: 'migrate', sourcePaths: ['/Mir'], targetPath: '/' })).result.outcome).toBe('success');
    await dst.provider.put('/Mir/extra.txt', Readable.from([Buffer.from('extra')]), { size: 5 });
    await dst.provider.put('/Mir/olddir/x/y.txt', Readable.from([Buffer.from('y')]), { size: 1 });
    await writeLocal('/Mir/f0.txt', 'file 0 changed, longer');
    await writeLocal('/Mir/new.txt', 'new');
    const { plan, result } = await run({ mode: 'mirror', sourcePaths: ['/Mir'], targetPath: '/Mir' });
    expect(result.outcome).toBe('success');
    expect(actions(plan).filter((a) => !a.startsWith('skip'))).toEqual([
      'copy target /new.txt new',
      'delete target /extra.txt extra_on_target',
      'delete target /olddir extra_on_target',
      'delete target /olddir/x extra_on_target',
      'delete target /olddir/x/y.txt extra_on_target',
      'update target /f0.txt differs',
    ]);
    expect(result.summary).toMatchObject({ added: 1, updated: 1, deleted: 2 });
    expect(differences(await check('/Mir', '/Mir', false))).toEqual([]);
  });

  it('two-way sync carries new, changed and deleted files both ways', async () => {
    const state = new MemoryTwoWayStateStore();
    for (let i = 0; i < 6; i++) await writeLocal(`/Two/f${i}.txt`, `file ${i}`);
    await dst.provider.put('/two/from-b.txt', Readable.from([Buffer.from('from b')]), { size: 6, modTime: PAST });
    const sync = () => run({ mode: 'two_way', sourcePaths: ['/Two'], targetPath: '/two', twoWayState: state });
    const first = await sync();
    expect(first.result.outcome).toBe('success');
    expect(differences(await check('/Two', '/two', false))).toEqual([]);

    await writeLocal('/Two/f0.txt', 'changed on A, longer');
    await rm(join(srcRoot, 'Two/f1.txt'));
    await writeLocal('/Two/new-a/n.txt', 'new on A');
    await dst.provider.put('/two/f2.txt', Readable.from([Buffer.from('changed on B!!')]), {
      size: 14,
      modTime: FUTURE(),
    });
    await dst.provider.remove('/two/f3.txt');
    await dst.provider.put('/two/new-b.txt', Readable.from([Buffer.from('new on B')]), { size: 8, modTime: PAST });
    const second = await sync();
    expect(actions(second.plan).filter((a) => !a.startsWith('skip'))).toEqual([
      'copy source /new-b.txt new',
      'copy target /new-a/n.txt new',
      'delete source /f3.txt deleted_on_other_side',
      'delete target /f1.txt deleted_on_other_side',
      'update source /f2.txt changed',
      'update target /f0.txt changed',
    ]);
    expect(second.result.outcome).toBe('success');
    expect(differences(await check('/Two', '/two', false))).toEqual([]);
    const third = await sync();
    expect(actions(third.plan).filter((a) => !a.startsWith('skip'))).toEqual([]);
  });
});

describe('big files to WebDAV servers', () => {
  it('go to Apache as ranges written at once, and to rclone serve webdav (no ranged writes) as one PUT, both intact', async () => {
    const local = await startBackend('local');
    const apache = await startApacheWebdav();
    const rclone = await startRcloneServe('webdav');
    /** Migrates /Big to `targetPath` of the server at `url` (files from 1 MiB chunked); which went chunked. */
    const migrateBig = async (server: { username: string; password: string }, url: string, targetPath: string) => {
      const target = await openWebdav({ url, username: server.username, password: server.password });
      const chunked = new Map<string, boolean | undefined>();
      const { result } = await runTransfer({
        source: local.provider,
        target,
        mode: 'migrate',
        sourcePaths: ['/Big'],
        targetPath,
        chunkThreshold: 1024 * 1024,
        retries: { retries: 8, minSleepMs: 10, maxSleepMs: 100 },
        onItem: (e) => chunked.set(e.item.rel, e.chunked),
      });
      await target.close();
      expect(result.outcome).toBe('success');
      return chunked;
    };
    try {
      const big = randomBytes(20 * 1024 * 1024 + 123); // three ranges of 8 MiB, above the 1 MiB threshold
      const small = randomBytes(300_000);
      await writeFileAt(local.remote('/'), '/Big/video.bin', big, PAST);
      await writeFileAt(local.remote('/'), '/Big/note.bin', small, PAST);
      for (const [server, ranged] of [
        [apache, true],
        [rclone, false],
      ] as const) {
        const chunked = await migrateBig(server, server.url, '/t');
        expect(chunked.get('/video.bin')).toBe(ranged);
        expect(chunked.get('/note.bin')).toBe(false); // under the threshold
        expect(readFileSync(join(server.dir, 't/Big/video.bin')).equals(big)).toBe(true);
        expect(readFileSync(join(server.dir, 't/Big/note.bin')).equals(small)).toBe(true);
        // No temporary file is left beside them.
        expect(readdirSync(join(server.dir, 't/Big')).sort()).toEqual(['note.bin', 'video.bin']);
      }
      // Through a server failing a quarter of its answers and dropping connections: each range that
      // fails is read and sent again on its own, and the file still lands whole.
      const apacheUrl = new URL(apache.url);
      const faulty = await startFaultyProxy({
        target: { host: apacheUrl.hostname, port: Number(apacheUrl.port) },
        errorRate: 0.25,
        resetRate: 0.05,
        retryAfterSeconds: 0,
        seed: 11,
      });
      try {
        const chunked = await migrateBig(apache, `http://${faulty.host}:${faulty.port}/`, '/faulty');
        expect(chunked.get('/video.bin')).toBe(true);
        expect(readFileSync(join(apache.dir, 'faulty/Big/video.bin')).equals(big)).toBe(true);
        expect(readdirSync(join(apache.dir, 'faulty/Big')).sort()).toEqual(['note.bin', 'video.bin']);
        expect(Object.values(faulty.stats.errors).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      } finally {
        await faulty.stop();
      }
    } finally {
      await Promise.all([local.stop(), apache.stop(), rclone.stop()]);
    }
  }, 120_000);
});

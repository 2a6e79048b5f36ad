import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTransfer, type RunRequest } from '../run.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { startBackend, writeFileAt, type BackendFixture } from '../testing/backends.ts';
import { actions, useSides } from './support.ts';

// Finding 2 of issue 45 on real disks and Apache WebDAV (which keeps no modification times): two
// files of one size are the same only when a hash both sides give, or their bytes, say so; times
// count at the precision each side really keeps them, and where a side keeps none, the previous
// run's record of what was copied decides.

const T0 = new Date('2024-03-01T10:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

describe('same-size edits between two local disks', () => {
  const sides = useSides('local', 'local');
  const run = (mode: RunRequest['mode'], root: string, extra: Partial<RunRequest> = {}) =>
    sides.run(mode, root, { confirmDeletes: true, ...extra });

  it('two-way: both sides edited to the same size within a second is a conflict, both kept', async () => {
    const A = sides.a.remote('/tw');
    const B = sides.b.remote('/tw');
    await writeFileAt(A, 'f.txt', 'base', T0);
    const state = new MemoryTwoWayStateStore();
    expect((await run('two_way', 'tw', { twoWayState: state })).result.outcome).toBe('success');
    await writeFileAt(A, 'f.txt', 'AAAA', at(600_000));
    await writeFileAt(B, 'f.txt', 'BBBB', at(600_400));
    const { plan, result } = await run('two_way', 'tw', { twoWayState: state });
    expect(actions(plan)).toEqual(['conflict source /f.txt both_changed']);
    expect(result.outcome).toBe('success');
    expect(await readFile(join(A, 'f.txt'), 'utf8')).toBe('BBBB');
    expect(await readFile(join(A, 'f (conflict 2026-11-22 from A).txt'), 'utf8')).toBe('AAAA');
    expect(await readFile(join(B, 'f (conflict 2026-11-22 from A).txt'), 'utf8')).toBe('AAAA');
  });

  it('two-way: the same bytes on both sides settle quietly (no conflict), whatever their times', async () => {
    const A = sides.a.remote('/same');
    const B = sides.b.remote('/same');
    await writeFileAt(A, 'f.txt', 'same bytes', T0);
    await writeFileAt(B, 'f.txt', 'same bytes', at(3_600_000));
    const { plan, result } = await run('two_way', 'same', { twoWayState: new MemoryTwoWayStateStore() });
    expect(actions(plan)).toEqual([]);
    expect(result.outcome).toBe('success');
  });

  it('mirror: a same-size edit within a second of the copy is sent (local disks keep milliseconds)', async () => {
    const A = sides.a.remote('/mir');
    const B = sides.b.remote('/mir');
    await writeFileAt(A, 'f.txt', 'v1-a', T0);
    expect((await run('mirror', 'mir')).result.outcome).toBe('success');
    await writeFileAt(A, 'f.txt', 'v2-b', at(300));
    const { plan } = await run('mirror', 'mir');
    expect(actions(plan)).toEqual(['update target /f.txt differs']);
    expect(await readFile(join(B, 'f.txt'), 'utf8')).toBe('v2-b');
  });

  it('one-way: a target file dated in the future does not block a same-size update', async () => {
    const A = sides.a.remote('/future');
    const B = sides.b.remote('/future');
    await writeFileAt(A, 'f.txt', 'old!', T0);
    await writeFileAt(B, 'f.txt', 'old!', new Date(Date.now() + 365 * 24 * 3600_000));
    await writeFileAt(A, 'f.txt', 'new!', at(600_000));
    const { plan } = await run('one_way', 'future');
    expect(actions(plan)).toEqual(['update target /f.txt differs']);
    expect(await readFile(join(B, 'f.txt'), 'utf8')).toBe('new!');
  });
});

describe('same-size edits with Apache WebDAV, which keeps no modification times', () => {
  let local: BackendFixture;
  let dav: BackendFixture;
  beforeAll(async () => {
    [local, dav] = await Promise.all([startBackend('local'), startBackend('webdav')]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([local?.stop(), dav?.stop()]);
  });
  const run = (mode: RunRequest['mode'], root: string, state: MemoryTwoWayStateStore) =>
    runTransfer({
      source: local.provider,
      target: dav.provider,
      mode,
      sourcePaths: [`/${root}`],
      targetPath: `/${root}`,
      twoWayState: state,
      confirmDeletes: true,
      now: new Date(Date.UTC(2026, 10, 22, 10, 30)),
      sideNames: { source: 'Laptop', target: 'Server' },
    });
  const put = (path: string, data: string) =>
    dav.provider.put(path, Readable.from([Buffer.from(data)]), { size: Buffer.byteLength(data) });

  it('two-way: both sides edited to the same size is a conflict, however far apart', async () => {
    const L = local.remote('/tw');
    await writeFileAt(L, 'f.txt', 'base', T0);
    const state = new MemoryTwoWayStateStore();
    expect((await run('two_way', 'tw', state)).result.outcome).toBe('success');
    await writeFileAt(L, 'f.txt', 'LLLL', new Date(Date.now() - 3_600_000));
    // The server lists times in seconds: its edit comes a second after the run's write, as any would.
    await new Promise((r) => setTimeout(r, 1100));
    await put('/tw/f.txt', 'SSSS');
    const { plan, result } = await run('two_way', 'tw', state);
    expect(plan?.items.filter((i) => i.action !== 'skip').map((i) => `${i.action} ${i.rel} ${i.reason}`)).toEqual([
      'conflict /f.txt both_changed',
    ]);
    expect(result.outcome).toBe('success');
    const kept = [
      await readFile(join(L, 'f.txt'), 'utf8'),
      await readFile(join(L, 'f (conflict 2026-11-22 from Laptop).txt'), 'utf8').catch(() => ''),
      await readFile(join(L, 'f (conflict 2026-11-22 from Server).txt'), 'utf8').catch(() => ''),
    ].sort();
    expect(kept).toEqual(['', 'LLLL', 'SSSS']);
  });

  it('mirror: a same-size edit is sent, and an unchanged file is not sent again', async () => {
    const L = local.remote('/mir');
    await writeFileAt(L, 'f.txt', 'v1-a', T0);
    await writeFileAt(L, 'g.txt', 'stays', T0);
    const state = new MemoryTwoWayStateStore();
    expect((await run('mirror', 'mir', state)).result.outcome).toBe('success');
    await writeFileAt(L, 'f.txt', 'v2-b', at(60_000));
    const { plan } = await run('mirror', 'mir', state);
    expect(actions(plan)).toEqual(['update target /f.txt differs']);
    expect((await run('mirror', 'mir', state)).plan?.summary.update.count).toBe(0);
  });

  it('one-way: a source file dated in the future is sent once, not on every sync', async () => {
    const L = local.remote('/future');
    await writeFileAt(L, 'f.txt', 'from the future', new Date(Date.now() + 365 * 24 * 3600_000));
    const state = new MemoryTwoWayStateStore();
    const first = await run('one_way', 'future', state);
    expect(actions(first.plan)).toEqual(['copy target /f.txt new']);
    const second = await run('one_way', 'future', state);
    expect(actions(second.plan)).toEqual([]);
  });
});

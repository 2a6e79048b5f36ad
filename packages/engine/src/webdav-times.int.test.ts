import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWebdav, type Provider } from '@skyferry/providers';
import { startApacheWebdav, startNextcloudEmulator, type WebdavServer } from '@skyferry/testing';
import { runTransfer, type RunRequest } from './run.ts';
import { MemoryTwoWayStateStore } from './stores.ts';
import { startBackend, writeFileAt, type BackendFixture } from './testing/backends.ts';
import type { TransferPlan } from './types.ts';

// Modification times on WebDAV targets: a generic server that takes X-OC-Mtime keeps the source's
// times, so runs compare real times; one that keeps none (Apache) is reported as such, and runs
// neither copy its files again nor take its write times for edits.

const THEN = new Date('2020-05-06T07:08:09Z');

function fileActions(plan: TransferPlan | undefined): string[] {
  return (plan?.items ?? [])
    .filter((i) => i.kind === 'file')
    .map((i) => `${i.action} ${i.side} ${i.rel} ${i.reason}`)
    .sort();
}

const targets: Array<
  [string, () => Promise<{ url: string; username: string; password: string; stop(): Promise<void> }>, boolean]
> = [
  ['a generic server that takes X-OC-Mtime', () => startNextcloudEmulator({ product: 'none' }), true],
  ['Apache mod_dav, which keeps no given time', () => startApacheWebdav() as Promise<WebdavServer>, false],
];

describe.each(targets)('runs to %s', (_name, start, keeps) => {
  let src: BackendFixture;
  let server: Awaited<ReturnType<(typeof targets)[number][1]>>;
  let dst: Provider;

  beforeAll(async () => {
    [src, server] = await Promise.all([startBackend('local'), start()]);
    dst = await openWebdav({ url: server.url, username: server.username, password: server.password });
  }, 60_000);
  afterAll(async () => {
    await dst?.close?.();
    await Promise.all([src?.stop(), server?.stop()]);
  });

  const run = (req: Partial<RunRequest> & Pick<RunRequest, 'mode' | 'sourcePaths' | 'targetPath'>) =>
    runTransfer({
      source: src.provider,
      target: dst,
      retries: { retries: 2, minSleepMs: 20, maxSleepMs: 100 },
      ...req,
    });

  it(`${keeps ? 'keeps' : 'reports it cannot keep'} the source's times, and a second one-way run copies nothing again`, async () => {
    expect(dst.features.setModTime).toBe(keeps);
    await writeFileAt(src.remote('/'), '/One/a.txt', 'alpha', THEN);
    await writeFileAt(src.remote('/'), '/One/b.txt', 'beta', THEN);
    const first = await run({
      mode: 'one_way',
      sourcePaths: ['/One'],
      targetPath: '/one',
      sameNamePolicy: 'size_differs_or_newer',
    });
    expect(first.result.outcome).toBe('success');
    const a = await dst.stat('/one/a.txt');
    expect(a.modTime?.getTime() === THEN.getTime()).toBe(keeps);
    const again = await run({
      mode: 'one_way',
      sourcePaths: ['/One'],
      targetPath: '/one',
      sameNamePolicy: 'size_differs_or_newer',
    });
    expect(again.result.summary).toMatchObject({ added: 0, updated: 0 });
    expect(fileActions(again.plan)).toEqual(['skip target /a.txt not_newer', 'skip target /b.txt not_newer']);
  });

  it('a mirror run of unchanged files updates nothing', async () => {
    await writeFileAt(src.remote('/'), '/Two/c.txt', 'gamma', THEN);
    expect((await run({ mode: 'mirror', sourcePaths: ['/Two'], targetPath: '/two' })).result.outcome).toBe('success');
    const again = await run({ mode: 'mirror', sourcePaths: ['/Two'], targetPath: '/two' });
    expect(again.result.summary).toMatchObject({ added: 0, updated: 0, deleted: 0 });
    expect(fileActions(again.plan)).toEqual(['skip target /c.txt unchanged']);
  });

  it('a two-way run after the first changes nothing on either side', async () => {
    await writeFileAt(src.remote('/'), '/Three/d.txt', 'delta', THEN);
    const state = new MemoryTwoWayStateStore();
    const first = await run({ mode: 'two_way', sourcePaths: ['/Three'], targetPath: '/three', twoWayState: state });
    expect(first.result.outcome).toBe('success');
    const again = await run({ mode: 'two_way', sourcePaths: ['/Three'], targetPath: '/three', twoWayState: state });
    expect(again.result.summary).toMatchObject({ added: 0, updated: 0, deleted: 0 });
    expect(fileActions(again.plan).filter((a) => !a.startsWith('skip'))).toEqual([]);
  });
});

describe('a mirror to a generic server that takes X-OC-Mtime', () => {
  it('sends an edit of the same size, told by the kept time', async () => {
    const [src, server] = await Promise.all([startBackend('local'), startNextcloudEmulator({ product: 'none' })]);
    const dst = await openWebdav({ url: server.url, username: server.username, password: server.password });
    try {
      const mirror = () =>
        runTransfer({ source: src.provider, target: dst, mode: 'mirror', sourcePaths: ['/E'], targetPath: '/e' });
      await writeFileAt(src.remote('/'), '/E/c.txt', 'gamma', THEN);
      expect((await mirror()).result.outcome).toBe('success');
      await writeFileAt(src.remote('/'), '/E/c.txt', 'GAMMA', new Date(THEN.getTime() + 86_400_000));
      const edited = await mirror();
      expect(fileActions(edited.plan)).toEqual(['update target /c.txt differs']);
      expect((await dst.stat('/e/c.txt')).modTime?.getTime()).toBe(THEN.getTime() + 86_400_000);
    } finally {
      await dst.close?.();
      await Promise.all([src.stop(), server.stop()]);
    }
  });
});

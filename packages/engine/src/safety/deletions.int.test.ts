import { writeFileSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWebdav, type Provider } from '@skyferry/providers';
import { giveToServer, startApacheWebdav, type WebdavServer } from '@skyferry/testing';
import { runTransfer } from '../run.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { localTree as tree, startBackend, writeFileAt, type BackendFixture } from '../testing/backends.ts';
import { useSides } from './support.ts';

// Finding 1 of issue 45 on real disks and a real WebDAV server: a folder deleted on one side takes
// with it only the files the run listed and judged; the folder itself goes only when it is empty
// at that moment, never when any part of it was unlisted or hidden by the filter.

const PAST = new Date('2024-03-01T10:00:00Z');

describe('a folder deleted on one side, between two local disks', () => {
  const sides = useSides('local', 'local');
  const yes = { confirmDeletes: true, useTrash: false };

  it('two-way: a file saved into the folder on the other side while the run goes on stays, and so does the folder', async () => {
    const A = sides.a.remote('/saved');
    const B = sides.b.remote('/saved');
    await writeFileAt(A, 'X/report.txt', 'r', PAST);
    await writeFileAt(A, 'keep/k.txt', 'k', PAST);
    await mkdir(B);
    const twoWayState = new MemoryTwoWayStateStore();
    expect((await sides.run('two_way', 'saved', { twoWayState, ...yes })).result.outcome).toBe('success');
    await rm(join(A, 'X'), { recursive: true });
    await writeFileAt(A, 'new.txt', 'n', PAST);
    const { plan, result } = await sides.run('two_way', 'saved', {
      twoWayState,
      ...yes,
      // The user saves a file into b/X once the run has started copying.
      onItem: (e) => {
        if (e.type === 'done' && e.item.rel === '/new.txt') writeFileSync(join(B, 'X', 'late.txt'), 'late');
      },
    });
    expect(plan?.items.filter((i) => i.action === 'delete').map((i) => `${i.kind} ${i.rel}`)).toEqual(
      expect.arrayContaining(['file /X/report.txt']),
    );
    expect(result.outcome).toBe('success');
    expect(await tree(B)).toEqual({ 'X/late.txt': 'late', 'keep/k.txt': 'k', 'new.txt': 'n' });
    expect(result.skipped?.map((s) => `${s.reason} ${s.item.rel}`)).toEqual(['not_empty /X']);
  });

  it('two-way: a file to delete that changed while the run went on is kept', async () => {
    const A = sides.a.remote('/changed');
    const B = sides.b.remote('/changed');
    await writeFileAt(A, 'doc.txt', 'v1', PAST);
    await writeFileAt(A, 'pad1.txt', 'p', PAST);
    await writeFileAt(A, 'pad2.txt', 'p', PAST);
    await mkdir(B);
    const twoWayState = new MemoryTwoWayStateStore();
    expect((await sides.run('two_way', 'changed', { twoWayState, ...yes })).result.outcome).toBe('success');
    await rm(join(A, 'doc.txt'));
    await writeFileAt(A, 'new.txt', 'n', PAST);
    const { result } = await sides.run('two_way', 'changed', {
      twoWayState,
      ...yes,
      onItem: (e) => {
        if (e.type === 'done' && e.item.rel === '/new.txt') writeFileSync(join(B, 'doc.txt'), 'v2, edited meanwhile');
      },
    });
    expect(result.skipped?.map((s) => `${s.reason} ${s.item.rel}`)).toEqual(['changed_since_planned /doc.txt']);
    expect((await tree(B))['doc.txt']).toBe('v2, edited meanwhile');
    // The next run sees a file changed on one side and deleted on the other: it is copied back.
    expect((await sides.run('two_way', 'changed', { twoWayState, ...yes })).result.outcome).toBe('success');
    expect((await tree(A))['doc.txt']).toBe('v2, edited meanwhile');
  });

  it('mirror: a file saved into an extra target folder while the run goes on stays', async () => {
    const A = sides.a.remote('/m-saved');
    const B = sides.b.remote('/m-saved');
    await writeFileAt(A, 'a.txt', 'a', PAST);
    await writeFileAt(A, 'b.txt', 'b', PAST);
    await writeFileAt(A, 'c.txt', 'c', PAST);
    await writeFileAt(B, 'old/x.txt', 'x', PAST);
    const { result } = await sides.run('mirror', 'm-saved', {
      ...yes,
      onItem: (e) => {
        if (e.type === 'done' && e.item.rel === '/c.txt') writeFileSync(join(B, 'old', 'late.txt'), 'late');
      },
    });
    expect(result.outcome).toBe('success');
    expect(await tree(B)).toEqual({ 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c', 'old/late.txt': 'late' });
  });
});

describe('a folder deleted on one side, the other side on Apache WebDAV with a subfolder it cannot list', () => {
  let local: BackendFixture;
  let dav: WebdavServer;
  let target: Provider;
  beforeAll(async () => {
    [local, dav] = await Promise.all([startBackend('local'), startApacheWebdav()]);
    target = await openWebdav({ url: dav.url, username: dav.username, password: dav.password });
  }, 60_000);
  afterAll(async () => {
    await target?.close?.();
    await Promise.all([local?.stop(), dav?.stop()]);
  });

  it('two-way: the files it listed go, the unlisted subfolder and the folder stay', async () => {
    const A = local.remote('/tw');
    await writeFileAt(A, 'X/report.txt', 'r', PAST);
    await writeFileAt(A, 'X/locked/secret.txt', 's', PAST);
    await writeFileAt(A, 'keep/k.txt', 'k', PAST);
    await mkdir(join(dav.dir, 'tw'));
    giveToServer(join(dav.dir, 'tw'));
    const state = new MemoryTwoWayStateStore();
    const sync = () =>
      runTransfer({
        source: local.provider,
        target,
        mode: 'two_way',
        sourcePaths: ['/tw'],
        targetPath: '/tw',
        twoWayState: state,
        confirmDeletes: true,
        useTrash: false,
        retries: { retries: 1, minSleepMs: 1, maxSleepMs: 2 },
      });
    expect((await sync()).result.outcome).toBe('success');
    await rm(join(A, 'X'), { recursive: true });
    // The server can no longer read this folder (its process runs as another user than the files' owner).
    await chmod(join(dav.dir, 'tw', 'X', 'locked'), 0o000);
    try {
      const { plan, result } = await sync();
      expect(plan?.errors.map((e) => `${e.side} ${e.path}`)).toEqual(['target /tw/X/locked']);
      expect(result.outcome).toBe('partial');
    } finally {
      await chmod(join(dav.dir, 'tw', 'X', 'locked'), 0o755);
    }
    expect(await tree(join(dav.dir, 'tw'))).toEqual({ 'X/locked/secret.txt': 's', 'keep/k.txt': 'k' });
  });
});

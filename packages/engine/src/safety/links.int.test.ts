import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRequest } from '../run.ts';
import { MemoryTwoWayStateStore } from '../stores.ts';
import { localTree as tree, writeFileAt } from '../testing/backends.ts';
import { expectAccounted, expectNothingLost, snapshotBoth, type Snapshots } from './invariant.ts';
import { useSides } from './support.ts';

// The rails of issue 45 where symbolic links meet deletions, between two local folders (the disk
// lists links as themselves): after every run nothing that was on either side, nor anything a link
// leads to outside the pair, is gone unless a plan deleted it and the user confirmed that run.
// Each scenario runs with links left alone (the default) and followed.

const PAST = new Date('2024-03-01T10:00:00Z');

describe.each([false, true])('safety rails: symbolic links between two local folders (followLinks %s)', (follow) => {
  const sides = useSides('local', 'local');
  const yes = { confirmDeletes: true, useTrash: false, followLinks: follow };
  let n = 0;

  /** A fresh pair `/<root>` on both sides, and folders beside it (outside the pair) on each. */
  async function fresh(): Promise<{ root: string; A: string; B: string; outA: string; outB: string }> {
    const root = `p${++n}`;
    const A = sides.a.remote(`/${root}`);
    const B = sides.b.remote(`/${root}`);
    const outA = sides.a.remote(`/${root}-elsewhere`);
    const outB = sides.b.remote(`/${root}-elsewhere`);
    await writeFileAt(outA, 'e.txt', 'beside the pair on A', PAST);
    await writeFileAt(outB, 'e.txt', 'beside the pair on B', PAST);
    await mkdir(A, { recursive: true });
    await mkdir(B, { recursive: true });
    return { root, A, B, outA, outB };
  }

  /** Runs `mode` on `/<root>` with the rail checked around it (the pair, and the folders beside it unchanged). */
  async function judged(mode: RunRequest['mode'], root: string, extra: Partial<RunRequest> = {}) {
    const both = (): Promise<Snapshots> => snapshotBoth(sides.a.provider, `/${root}`, sides.b.provider, `/${root}`);
    const beside = async () => [
      await tree(sides.a.remote(`/${root}-elsewhere`)),
      await tree(sides.b.remote(`/${root}-elsewhere`)),
    ];
    const [before, besideBefore] = [await both(), await beside()];
    const run = await sides.run(mode, root, { ...yes, ...extra });
    expectNothingLost(before, await both(), [{ plan: run.plan, confirmed: true }]);
    expect(await beside()).toEqual(besideBefore);
    if (run.plan) expectAccounted(run.plan, run.result);
    expect(run.result.outcome).toBe('success');
    return run;
  }

  it('two-way: a folder deleted on one side, holding links on the other — its files go, the links and what they lead to stay', async () => {
    const { root, A, B } = await fresh();
    await writeFileAt(A, 'X/one.txt', '1', PAST);
    await writeFileAt(A, 'kept/k.txt', 'k', PAST);
    const twoWayState = new MemoryTwoWayStateStore();
    await judged('two_way', root, { twoWayState });
    await symlink('../kept', join(B, 'X', 'sib'));
    await symlink(`../../${root}-elsewhere`, join(B, 'X', 'out'));
    await rm(join(A, 'X'), { recursive: true });
    const run = await judged('two_way', root, { twoWayState });
    expect(run.plan?.items.filter((i) => i.action === 'delete').map((i) => `${i.kind} ${i.rel}`)).toEqual([
      'file /X/one.txt',
    ]);
    expect(Object.keys(await tree(B)).sort()).toEqual(['kept/k.txt']);
    // The links are still there (tree() lists files only; a link is reported as set aside).
    expect(run.result.setAside?.map((s) => s.path).sort()).toEqual(
      follow ? [`/${root}/X/out`] : [`/${root}/X/out`, `/${root}/X/sib`],
    );
    // Nothing lost, and the next run deletes nothing either.
    const again = await judged('two_way', root, { twoWayState });
    expect(again.plan?.items.filter((i) => i.action === 'delete')).toEqual([]);
  });

  it('two-way: a folder replaced by a link on one side is not taken as deleted', async () => {
    const { root, A } = await fresh();
    await writeFileAt(A, 'photos/p1.jpg', 'p1', PAST);
    await writeFileAt(A, 'photos/p2.jpg', 'p2', PAST);
    const twoWayState = new MemoryTwoWayStateStore();
    await judged('two_way', root, { twoWayState });
    // The user moves the folder out of the pair and leaves a link in its place.
    await rm(join(A, 'photos'), { recursive: true });
    await writeFileAt(A, 'archive/p1.jpg', 'p1', PAST);
    await writeFileAt(A, 'archive/p2.jpg', 'p2', PAST);
    await symlink('archive', join(A, 'photos'));
    const run = await judged('two_way', root, { twoWayState });
    expect(run.plan?.items.filter((i) => i.action === 'delete')).toEqual([]);
    expect(Object.keys(await tree(sides.b.remote(`/${root}`))).sort()).toEqual(
      expect.arrayContaining(['photos/p1.jpg', 'photos/p2.jpg']),
    );
  });

  it('mirror: an extra target folder holding links loses its files only', async () => {
    const { root, A, B } = await fresh();
    await writeFileAt(A, 'kept/k.txt', 'k', PAST);
    await writeFileAt(B, 'kept/k.txt', 'k', PAST);
    await writeFileAt(B, 'X/one.txt', 'extra', PAST);
    await symlink('../kept', join(B, 'X', 'sib'));
    await symlink(`../../${root}-elsewhere`, join(B, 'X', 'out'));
    const run = await judged('mirror', root);
    expect(run.plan?.items.filter((i) => i.action === 'delete').map((i) => `${i.kind} ${i.rel}`)).toEqual([
      'file /X/one.txt',
    ]);
    expect(await tree(B)).toEqual({ 'kept/k.txt': 'k' });
  });

  it('mirror: a source folder replaced by a link leaves the target’s folder of that name alone', async () => {
    const { root, A, B } = await fresh();
    await writeFileAt(B, 'docs/d.txt', 'only on the target', PAST);
    await symlink(`../${root}-elsewhere`, join(A, 'docs'));
    const run = await judged('mirror', root);
    expect(run.plan?.items.filter((i) => i.action === 'delete')).toEqual([]);
    expect(await tree(B)).toEqual({ 'docs/d.txt': 'only on the target' });
  });
});

import { expect, it } from 'vitest';
import { describeEachDialect } from '@skyferry/db/testing';
import { CleanupRepository, type NewCleanupItemRow, type NewCleanupTaskRow } from './cleanup.ts';

function taskRow(id: string, owner: { user_id?: string; visitor_id?: string }, createdAt: number): NewCleanupTaskRow {
  return {
    id,
    user_id: owner.user_id ?? null,
    visitor_id: owner.visitor_id ?? null,
    cloud_id: 'cloud-1',
    path: '/',
    imode: 7,
    large_threshold: 100,
    status: 1,
    phase: 'waiting',
    filename: '',
    total_count: 0,
    folder_count: 0,
    total_size: 0,
    bytes_read: 0,
    bytes_planned: 0,
    has_trash: 1,
    error_count: 0,
    error: null,
    job_id: `job-${id}`,
    started_at: null,
    finished_at: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

let seq = 0;
function item(task: string, kind: string, path: string, size: number, extra: Partial<NewCleanupItemRow> = {}) {
  return {
    id: `${task}-i${++seq}`,
    task_id: task,
    kind,
    path,
    name: path.slice(path.lastIndexOf('/') + 1),
    size,
    modified: null,
    category: 'other',
    nested_count: 0,
    group_id: null,
    group_hash: null,
    ordinal: 1,
    deleted: 0,
    ...extra,
  } satisfies NewCleanupItemRow;
}

describeEachDialect('CleanupRepository', (getDb) => {
  it('keeps scans per owner: the latest, of a cloud, never another owner’s', async () => {
    const repo = new CleanupRepository(getDb().kysely);
    await repo.insertTask(taskRow('a1', { user_id: 'u1' }, 1000));
    await repo.insertTask({ ...taskRow('a2', { user_id: 'u1' }, 2000), cloud_id: 'cloud-2' });
    await repo.insertTask(taskRow('v1', { visitor_id: 'v1' }, 3000));
    expect((await repo.latest({ userId: 'u1' }))?.id).toBe('a2');
    expect((await repo.latest({ userId: 'u1' }, 'cloud-1'))?.id).toBe('a1');
    expect(await repo.get({ userId: 'u2' }, 'a1')).toBeUndefined();
    expect(await repo.get({ visitorId: 'v1' }, 'a1')).toBeUndefined();
    expect((await repo.get({ visitorId: 'v1' }, 'v1'))?.id).toBe('v1');
    expect(await repo.transition('a1', [0], { status: 4 })).toBe(false);
    expect(await repo.transition('a1', [1], { status: 4 }, 'another-job')).toBe(false);
    expect(await repo.transition('a1', [1], { status: 4 }, 'job-a1')).toBe(true);
  });

  it('a deletion lease: one holder at a time (claims at once: exactly one wins), released or expired, then free', async () => {
    const repo = new CleanupRepository(getDb().kysely);
    await repo.insertTask(taskRow('d1', { user_id: 'u1' }, 1000));
    const claims = await Promise.all(
      ['t1', 't2', 't3', 't4'].map((token) => repo.claimDeletion('d1', token, 10_000, 70_000)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    const holder = ['t1', 't2', 't3', 't4'][claims.indexOf(true)] as string;
    const other = holder === 't1' ? 't2' : 't1';
    expect((await repo.getById('d1'))?.deleting_by).toBe(holder);
    // Another token can neither release nor extend it, nor claim it before it expires.
    await repo.releaseDeletion('d1', other);
    expect(await repo.extendDeletion('d1', other, 90_000)).toBe(false);
    expect(await repo.claimDeletion('d1', other, 69_999, 130_000)).toBe(false);
    expect(await repo.extendDeletion('d1', holder, 90_000)).toBe(true);
    expect(Number((await repo.getById('d1'))?.deleting_until)).toBe(90_000);
    // Expired (its process died): claimable again, and the old holder cannot release the new one.
    expect(await repo.claimDeletion('d1', other, 90_000, 150_000)).toBe(true);
    await repo.releaseDeletion('d1', holder);
    expect((await repo.getById('d1'))?.deleting_by).toBe(other);
    await repo.releaseDeletion('d1', other);
    const row = await repo.getById('d1');
    expect(row?.deleting_by).toBeNull();
    expect(row?.deleting_until).toBeNull();
    expect(await repo.claimDeletion('d1', 't9', 1, 2)).toBe(true);
    // Not a scan: nothing claimed.
    expect(await repo.claimDeletion('missing', 't1', 1, 2)).toBe(false);
  });

  it('stores results once with the scan, pages and counts them, and forgets deleted ones', async () => {
    const repo = new CleanupRepository(getDb().kysely);
    await repo.insertTask(taskRow('t', { user_id: 'u9' }, 1000));
    const items = [
      item('t', 'large', '/v/a.mp4', 500, { category: 'video', ordinal: 1, modified: 30 }),
      item('t', 'large', '/m/b.mp3', 300, { category: 'audio', ordinal: 2, modified: 10 }),
      item('t', 'large', '/v/c.mp4', 200, { category: 'video', ordinal: 3, modified: 20 }),
      item('t', 'duplicate', '/p/1.jpg', 100, { category: 'picture', group_id: 'g1', group_hash: 'h1', ordinal: 1 }),
      item('t', 'duplicate', '/p/2.jpg', 100, { category: 'picture', group_id: 'g1', group_hash: 'h1', ordinal: 1 }),
      item('t', 'duplicate', '/p/3.jpg', 100, { category: 'picture', group_id: 'g1', group_hash: 'h1', ordinal: 1 }),
      item('t', 'duplicate', '/d/x.pdf', 40, { category: 'document', group_id: 'g2', group_hash: 'h2', ordinal: 2 }),
      item('t', 'duplicate', '/d/y.pdf', 40, { category: 'document', group_id: 'g2', group_hash: 'h2', ordinal: 2 }),
      item('t', 'empty', '/e', 0, { nested_count: 2, ordinal: 1 }),
      item('t', 'empty', '/f', 0, { ordinal: 2 }),
    ];
    // A second completion (a resumed job) does not store the results twice.
    expect(await repo.complete('t', items, { status: 0 }, 'job-t')).toBe(true);
    expect(await repo.complete('t', items, { status: 0 }, 'job-t')).toBe(false);

    const q = { category: 'all', sortBy: 'size' as const, order: 'desc' as const, page: 1, pageSize: 2 };
    const page1 = await repo.listItems('t', 'large', q);
    expect([page1.rows.map((r) => r.path), page1.total, page1.visible]).toEqual([['/v/a.mp4', '/m/b.mp3'], 3, 3]);
    const byDate = await repo.listItems('t', 'large', { ...q, sortBy: 'date', order: 'asc', pageSize: 5 });
    expect(byDate.rows.map((r) => r.path)).toEqual(['/m/b.mp3', '/v/c.mp4', '/v/a.mp4']);
    const videos = await repo.listItems('t', 'large', { ...q, category: 'video', pageSize: 5 });
    expect(videos.rows.map((r) => r.path)).toEqual(['/v/a.mp4', '/v/c.mp4']);
    const free = await repo.listItems('t', 'large', { ...q, pageSize: 5, maxOrdinal: 2 });
    expect([free.rows.length, free.total, free.visible]).toEqual([2, 3, 2]);

    const groups = await repo.listGroups('t', { ...q, pageSize: 5 });
    expect(groups.total).toBe(2);
    expect(groups.groups.map((g) => [g.group_id, g.members.map((m) => m.path)])).toEqual([
      ['g1', ['/p/1.jpg', '/p/2.jpg', '/p/3.jpg']],
      ['g2', ['/d/x.pdf', '/d/y.pdf']],
    ]);
    expect((await repo.listGroups('t', { ...q, category: 'document' })).groups.map((g) => g.group_id)).toEqual(['g2']);
    expect(await repo.duplicateCounts('t')).toEqual({
      groups: 2,
      count: 5,
      size: 2 * 100 + 40,
      byCategory: { picture: 3, document: 2 },
    });
    expect(await repo.countsByCategory('t', 'large')).toEqual({
      count: 3,
      size: 1000,
      byCategory: { video: 2, audio: 1 },
    });
    expect(await repo.emptyCount('t')).toBe(4);
    expect(await repo.remainingCount('t', 'duplicate', 'all')).toBe(3);
    expect(await repo.countVisible('t', 1)).toBe(1 + 3 + 1);

    // Deleting one of g2's two copies leaves no group there; a path gone from one list is gone from all.
    await repo.markDeletedPaths('t', ['/d/x.pdf', '/v/a.mp4']);
    expect((await repo.listGroups('t', { ...q, pageSize: 5 })).groups.map((g) => g.group_id)).toEqual(['g1']);
    expect(await repo.duplicateCounts('t')).toMatchObject({ groups: 1, count: 3, size: 200 });
    expect(await repo.remainingCount('t', 'large', 'video')).toBe(1);
    expect(
      (
        await repo.itemsByIds(
          't',
          items.map((i) => i.id),
        )
      ).length,
    ).toBe(items.length - 2);
    await repo.deleteTask('t');
    expect(await repo.getById('t')).toBeUndefined();
    expect(
      (
        await repo.itemsByIds(
          't',
          items.map((i) => i.id),
        )
      ).length,
    ).toBe(0);
  });
});

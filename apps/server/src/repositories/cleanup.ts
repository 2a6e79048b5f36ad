import {
  sql,
  type CleanupItemsTable,
  type CleanupTasksTable,
  type Database,
  type Insertable,
  type Kysely,
  type Selectable,
  type Updateable,
} from '@skyferry/db';
import type { CloudOwner } from './clouds.ts';

export type CleanupTaskRow = Selectable<CleanupTasksTable>;
export type NewCleanupTaskRow = Insertable<CleanupTasksTable>;
export type CleanupTaskPatch = Updateable<CleanupTasksTable>;
export type CleanupItemRow = Selectable<CleanupItemsTable>;
export type NewCleanupItemRow = Insertable<CleanupItemsTable>;

export type CleanupItemKind = 'empty' | 'duplicate' | 'large';

export interface ItemListQuery {
  category: string;
  sortBy: 'size' | 'date' | 'name';
  order: 'asc' | 'desc';
  page: number;
  pageSize: number;
  /** Only results ranked up to this (the free view); undefined: all. */
  maxOrdinal?: number;
}

export interface GroupRow {
  group_id: string;
  group_hash: string;
  size: number;
  members: CleanupItemRow[];
}

/** Result counts of one kind by category (undeleted results only). */
export interface CategoryCounts {
  count: number;
  size: number;
  byCategory: Record<string, number>;
}

const INSERT_BATCH = 500;

/**
 * Clean-up scans and their results. Reads and writes a request can cause go through the owner
 * (`get`, `latest`); the `…ById` methods are for the worker running a scan it was handed.
 */
export class CleanupRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  private owned(owner: CloudOwner) {
    const q = this.db.selectFrom('cleanup_tasks').selectAll();
    return 'userId' in owner ? q.where('user_id', '=', owner.userId) : q.where('visitor_id', '=', owner.visitorId);
  }

  async insertTask(row: NewCleanupTaskRow): Promise<void> {
    await this.db.insertInto('cleanup_tasks').values(row).execute();
  }

  async get(owner: CloudOwner, id: string): Promise<CleanupTaskRow | undefined> {
    return this.owned(owner).where('id', '=', id).executeTakeFirst();
  }

  async getById(id: string): Promise<CleanupTaskRow | undefined> {
    return this.db.selectFrom('cleanup_tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The owner's newest scan (of one cloud when given). */
  async latest(owner: CloudOwner, cloudId?: string): Promise<CleanupTaskRow | undefined> {
    let q = this.owned(owner);
    if (cloudId) q = q.where('cloud_id', '=', cloudId);
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /** The owner's scans of one cloud. */
  async ofCloud(owner: CloudOwner, cloudId: string): Promise<CleanupTaskRow[]> {
    return this.owned(owner).where('cloud_id', '=', cloudId).execute();
  }

  /** Every scan of the owner (deleting an account). */
  async ofOwner(owner: CloudOwner): Promise<CleanupTaskRow[]> {
    return this.owned(owner).execute();
  }

  /** Deletes a scan and its results. */
  async deleteTask(id: string): Promise<void> {
    await this.db.deleteFrom('cleanup_items').where('task_id', '=', id).execute();
    await this.db.deleteFrom('cleanup_tasks').where('id', '=', id).execute();
  }

  async updateById(id: string, patch: CleanupTaskPatch): Promise<void> {
    await this.db.updateTable('cleanup_tasks').set(patch).where('id', '=', id).execute();
  }

  /**
   * Claims the scan's deletion lease for `token` until `until` (ms) when no other deletion holds
   * it (none, or an expired one): one conditional UPDATE, so of two processes claiming at once
   * exactly one gets it. True when claimed.
   */
  async claimDeletion(id: string, token: string, now: number, until: number): Promise<boolean> {
    const res = await this.db
      .updateTable('cleanup_tasks')
      .set({ deleting_until: until, deleting_by: token })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('deleting_until', 'is', null), eb('deleting_until', '<=', now)]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Extends a lease `token` still holds; false when it no longer does. */
  async extendDeletion(id: string, token: string, until: number): Promise<boolean> {
    const res = await this.db
      .updateTable('cleanup_tasks')
      .set({ deleting_until: until })
      .where('id', '=', id)
      .where('deleting_by', '=', token)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Releases the lease if `token` still holds it. */
  async releaseDeletion(id: string, token: string): Promise<void> {
    await this.db
      .updateTable('cleanup_tasks')
      .set({ deleting_until: null, deleting_by: null })
      .where('id', '=', id)
      .where('deleting_by', '=', token)
      .execute();
  }

  /** Applies `patch` while the scan is still in one of `fromStatus` (and holds `jobId` when given); true when it did. */
  async transition(
    id: string,
    fromStatus: readonly number[],
    patch: CleanupTaskPatch,
    jobId?: string,
  ): Promise<boolean> {
    let q = this.db
      .updateTable('cleanup_tasks')
      .set(patch)
      .where('id', '=', id)
      .where('status', 'in', [...fromStatus]);
    if (jobId !== undefined) q = q.where('job_id', '=', jobId);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Stores a finished scan's results and its final figures in one transaction. */
  async complete(id: string, items: NewCleanupItemRow[], patch: CleanupTaskPatch, jobId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('cleanup_tasks')
        .set(patch)
        .where('id', '=', id)
        .where('status', '=', 1)
        .where('job_id', '=', jobId)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      await trx.deleteFrom('cleanup_items').where('task_id', '=', id).execute();
      for (let i = 0; i < items.length; i += INSERT_BATCH) {
        await trx
          .insertInto('cleanup_items')
          .values(items.slice(i, i + INSERT_BATCH))
          .execute();
      }
      return true;
    });
  }

  private itemsOf(taskId: string, kind: CleanupItemKind) {
    return this.db
      .selectFrom('cleanup_items')
      .where('task_id', '=', taskId)
      .where('kind', '=', kind)
      .where('deleted', '=', 0);
  }

  /** A page of empty folders or large files, and how many match. */
  async listItems(
    taskId: string,
    kind: 'empty' | 'large',
    q: ItemListQuery,
  ): Promise<{ rows: CleanupItemRow[]; total: number; visible: number }> {
    let base = this.itemsOf(taskId, kind);
    if (q.category !== 'all') base = base.where('category', '=', q.category);
    const visibleBase = q.maxOrdinal === undefined ? base : base.where('ordinal', '<=', q.maxOrdinal);
    const key =
      q.sortBy === 'name'
        ? sql<string>`path`
        : q.sortBy === 'date'
          ? sql<number>`coalesce(modified, 0)`
          : kind === 'empty'
            ? sql<number>`nested_count`
            : sql<number>`size`;
    const [rows, total, visible] = await Promise.all([
      visibleBase
        .selectAll()
        .orderBy(key, q.order)
        .orderBy('path', 'asc')
        .limit(q.pageSize)
        .offset((q.page - 1) * q.pageSize)
        .execute(),
      this.count(base),
      q.maxOrdinal === undefined ? Promise.resolve(-1) : this.count(visibleBase),
    ]);
    return { rows, total, visible: visible < 0 ? total : visible };
  }

  private async count(q: ReturnType<CleanupRepository['itemsOf']>): Promise<number> {
    const r = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** The duplicate groups still holding two or more copies (with one in `category` unless 'all'). */
  private groupsQuery(taskId: string, category: string, maxOrdinal: number | undefined) {
    let q = this.itemsOf(taskId, 'duplicate');
    if (maxOrdinal !== undefined) q = q.where('ordinal', '<=', maxOrdinal);
    let g = q
      .select([
        'group_id',
        sql<number>`max(size)`.as('gsize'),
        sql<number>`max(coalesce(modified, 0))`.as('gdate'),
        sql<string>`min(path)`.as('gpath'),
        sql<number>`count(*)`.as('gn'),
      ])
      .groupBy('group_id')
      .having(sql<number>`count(*)`, '>', 1);
    if (category !== 'all') {
      g = g.having(sql<number>`sum(case when category = ${category} then 1 else 0 end)`, '>', 0);
    }
    return g;
  }

  private async countGroups(taskId: string, category: string, maxOrdinal: number | undefined): Promise<number> {
    const r = await this.db
      .selectFrom(this.groupsQuery(taskId, category, maxOrdinal).as('g'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** A page of duplicate groups with their remaining members, and how many groups match. */
  async listGroups(taskId: string, q: ItemListQuery): Promise<{ groups: GroupRow[]; total: number; visible: number }> {
    const key = q.sortBy === 'name' ? sql`gpath` : q.sortBy === 'date' ? sql`gdate` : sql`gsize`;
    const [page, total, visible] = await Promise.all([
      this.db
        .selectFrom(this.groupsQuery(taskId, q.category, q.maxOrdinal).as('g'))
        .selectAll()
        .orderBy(key, q.order)
        .orderBy('gpath', 'asc')
        .limit(q.pageSize)
        .offset((q.page - 1) * q.pageSize)
        .execute(),
      this.countGroups(taskId, q.category, undefined),
      q.maxOrdinal === undefined ? Promise.resolve(-1) : this.countGroups(taskId, q.category, q.maxOrdinal),
    ]);
    const ids = page.map((g) => g.group_id).filter((id): id is string => id !== null);
    const members = await this.groupMembers(taskId, ids);
    const groups = ids.map((id) => {
      const list = members.get(id) ?? [];
      return { group_id: id, group_hash: list[0]?.group_hash ?? '', size: list[0]?.size ?? 0, members: list };
    });
    return { groups, total, visible: visible < 0 ? total : visible };
  }

  /** Remaining members of the given groups, in path order. */
  async groupMembers(taskId: string, groupIds: readonly string[]): Promise<Map<string, CleanupItemRow[]>> {
    const out = new Map<string, CleanupItemRow[]>();
    for (let i = 0; i < groupIds.length; i += INSERT_BATCH) {
      const rows = await this.db
        .selectFrom('cleanup_items')
        .selectAll()
        .where('task_id', '=', taskId)
        .where('kind', '=', 'duplicate')
        .where('deleted', '=', 0)
        .where('group_id', 'in', groupIds.slice(i, i + INSERT_BATCH))
        .orderBy('path', 'asc')
        .execute();
      for (const r of rows) {
        const list = out.get(r.group_id ?? '') ?? [];
        list.push(r);
        out.set(r.group_id ?? '', list);
      }
    }
    return out;
  }

  /** Undeleted results of a scan by id (ids of other scans are ignored). */
  async itemsByIds(taskId: string, ids: readonly string[]): Promise<CleanupItemRow[]> {
    const out: CleanupItemRow[] = [];
    for (let i = 0; i < ids.length; i += INSERT_BATCH) {
      out.push(
        ...(await this.db
          .selectFrom('cleanup_items')
          .selectAll()
          .where('task_id', '=', taskId)
          .where('deleted', '=', 0)
          .where('id', 'in', ids.slice(i, i + INSERT_BATCH))
          .execute()),
      );
    }
    return out;
  }

  /** Up to `limit` remaining results of a kind (in `category` unless 'all'), in the default order. */
  async remaining(taskId: string, kind: CleanupItemKind, category: string, limit: number): Promise<CleanupItemRow[]> {
    let q = this.itemsOf(taskId, kind);
    if (category !== 'all') q = q.where('category', '=', category);
    return q.selectAll().orderBy('ordinal', 'asc').orderBy('path', 'asc').limit(limit).execute();
  }

  async markDeleted(taskId: string, ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += INSERT_BATCH) {
      await this.db
        .updateTable('cleanup_items')
        .set({ deleted: 1 })
        .where('task_id', '=', taskId)
        .where('id', 'in', ids.slice(i, i + INSERT_BATCH))
        .execute();
    }
  }

  /** Marks every result at these paths deleted (a file may be both a duplicate and a large file). */
  async markDeletedPaths(taskId: string, paths: readonly string[]): Promise<void> {
    for (let i = 0; i < paths.length; i += INSERT_BATCH) {
      await this.db
        .updateTable('cleanup_items')
        .set({ deleted: 1 })
        .where('task_id', '=', taskId)
        .where('path', 'in', paths.slice(i, i + INSERT_BATCH))
        .execute();
    }
  }

  /**
   * What "delete all" still has to remove in a list (in `category` unless 'all'): the results, or
   * for duplicates every copy but one of each group.
   */
  async remainingCount(taskId: string, kind: CleanupItemKind, category: string): Promise<number> {
    if (kind !== 'duplicate') {
      let q = this.itemsOf(taskId, kind);
      if (category !== 'all') q = q.where('category', '=', category);
      return this.count(q);
    }
    return (await this.surplus(taskId, category)).count;
  }

  /** Every copy but one of each remaining duplicate group (with one in `category` unless 'all'), and their bytes. */
  async surplus(taskId: string, category: string): Promise<{ count: number; size: number }> {
    const r = await this.db
      .selectFrom(this.groupsQuery(taskId, category, undefined).as('g'))
      .select([
        sql<number>`coalesce(sum(gn - 1), 0)`.as('n'),
        sql<number>`coalesce(sum((gn - 1) * gsize), 0)`.as('bytes'),
      ])
      .executeTakeFirstOrThrow();
    return { count: Number(r.n), size: Number(r.bytes) };
  }

  /** Remaining large files (or any kind) by category: count, bytes and count per category. */
  async countsByCategory(taskId: string, kind: CleanupItemKind): Promise<CategoryCounts> {
    const rows = await this.itemsOf(taskId, kind)
      .select(['category', sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(size), 0)`.as('bytes')])
      .groupBy('category')
      .execute();
    const out: CategoryCounts = { count: 0, size: 0, byCategory: {} };
    for (const r of rows) {
      out.count += Number(r.n);
      out.size += Number(r.bytes);
      out.byCategory[r.category] = Number(r.n);
    }
    return out;
  }

  /** Remaining duplicate groups: files in them, groups, bytes freed by keeping one of each, files by category. */
  async duplicateCounts(taskId: string): Promise<CategoryCounts & { groups: number }> {
    const live = this.itemsOf(taskId, 'duplicate')
      .select(['group_id', sql<number>`count(*)`.as('gn'), sql<number>`max(size)`.as('gsize')])
      .groupBy('group_id')
      .having(sql<number>`count(*)`, '>', 1);
    const totals = await this.db
      .selectFrom(live.as('g'))
      .select([
        sql<number>`count(*)`.as('groups'),
        sql<number>`coalesce(sum(gn), 0)`.as('files'),
        sql<number>`coalesce(sum((gn - 1) * gsize), 0)`.as('freeable'),
      ])
      .executeTakeFirstOrThrow();
    const cats = await this.itemsOf(taskId, 'duplicate')
      .where(
        'group_id',
        'in',
        this.itemsOf(taskId, 'duplicate')
          .select('group_id')
          .groupBy('group_id')
          .having(sql<number>`count(*)`, '>', 1),
      )
      .select(['category', sql<number>`count(*)`.as('n')])
      .groupBy('category')
      .execute();
    const byCategory: Record<string, number> = {};
    for (const c of cats) byCategory[c.category] = Number(c.n);
    return {
      groups: Number(totals.groups),
      count: Number(totals.files),
      size: Number(totals.freeable),
      byCategory,
    };
  }

  /** Empty folders remaining, nested ones included. */
  async emptyCount(taskId: string): Promise<number> {
    const r = await this.itemsOf(taskId, 'empty')
      .select(sql<number>`coalesce(sum(nested_count + 1), 0)`.as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Remaining results ranked up to `maxOrdinal` (what a free user may still delete). */
  async countVisible(taskId: string, maxOrdinal: number): Promise<number> {
    const r = await this.db
      .selectFrom('cleanup_items')
      .where('task_id', '=', taskId)
      .where('deleted', '=', 0)
      .where('ordinal', '<=', maxOrdinal)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}

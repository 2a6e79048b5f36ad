import { setTimeout as sleep } from 'node:timers/promises';
import {
  Code,
  CleanupStatus,
  LIMITS,
  MAX_CLEANUP_DELETE,
  canSlim,
  normalizePath,
  type BillingMode,
  type CleanupKind,
  type CleanupTask,
  type DeleteCleanupBody,
  type DeleteCleanupData,
  type DuplicateFilesPage,
  type EmptyFoldersPage,
  type LargeFilesPage,
  type RunCleanupData,
} from '@skyferry/contract';
import { anyCopyRemains, removeEmptyFolder, removeScannedFile, type RemoveOutcome } from '@skyferry/engine';
import type { JobQueue } from '@skyferry/queue';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type {
  CleanupItemKind,
  CleanupItemRow,
  CleanupRepository,
  CleanupTaskRow,
  ItemListQuery,
} from '../../repositories/cleanup.ts';
import type { CloudOwner } from '../../repositories/clouds.ts';
import type { CloudIdentity, CloudsService } from '../clouds.ts';
import { newId } from '../crypto.ts';
import { mapFileError } from '../files/errors.ts';
import { cloudLabel } from '../files/files-service.ts';
import type { UsersService } from '../users.ts';
import { NO_SUMMARIES, toCleanupTask, toEmptyFolder, toGroup, toItem, type Summaries } from './views.ts';

/** What a scan job carries through the queue. */
export interface CleanupJob {
  type: 'cleanup_scan';
  taskId: string;
  owner: CloudOwner;
}
export type CleanupQueue = JobQueue<CleanupJob>;

export interface CleanupServiceOptions {
  repo: CleanupRepository;
  queue: CleanupQueue;
  clouds: CloudsService;
  users: UsersService;
  billingMode: BillingMode;
  log: Logger;
  now?: () => number;
  /** Deletions at once within one call (default 8). */
  deleteConcurrency?: number;
  /** How long a deletion's lease on its scan lasts before it is renewed (ms, default 60 s). */
  deletionLeaseMs?: number;
  /** How long a deletion waits for another one of the same scan to end (ms, default 5 s). */
  deletionWaitMs?: number;
}

export interface RunCleanupInput {
  cloud_id: string;
  path: string;
  imode: number;
  large_threshold: number;
}

export interface ListInput {
  task_id: string;
  page: number;
  page_size: number;
  category: string;
  sort_by: 'size' | 'date' | 'name';
  order: 'asc' | 'desc';
}

const KIND_OF: Record<CleanupKind, CleanupItemKind> = {
  empty_folders: 'empty',
  duplicate_files: 'duplicate',
  large_files: 'large',
};

export function ownerOf(identity: CloudIdentity): CloudOwner {
  return 'userId' in identity ? { userId: identity.userId } : { visitorId: identity.visitorId };
}

function ownerKey(owner: CloudOwner): string {
  return 'userId' in owner ? `u.${owner.userId}` : `v.${owner.visitorId}`;
}

type Failure = DeleteCleanupData['failed'][number];

/**
 * Clean-up scans: starting one (a rescan replaces the cloud's previous scan), reading it and its
 * results with the free-plan limit, cancelling, and deleting results from the cloud. The scan
 * itself runs in `CleanupRunner` on whichever worker takes the job.
 */
export class CleanupService {
  private readonly o: Required<CleanupServiceOptions>;
  /** The deletion running or queued last, per scan (see `delete`). */
  private readonly deleting = new Map<string, Promise<void>>();

  constructor(options: CleanupServiceOptions) {
    this.o = {
      now: () => Date.now(),
      deleteConcurrency: 8,
      deletionLeaseMs: 60_000,
      deletionWaitMs: 5_000,
      ...options,
    };
  }

  get queue(): CleanupQueue {
    return this.o.queue;
  }

  /** Whether the owner sees every result (billing off, or a licence). */
  private async unlimited(owner: CloudOwner): Promise<boolean> {
    if (this.o.billingMode === 'off') return true;
    return 'userId' in owner ? this.o.users.isPremium(owner.userId) : false;
  }

  private async owned(owner: CloudOwner, id: string): Promise<CleanupTaskRow> {
    const row = await this.o.repo.get(owner, id);
    if (!row) throw errors.notFound('task_not_found');
    return row;
  }

  private async summaries(row: CleanupTaskRow): Promise<Summaries> {
    if (row.status !== CleanupStatus.completed) return NO_SUMMARIES;
    const [duplicate, large, empty] = await Promise.all([
      this.o.repo.duplicateCounts(row.id),
      this.o.repo.countsByCategory(row.id, 'large'),
      this.o.repo.emptyCount(row.id),
    ]);
    return { duplicate, large, empty };
  }

  private async view(row: CleanupTaskRow, unlimited?: boolean): Promise<CleanupTask> {
    const owner: CloudOwner = row.user_id ? { userId: row.user_id } : { visitorId: row.visitor_id ?? '' };
    const all = unlimited ?? (await this.unlimited(owner));
    const [summaries, freeDeletable] = await Promise.all([
      this.summaries(row),
      all || row.status !== CleanupStatus.completed
        ? Promise.resolve(0)
        : this.o.repo.countVisible(row.id, LIMITS.freeCleanupResults),
    ]);
    return toCleanupTask(row, summaries, { limited: !all, freeDeletable }, this.o.now());
  }

  // --- scans -------------------------------------------------------------------------------------

  async run(identity: CloudIdentity, input: RunCleanupInput): Promise<RunCleanupData> {
    const owner = ownerOf(identity);
    const cloud = await this.o.clouds.get(identity, input.cloud_id);
    if (!canSlim(cloud.flags)) throw errors.forbidden('cloud_read_only');
    if (cloud.status !== 'authorized') throw errors.cloudAuthExpired({ cloud_id: cloud.id });
    const path = normalizePath(input.path);
    // A mistyped folder answers at once (404), and the cloud's previous results stay.
    if (path !== '/') await this.requireFolder(identity, cloud.id, path);
    // A rescan replaces the cloud's previous scan: a running one is cancelled, old results go.
    for (const old of await this.o.repo.ofCloud(owner, cloud.id)) {
      if (old.status === CleanupStatus.scanning && old.job_id) await this.o.queue.cancel(old.job_id).catch(() => false);
      await this.o.repo.deleteTask(old.id);
    }
    const now = this.o.now();
    const id = newId();
    const jobId = `cleanup-${id}`;
    await this.o.repo.insertTask({
      id,
      user_id: 'userId' in owner ? owner.userId : null,
      visitor_id: 'visitorId' in owner ? owner.visitorId : null,
      cloud_id: cloud.id,
      path,
      imode: input.imode,
      large_threshold: input.large_threshold,
      status: CleanupStatus.scanning,
      phase: 'waiting',
      filename: '',
      total_count: 0,
      folder_count: 0,
      total_size: 0,
      bytes_read: 0,
      bytes_planned: 0,
      has_trash: 0,
      error_count: 0,
      error: null,
      job_id: jobId,
      started_at: null,
      finished_at: null,
      created_at: now,
      updated_at: now,
    });
    await this.o.queue.enqueue(
      { type: 'cleanup_scan', taskId: id, owner },
      { jobId, group: ownerKey(owner), maxAttempts: 3 },
    );
    this.o.log.info({ cleanup: id, cloud: cloud.id, imode: input.imode }, 'clean-up scan queued');
    return { task_id: id };
  }

  /** The folder a scan is asked for must be there: 404 "The path does not exist." otherwise (a file: 400). */
  private async requireFolder(identity: CloudIdentity, cloudId: string, path: string): Promise<void> {
    const { cloud, provider } = await this.o.clouds.open(identity, cloudId);
    try {
      const st = await provider.stat(path, { expectFolder: true });
      if (st.kind !== 'dir') throw errors.badRequest('field_invalid', { field: 'path' });
    } catch (err) {
      const mapped = mapFileError(err, { id: cloud.id, label: cloudLabel(cloud) });
      if (mapped.expired) await this.o.clouds.markExpired(cloud.id);
      throw mapped.error;
    } finally {
      await provider.close?.().catch(() => undefined);
    }
  }

  /** The caller's latest scan (of one cloud when given), or null. */
  async latest(identity: CloudIdentity, cloudId?: string): Promise<CleanupTask | null> {
    const row = await this.o.repo.latest(ownerOf(identity), cloudId);
    return row ? this.view(row) : null;
  }

  /** poll-progress: 404 for a scan that is not (or no longer) the caller's. */
  async poll(identity: CloudIdentity, taskId: string): Promise<CleanupTask> {
    return this.view(await this.owned(ownerOf(identity), taskId));
  }

  /** Cancels a running scan (status 4); a finished one is answered as it is. */
  async cancel(identity: CloudIdentity, taskId: string): Promise<CleanupTask> {
    const owner = ownerOf(identity);
    const row = await this.owned(owner, taskId);
    if (row.status === CleanupStatus.scanning) {
      const now = this.o.now();
      const done = await this.o.repo.transition(row.id, [CleanupStatus.scanning], {
        status: CleanupStatus.canceled,
        phase: null,
        finished_at: now,
        updated_at: now,
      });
      if (done && row.job_id) await this.o.queue.cancel(row.job_id).catch(() => false);
    }
    return this.view(await this.owned(owner, taskId));
  }

  /** Deleting an account: its running scans are canceled, and every scan goes with its results. */
  async removeAllOf(userId: string): Promise<void> {
    for (const row of await this.o.repo.ofOwner({ userId })) {
      if (row.status === CleanupStatus.scanning && row.job_id) await this.o.queue.cancel(row.job_id).catch(() => false);
      await this.o.repo.deleteTask(row.id);
    }
  }

  /** A scan whose job used all its attempts fails. */
  async jobFailed(taskId: string, error: string): Promise<void> {
    const now = this.o.now();
    await this.o.repo.transition(taskId, [CleanupStatus.scanning], {
      status: CleanupStatus.failed,
      phase: null,
      finished_at: now,
      updated_at: now,
      error: JSON.stringify({ code: 'internal', message: error }),
    });
  }

  // --- results -----------------------------------------------------------------------------------

  private async finished(owner: CloudOwner, taskId: string): Promise<{ row: CleanupTaskRow; unlimited: boolean }> {
    const row = await this.owned(owner, taskId);
    return { row, unlimited: await this.unlimited(owner) };
  }

  private query(input: ListInput, unlimited: boolean): ItemListQuery {
    // The free view is the first page of the default order; paging past it needs a licence.
    const pageSize = unlimited ? input.page_size : Math.min(input.page_size, LIMITS.freeCleanupResults);
    return {
      category: input.category,
      sortBy: input.sort_by,
      order: input.order,
      page: input.page,
      pageSize,
      ...(unlimited ? {} : { maxOrdinal: LIMITS.freeCleanupResults }),
    };
  }

  async emptyFolders(identity: CloudIdentity, input: ListInput): Promise<EmptyFoldersPage> {
    const { row, unlimited } = await this.finished(ownerOf(identity), input.task_id);
    const q = this.query(input, unlimited);
    // Empty folders hold no file type: they count as "other", as a deletion of all in a category does.
    const r = await this.o.repo.listItems(row.id, 'empty', q);
    return {
      items: r.rows.map(toEmptyFolder),
      total: r.total,
      page: q.page,
      page_size: q.pageSize,
      limited: !unlimited,
      visible_total: r.visible,
    };
  }

  async largeFiles(identity: CloudIdentity, input: ListInput): Promise<LargeFilesPage> {
    const { row, unlimited } = await this.finished(ownerOf(identity), input.task_id);
    const q = this.query(input, unlimited);
    const r = await this.o.repo.listItems(row.id, 'large', q);
    return {
      items: r.rows.map(toItem),
      total: r.total,
      page: q.page,
      page_size: q.pageSize,
      limited: !unlimited,
      visible_total: r.visible,
    };
  }

  async duplicateFiles(identity: CloudIdentity, input: ListInput): Promise<DuplicateFilesPage> {
    const { row, unlimited } = await this.finished(ownerOf(identity), input.task_id);
    const q = this.query(input, unlimited);
    const [r, surplus] = await Promise.all([
      this.o.repo.listGroups(row.id, q),
      this.o.repo.surplus(row.id, q.category),
    ]);
    return {
      surplus_count: surplus.count,
      surplus_size: surplus.size,
      items: r.groups.map(toGroup),
      total: r.total,
      page: q.page,
      page_size: q.pageSize,
      limited: !unlimited,
      visible_total: r.visible,
    };
  }

  // --- deleting ----------------------------------------------------------------------------------

  /** Picks what a "delete all" call removes: at most MAX_CLEANUP_DELETE, one copy of each duplicate group kept. */
  private async pickAll(
    row: CleanupTaskRow,
    kind: CleanupItemKind,
    body: DeleteCleanupBody,
  ): Promise<{ targets: CleanupItemRow[]; kept: Map<string, CleanupItemRow[]> }> {
    const category = body.category ?? 'all';
    if (kind !== 'duplicate') {
      return { targets: await this.o.repo.remaining(row.id, kind, category, MAX_CLEANUP_DELETE), kept: new Map() };
    }
    const targets: CleanupItemRow[] = [];
    const kept = new Map<string, CleanupItemRow[]>();
    let page = 1;
    while (targets.length < MAX_CLEANUP_DELETE) {
      const r = await this.o.repo.listGroups(row.id, {
        category,
        sortBy: 'size',
        order: 'desc',
        page,
        pageSize: 100,
      });
      if (r.groups.length === 0) break;
      for (const g of r.groups) {
        const byTime = [...g.members].sort(
          (a, b) => (a.modified ?? 0) - (b.modified ?? 0) || (a.path < b.path ? -1 : 1),
        );
        const keep = body.keep === 'oldest' ? byTime[0] : byTime[byTime.length - 1];
        if (!keep) continue;
        kept.set(g.group_id, [keep]);
        for (const m of g.members) if (m.id !== keep.id) targets.push(m);
        if (targets.length >= MAX_CLEANUP_DELETE) break;
      }
      page++;
    }
    return { targets, kept };
  }

  /**
   * Deletes results. Deletions of one scan run one after another: each checks that a kept copy of
   * every duplicate group it touches still exists before it removes the others, so two calls at
   * once (two tabs keeping different copies) cannot remove every copy. In this process they queue;
   * across processes sharing the database each holds a lease on the scan's row (`leased`), and a
   * call that cannot get it within `deletionWaitMs` answers 409007 "a deletion of this scan is
   * already running".
   */
  async delete(identity: CloudIdentity, kindName: CleanupKind, body: DeleteCleanupBody): Promise<DeleteCleanupData> {
    const key = body.task_id;
    const before = this.deleting.get(key) ?? Promise.resolve();
    const run = before.then(() => this.leased(identity, body.task_id, () => this.deleteNow(identity, kindName, body)));
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.deleting.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.deleting.get(key) === tail) this.deleting.delete(key);
    }
  }

  /** Runs `work` holding the scan's deletion lease in the database (claimed, renewed, released). */
  private async leased<T>(identity: CloudIdentity, taskId: string, work: () => Promise<T>): Promise<T> {
    // Not the caller's scan: 404 as ever, before anything is claimed.
    await this.owned(ownerOf(identity), taskId);
    const { repo, now, deletionLeaseMs, deletionWaitMs } = this.o;
    const token = newId();
    const deadline = Date.now() + deletionWaitMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 500)) {
      const at = now();
      if (await repo.claimDeletion(taskId, token, at, at + deletionLeaseMs)) break;
      if (Date.now() >= deadline) throw new ApiError(Code.CLEANUP_DELETION_RUNNING, 'cleanup_deletion_running');
      await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
    }
    // A long deletion renews its lease; one whose process dies lets it expire.
    const renew = setInterval(
      () => {
        repo
          .extendDeletion(taskId, token, now() + deletionLeaseMs)
          .then((held) => {
            if (!held) this.o.log.warn({ cleanup: taskId }, 'clean-up deletion lease lost');
          })
          .catch((err: unknown) => this.o.log.warn({ err, cleanup: taskId }, 'clean-up deletion lease not renewed'));
      },
      Math.max(1000, Math.floor(deletionLeaseMs / 3)),
    );
    renew.unref();
    try {
      return await work();
    } finally {
      clearInterval(renew);
      await repo
        .releaseDeletion(taskId, token)
        .catch((err: unknown) => this.o.log.warn({ err, cleanup: taskId }, 'clean-up deletion lease not released'));
    }
  }

  private async deleteNow(
    identity: CloudIdentity,
    kindName: CleanupKind,
    body: DeleteCleanupBody,
  ): Promise<DeleteCleanupData> {
    const owner = ownerOf(identity);
    const kind = KIND_OF[kindName];
    const { row, unlimited } = await this.finished(owner, body.task_id);
    if (row.status !== CleanupStatus.completed) throw new ApiError(Code.CONFLICT, 'cleanup_scan_running');
    const failed: Failure[] = [];
    let targets: CleanupItemRow[];
    /** Duplicates: for each group touched, the copies that stay (must still exist). */
    let kept = new Map<string, CleanupItemRow[]>();
    if (body.all) {
      if (!unlimited) throw errors.premiumRequired();
      ({ targets, kept } = await this.pickAll(row, kind, body));
    } else {
      const ids = [...new Set(body.ids ?? [])];
      if (ids.length === 0) throw errors.badRequest('select_files_first');
      targets = (await this.o.repo.itemsByIds(row.id, ids)).filter((i) => i.kind === kind);
      // An id that is no result of this list (unknown, another list's, or deleted already) is reported, never skipped in silence.
      const known = new Set(targets.map((t) => t.id));
      for (const id of ids) {
        if (!known.has(id)) failed.push({ id, path: '', reason: 'not_found', message: 'not a result of this list' });
      }
      if (!unlimited && targets.some((t) => t.ordinal > LIMITS.freeCleanupResults)) throw errors.premiumRequired();
      if (kind === 'duplicate') {
        const groupIds = [...new Set(targets.map((t) => t.group_id ?? ''))];
        const members = await this.o.repo.groupMembers(row.id, groupIds);
        const chosen = new Set(targets.map((t) => t.id));
        for (const [groupId, list] of members) {
          const rest = list.filter((m) => !chosen.has(m.id));
          if (rest.length === 0 && body.delete_all_copies !== true) throw errors.badRequest('cleanup_delete_last_copy');
          kept.set(groupId, rest);
        }
      }
    }

    const { provider } = await this.o.clouds.open(identity, row.cloud_id);
    const removed: CleanupItemRow[] = [];
    let trashed = row.has_trash === 1;
    // What left the cloud for good, and what went to its trash (still there, restorable).
    let freed = 0;
    let inTrash = 0;
    try {
      // A group whose kept copies are all gone from the cloud keeps its selected ones too.
      const lastCopies = new Set<string>();
      for (const [groupId, rest] of kept) {
        if (rest.length === 0) continue;
        const remains = await anyCopyRemains(
          provider,
          rest.map((m) => ({ path: m.path, size: m.size, modTime: m.modified })),
        );
        if (!remains) lastCopies.add(groupId);
      }
      const queue = [...targets];
      const worker = async () => {
        for (let t = queue.shift(); t; t = queue.shift()) {
          if (t.group_id && lastCopies.has(t.group_id)) {
            failed.push({ id: t.id, path: t.path, reason: 'last_copy', message: 'no other copy remains' });
            continue;
          }
          const outcome: RemoveOutcome =
            kind === 'empty'
              ? await removeEmptyFolder(provider, t.path)
              : await removeScannedFile(provider, { path: t.path, size: t.size, modTime: t.modified });
          if (outcome.ok) {
            removed.push(t);
            if (!outcome.alreadyGone) {
              trashed = outcome.trashed;
              if (outcome.trashed) inTrash += t.size;
              else freed += t.size;
            }
          } else {
            failed.push({ id: t.id, path: t.path, reason: outcome.reason, message: outcome.message });
            if (outcome.code === 'auth_expired' || outcome.code === 'auth_invalid')
              await this.o.clouds.markExpired(row.cloud_id);
          }
        }
      };
      await Promise.all(Array.from({ length: this.o.deleteConcurrency }, worker));
    } finally {
      await provider.close?.().catch(() => undefined);
    }

    // A file is listed in several lists (a large duplicate): gone from one, gone from all.
    await this.o.repo.markDeletedPaths(
      row.id,
      removed.map((r) => r.path),
    );
    await this.o.repo.updateById(row.id, { updated_at: this.o.now() });
    this.o.log.info(
      { cleanup: row.id, kind, removed: removed.length, failed: failed.length },
      'clean-up results deleted',
    );
    const remaining = body.all ? await this.o.repo.remainingCount(row.id, kind, body.category ?? 'all') : 0;
    const fresh = (await this.o.repo.getById(row.id)) ?? row;
    return {
      deleted: removed.length,
      freed,
      trashed,
      in_trash: inTrash,
      failed: failed.sort((a, b) => (a.path < b.path ? -1 : 1)),
      remaining,
      task: await this.view(fresh, unlimited),
    };
  }
}

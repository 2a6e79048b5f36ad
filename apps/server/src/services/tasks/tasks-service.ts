import { randomUUID } from 'node:crypto';
import {
  Code,
  DEFAULT_SAME_NAME_POLICY,
  MAX_PLAN_ITEMS,
  TASK_STATES,
  TaskState,
  TaskType,
  baseName,
  canWrite,
  hasGoogleDocs,
  isPhotoOrVideo,
  isValidTimeZone,
  isWithin,
  normalizePath,
  parentOf,
  type BillingMode,
  type CreateTaskBody,
  type CreateTaskData,
  type DeletionsPromptData,
  type FileFilter,
  type ListTasksBody,
  type ListTasksData,
  type PlanQuery,
  type PollProgressData,
  type Schedule,
  type ServerTask,
  type SyncMode,
  type TaskDetail,
  type TaskPlan,
} from '@skyferry/contract';
import {
  MemoryTwoWayStateStore,
  itemPaths,
  type TwoWayStateStore,
  planPage,
  planTransfer,
  type TransferMode,
  type TransferPlan,
} from '@skyferry/engine';
import type { JobQueue } from '@skyferry/queue';
import { ProviderError, setGoogleDocsMode, type Provider } from '@skyferry/providers';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type { ProgressStore } from '../../repositories/task-progress.ts';
import type { TaskRow, TasksRepository } from '../../repositories/tasks.ts';
import { refusesCredentials, type CloudRecord, type CloudsService } from '../clouds.ts';
import { nextRunAfter, type ScheduledTask } from '../scheduler/scheduler.ts';
import type { UsersService } from '../users.ts';
import { mapFileError } from '../files/errors.ts';
import { markRefusedExpired } from './expired.ts';
import {
  cloudLabel,
  conflictSideNames,
  kindInfo,
  checkFilter,
  narrowToMedia,
  parseSource,
  parseTarget,
  shortCloudLabel,
  showsLiveProgress,
  toFailedFile,
  toServerTask,
} from './views.ts';

/** What a task job carries through the queue. */
export interface TaskJob {
  taskId: string;
  userId: string;
}
export type TaskQueue = JobQueue<TaskJob>;

/** States of the running list (completed 0) and the finished list (completed 1). */
export const RUNNING_LIST_STATES = [
  TaskState.scanning,
  TaskState.running,
  TaskState.pending,
  TaskState.waiting,
  TaskState.waitingNoCancel,
] as const;
export const FINISHED_LIST_STATES = [
  TaskState.completed,
  TaskState.failed,
  TaskState.canceled,
  TaskState.partial,
  TaskState.insufficientStorage,
  TaskState.notEnoughTraffic,
] as const;
/** States a new run may start from (not while one is queued, running or stopping). */
const STARTABLE = [...FINISHED_LIST_STATES, TaskState.pending] as const;
/** States with a job in the queue or on a worker. */
const ACTIVE = [TaskState.scanning, TaskState.running, TaskState.waiting, TaskState.waitingNoCancel] as const;
const RETRYABLE = [TaskState.failed, TaskState.partial, TaskState.insufficientStorage, TaskState.notEnoughTraffic];

export interface TasksServiceOptions {
  repo: TasksRepository;
  progress: ProgressStore;
  queue: TaskQueue;
  clouds: CloudsService;
  users: UsersService;
  billingMode: BillingMode;
  log: Logger;
  now?: () => number;
  /** How long creating a task may spend planning to check space and deletions (default 10 s). */
  checkBudgetMs?: number;
}

/** The user's view of one side of a new task, opened and checked. */
interface OpenedCloud {
  cloud: CloudRecord;
  provider: Provider;
}

/**
 * Server tasks: creating (with the spec's checks and prompts), listing, reading, scheduling,
 * starting, retrying, cancelling and deleting them. Runs themselves happen in `TaskRunner`, on
 * whichever worker the queue hands the job to.
 */
/** How `create` plans for Edit: with the task's two-way state, within a time budget, for its figures only. */
type PlanWith = { twoWayState?: TwoWayStateStore; signal?: AbortSignal; countOnly?: boolean };

export class TasksService {
  private readonly o: Required<TasksServiceOptions>;

  constructor(options: TasksServiceOptions) {
    this.o = { now: () => Date.now(), checkBudgetMs: 10_000, ...options };
  }

  get queue(): TaskQueue {
    return this.o.queue;
  }

  // --- reading -----------------------------------------------------------------------------------

  private async cloudsOf(userId: string): Promise<Map<string, CloudRecord>> {
    const list = await this.o.clouds.listOwned({ kind: 'user', userId });
    return new Map(list.map((c) => [c.id, c]));
  }

  private async owned(userId: string, id: string): Promise<TaskRow> {
    const row = await this.o.repo.get(userId, id);
    if (!row) throw errors.notFound('task_not_found');
    return this.reconcile(row);
  }

  /**
   * A task stopping after a cancel (state 9) whose job has ended without its worker reporting back
   * (the worker died) is canceled now.
   */
  private async reconcile(row: TaskRow): Promise<TaskRow> {
    if (row.state !== TaskState.waitingNoCancel || !row.job_id) return row;
    const job = await this.o.queue.get(row.job_id);
    if (job && (job.state === 'active' || job.state === 'waiting' || job.state === 'delayed')) return row;
    const now = this.o.now();
    const patch = { state: TaskState.canceled, finished_at: now, duration: now - (row.started_at ?? now) };
    if (await this.o.repo.transition(row.id, [TaskState.waitingNoCancel], patch, { jobId: row.job_id })) {
      return { ...row, ...patch };
    }
    return (await this.o.repo.getById(row.id)) ?? row;
  }

  private async view(row: TaskRow, clouds?: Map<string, CloudRecord>): Promise<ServerTask> {
    const live = await this.o.progress.get(row.id);
    return toServerTask(row, clouds ?? (await this.cloudsOf(row.user_id)), live, this.o.now());
  }

  async list(userId: string, body: ListTasksBody): Promise<ListTasksData> {
    // Without `completed`: every task (the Tasks page), or those in `states`.
    let states: readonly number[] =
      body.completed === undefined ? TASK_STATES : body.completed === 1 ? FINISHED_LIST_STATES : RUNNING_LIST_STATES;
    if (body.states) states = states.filter((st) => body.states?.includes(st));
    if (states.length === 0) return { items: [], total: 0 };
    const page = await this.o.repo.list(userId, states, body.page, body.page_size);
    const rows = await Promise.all(page.rows.map((r) => this.reconcile(r)));
    const [clouds, live] = await Promise.all([
      this.cloudsOf(userId),
      this.o.progress.getMany(rows.filter((r) => showsLiveProgress(r.state)).map((r) => r.id)),
    ]);
    const now = this.o.now();
    return { items: rows.map((r) => toServerTask(r, clouds, live.get(r.id), now)), total: page.total };
  }

  async detail(userId: string, id: string): Promise<TaskDetail> {
    const row = await this.owned(userId, id);
    const [task, failed, total] = await Promise.all([
      this.view(row),
      this.o.repo.failedFiles(id, 1000),
      this.o.repo.countFailedFiles(id),
    ]);
    return { ...task, result_list: failed.map(toFailedFile), result_total: total };
  }

  /** One of the user's tasks (404 when it is not theirs). */
  async get(userId: string, id: string): Promise<ServerTask> {
    return this.view(await this.owned(userId, id));
  }

  /** poll-progress: 404 for a task that is not (or no longer) the caller's, which stops the client polling. */
  async poll(userId: string, id: string): Promise<PollProgressData> {
    const row = await this.owned(userId, id);
    const live = await this.o.progress.get(id);
    const task = toServerTask(row, new Map(), live, this.o.now());
    return {
      status: task.state,
      progress: task.progress,
      total_counts: task.total_counts,
      finished_counts: task.finished_counts,
    };
  }

  // --- creating ----------------------------------------------------------------------------------

  /**
   * With billing on a task needs a licence: one that has ended answers 4011001 ("Your current
   * license has expired.", Renew), none at all 403001 (the client sends the user to /buy).
   */
  async requireLicence(userId: string): Promise<void> {
    if (this.o.billingMode === 'off') return;
    const status = await this.o.users.licenceStatus(userId);
    if (status === 'expired') throw errors.licenseExpired();
    if (status === 'none') throw errors.premiumRequired();
  }

  /**
   * A run starting now needs some transfer data left (4001001, "Buy now"); a run that needs more
   * than is left still stops in state 10 with the size needed. Scheduled runs are checked when they run.
   */
  private async requireTraffic(userId: string): Promise<void> {
    if (this.o.billingMode === 'off') return;
    if ((await this.o.users.remainingTraffic(userId)) <= 0) {
      throw new ApiError(Code.TRAFFIC_INSUFFICIENT, 'traffic_insufficient');
    }
  }

  private async open(userId: string, cloudId: string): Promise<OpenedCloud> {
    return this.o.clouds.open({ kind: 'user', userId }, cloudId);
  }

  /**
   * `planWith`: the Tasks page's Edit plans a task that exists, with its two-way state and within
   * a time budget (`signal`), for its figures only (`countOnly`: the plan holds no items).
   */
  async create(
    userId: string,
    body: CreateTaskBody,
    headerTimeZone: string | undefined,
    planWith: PlanWith = {},
  ): Promise<CreateTaskData> {
    const now = this.o.now();
    const taskType = body.task_type === TaskType.migrate ? TaskType.migrate : TaskType.sync;
    const syncMode = taskType === TaskType.sync ? (body.sync_mode ?? 'one_way') : null;
    const mode: TransferMode = syncMode ?? 'migrate';
    const paths = [...new Set(body.from_cloud.paths.map(normalizePath))];
    const targetPath = normalizePath(body.to_cloud.path);
    if (paths.length === 0) throw errors.badRequest('select_files_first');
    if (taskType === TaskType.sync && paths.length !== 1) {
      throw errors.badRequest('field_invalid', { field: 'from_cloud.paths' });
    }
    // A move is a migration whose sources go once copied; a cloud's root cannot go.
    if (body.move && (taskType !== TaskType.migrate || paths.includes('/'))) {
      throw errors.badRequest('field_invalid', {
        field: body.move && taskType !== TaskType.migrate ? 'move' : 'from_cloud.paths',
      });
    }
    const timeZone = body.time_zone ?? (headerTimeZone && isValidTimeZone(headerTimeZone) ? headerTimeZone : 'UTC');
    if (!isValidTimeZone(timeZone)) throw errors.badRequest('schedule_invalid', { detail: `time zone ${timeZone}` });
    const schedule: Schedule | null = body.schedule ?? null;
    let nextRun: number | null = null;
    if (schedule) {
      nextRun = nextRunAfter(schedule, timeZone, now);
      if (nextRun === null) throw errors.badRequest('schedule_in_past');
    }
    await this.requireLicence(userId);

    const sameCloud = body.from_cloud.cloud_id === body.to_cloud.cloud_id;
    // Opening checks ownership first: someone else's cloud is "not found", whatever else is asked.
    const source = await this.open(userId, body.from_cloud.cloud_id);
    let target = source;
    try {
      // What the source shows of Google Docs shapes every check and plan below, as it will the runs.
      if (hasGoogleDocs(source.cloud.kind)) setGoogleDocsMode(source.provider, body.google_docs ?? 'export');
      if (!sameCloud) target = await this.open(userId, body.to_cloud.cloud_id);
      if (sameCloud) {
        for (const p of paths) {
          if (isWithin(targetPath, p) || (taskType === TaskType.sync && isWithin(p, targetPath))) {
            throw errors.badRequest('same_path');
          }
        }
      }
      return await this.createChecked(userId, body, {
        now,
        taskType,
        syncMode,
        mode,
        paths,
        targetPath,
        timeZone,
        schedule,
        nextRun,
        sameCloud,
        source,
        target,
        planWith,
      });
    } catch (err) {
      throw await this.checkFailure(err, source, target);
    } finally {
      await source.provider.close?.().catch(() => undefined);
      if (target !== source) await target.provider.close?.().catch(() => undefined);
    }
  }

  /**
   * What a failure while a new task is checked answers. A service refusing a cloud's authorisation
   * marks that cloud expired (Reauthorize); any other failure of a cloud (a link leading out of a
   * local folder, a folder the service does not let the user read) gets the catalogue's answer.
   */
  private async checkFailure(err: unknown, source: OpenedCloud, target: OpenedCloud): Promise<unknown> {
    if (err instanceof ApiError) return err;
    // A refusal without a body (S3 answers a HEAD with a revoked key by a bare 403) may be a refused
    // key too: a listing of each side tells.
    if (refusesCredentials(err) || ProviderError.is(err, 'permission')) {
      const [refused] = await markRefusedExpired(this.o.clouds, [source, target]);
      if (refused || refusesCredentials(err))
        return errors.cloudAuthExpired({ cloud_id: (refused ?? source.cloud).id });
    }
    if (!ProviderError.is(err)) return err;
    this.o.log.info({ code: err.code, message: err.message }, 'task check failed at a cloud');
    return mapFileError(err).error;
  }

  private async createChecked(
    userId: string,
    body: CreateTaskBody,
    c: {
      now: number;
      taskType: number;
      syncMode: SyncMode | null;
      mode: TransferMode;
      paths: string[];
      targetPath: string;
      timeZone: string;
      schedule: Schedule | null;
      nextRun: number | null;
      sameCloud: boolean;
      source: OpenedCloud;
      target: OpenedCloud;
      planWith: PlanWith;
    },
  ): Promise<CreateTaskData> {
    const { now, taskType, syncMode, mode, paths, targetPath, timeZone, schedule, nextRun, sameCloud, source, target } =
      c;
    if (
      !canWrite(target.cloud.flags) ||
      ((syncMode === 'two_way' || body.move === true) && !canWrite(source.cloud.flags))
    ) {
      throw errors.forbidden('cloud_read_only');
    }
    if (sameCloud && !body.confirm_same_cloud && !body.dry_run) {
      throw new ApiError(Code.CONFIRM_SAME_CLOUD, 'confirm_same_cloud', {}, { cloud_id: body.to_cloud.cloud_id });
    }
    checkFilter(body.filter);
    const filter = await this.effectiveFilter(body.filter ?? null, target.cloud, source.provider, paths, taskType);
    await this.checkSources(source.provider, paths, taskType);
    await checkTarget(target.provider, targetPath);

    const sameNamePolicy = body.same_name_policy ?? DEFAULT_SAME_NAME_POLICY;
    const conflictResolution = body.conflict_resolution ?? 'keep_both';
    const planRequest = {
      source: source.provider,
      target: target.provider,
      mode,
      sourcePaths: paths,
      targetPath,
      sameNamePolicy,
      filter,
      conflictResolution,
      followLinks: body.follow_links === true,
      twoWayState: c.planWith.twoWayState ?? new MemoryTwoWayStateStore(),
      sideNames: conflictSideNames(source.cloud, target.cloud),
    };

    if (body.dry_run) {
      const plan = await planTransfer({ ...planRequest, signal: c.planWith.signal, countOnly: c.planWith.countOnly });
      const timesKept = {
        source: source.provider.features.setModTime,
        target: target.provider.features.setModTime,
      };
      return { task: null, plan: planView(plan, body.plan_query, timesKept) };
    }
    if (!schedule) await this.requireTraffic(userId);
    if (!schedule && (!body.confirm_insufficient_space || !body.confirm_deletions)) {
      // Plan within a budget to prompt about space and deletions now; a tree too large to plan
      // quickly is checked by the run itself (state 6, or a failed run asking for confirmation).
      const signal = AbortSignal.timeout(this.o.checkBudgetMs);
      // Its figures only: the items of a large tree are not held (the run makes its own plan).
      const plan = await planTransfer({ ...planRequest, signal, countOnly: true }).catch(() => undefined);
      if (plan) {
        if (!body.confirm_deletions && plan.deletes.needsConfirmation) throw confirmDeletionsError(plan);
        if (!body.confirm_insufficient_space) {
          await this.checkSpace(plan, source, target);
        }
      }
    }

    const id = randomUUID();
    const state = schedule ? TaskState.pending : TaskState.waiting;
    const jobId = schedule ? null : `t-${id}-1`;
    await this.o.repo.insert({
      id,
      user_id: userId,
      task_name: body.task_name ?? defaultTaskName(source.cloud, paths, target.cloud, targetPath),
      task_type: taskType,
      from_cloud: JSON.stringify({ cloud_id: body.from_cloud.cloud_id, paths, ...(body.move ? { move: true } : {}) }),
      to_cloud: JSON.stringify({ cloud_id: body.to_cloud.cloud_id, path: targetPath }),
      sync_mode: syncMode,
      same_name_policy: sameNamePolicy,
      filter: filter ? JSON.stringify(filter) : null,
      conflict_resolution: conflictResolution,
      google_docs: body.google_docs ?? 'export',
      follow_links: body.follow_links ? 1 : 0,
      schedule: schedule ? JSON.stringify(schedule) : null,
      time_zone: timeZone,
      is_schedule: schedule ? 2 : 1,
      next_run_time: nextRun,
      state,
      run_mode: 'full',
      confirm_deletes: body.confirm_deletions ? 1 : 0,
      job_id: jobId,
      run_count: schedule ? 0 : 1,
      created_at: now,
      updated_at: now,
    });
    if (jobId) await this.enqueueOrUndo(id, userId, jobId, TaskState.failed);
    const row = await this.o.repo.get(userId, id);
    if (!row) throw errors.notFound('task_not_found');
    this.o.log.info({ task: id, type: taskType, mode, scheduled: schedule !== null }, 'task created');
    return { task: await this.view(row), plan: null };
  }

  /**
   * The filter a run uses: the user's, and for a photos target only pictures and videos (the spec:
   * only they can go to a photos cloud). Selected files that are neither are refused.
   */
  private async effectiveFilter(
    filter: FileFilter | null,
    target: CloudRecord,
    source: Provider,
    paths: string[],
    taskType: number,
  ): Promise<FileFilter | null> {
    if (!kindInfo(target.kind)?.photos) return filter;
    const narrowed = narrowToMedia(filter);
    if (!narrowed) throw errors.badRequest('photos_only_media');
    if (taskType === TaskType.migrate) {
      for (const path of paths) {
        if (path === '/') continue;
        const entry = await source.stat(path).catch(() => undefined);
        if (entry && entry.kind === 'file' && !isPhotoOrVideo(entry.name)) throw errors.badRequest('photos_only_media');
      }
    }
    return narrowed;
  }

  /** Every selected path exists; a sync's source is a folder. */
  private async checkSources(source: Provider, paths: string[], taskType: number): Promise<void> {
    const queue = paths.filter((p) => p !== '/');
    const workers = Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        let entry;
        try {
          entry = await source.stat(path);
        } catch (err) {
          if ((err as { code?: string }).code === 'not_found') throw errors.pathNotExist();
          throw err;
        }
        if (taskType === TaskType.sync && entry.kind !== 'dir') {
          throw errors.badRequest('field_invalid', { field: 'from_cloud.paths' });
        }
      }
    });
    await Promise.all(workers);
  }

  /** 409004 when a side reports less free space than the plan writes to it. */
  private async checkSpace(plan: TransferPlan, source: OpenedCloud, target: OpenedCloud): Promise<void> {
    const sides = [
      { side: 'target' as const, opened: target, needed: plan.bytesTo.target },
      { side: 'source' as const, opened: source, needed: plan.bytesTo.source },
    ];
    for (const { side, opened, needed } of sides) {
      if (needed <= 0 || !opened.provider.about) continue;
      const about = await opened.provider.about().catch(() => undefined);
      if (!about || about.total === undefined || about.used === undefined) continue;
      const available = Math.max(0, about.total - about.used);
      if (needed > available) {
        const cloudName = cloudLabel(opened.cloud);
        throw new ApiError(
          Code.CONFIRM_INSUFFICIENT_SPACE,
          'insufficient_space',
          { cloud_name: cloudName },
          { side, cloud_id: opened.cloud.id, cloud_name: cloudName, needed, available },
        );
      }
    }
  }

  // --- changing ----------------------------------------------------------------------------------

  async setSchedule(userId: string, id: string, isSchedule: 1 | 2): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    if (isSchedule === 2) {
      if (!row.schedule) throw errors.badRequest('schedule_invalid', { detail: 'the task has no schedule' });
      await this.requireLicence(userId);
      const next = nextRunAfter(JSON.parse(row.schedule) as Schedule, row.time_zone, this.o.now());
      if (next === null) throw errors.badRequest('schedule_in_past');
      await this.o.repo.transition(id, 'any', { is_schedule: 2, next_run_time: next }, { userId });
    } else {
      await this.o.repo.transition(id, 'any', { is_schedule: 1 }, { userId });
    }
    return this.view(await this.owned(userId, id));
  }

  /**
   * GET /api/tasks/run/{id}: start now (also "Restart" after a cancel). `resync` (two-way syncs):
   * the run merges both sides as a first run does, past a side found missing or emptied.
   */
  async runNow(userId: string, id: string, opts: { resync?: boolean } = {}): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    if (opts.resync && row.sync_mode !== 'two_way') throw errors.badRequest('field_invalid', { field: 'resync' });
    await this.requireLicence(userId);
    await this.requireTraffic(userId);
    await this.startRun(row, opts.resync ? 'resync' : 'full', `t-${id}-${row.run_count + 1}`);
    return this.view(await this.owned(userId, id));
  }

  /** GET /api/tasks/retry/{id}: retransmit the failed part (a run stopped for space or traffic goes again). */
  async retry(userId: string, id: string): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    if (!RETRYABLE.includes(row.state as (typeof RETRYABLE)[number])) {
      throw new ApiError(Code.CONFLICT, 'task_not_retryable');
    }
    await this.requireLicence(userId);
    await this.requireTraffic(userId);
    const failed = await this.o.repo.countFailedFiles(id);
    const mode = failed > 0 && (row.state === TaskState.failed || row.state === TaskState.partial) ? 'retry' : 'full';
    // "-r": the run history names the run a retry (runs.ts runTrigger).
    await this.startRun(row, mode, `t-${id}-r${row.run_count + 1}`);
    return this.view(await this.owned(userId, id));
  }

  /** DELETE /api/cloud-manager/cancel-transfer: a queued task is canceled at once, a running one stops (9, then 4). */
  async cancel(userId: string, id: string): Promise<ServerTask> {
    const row = await this.owned(userId, id);
    const now = this.o.now();
    if (row.state === TaskState.waiting && row.job_id) {
      const removed = await this.o.queue.cancel(row.job_id);
      const job = removed ? await this.o.queue.get(row.job_id) : undefined;
      if (job?.state === 'canceled' || !job) {
        await this.o.repo.transition(
          id,
          [TaskState.waiting],
          { state: TaskState.canceled, finished_at: now },
          { userId },
        );
      }
    }
    const fresh = await this.owned(userId, id);
    if (
      (fresh.state === TaskState.scanning || fresh.state === TaskState.running || fresh.state === TaskState.waiting) &&
      fresh.job_id
    ) {
      if (
        await this.o.repo.transition(
          id,
          [fresh.state],
          { state: TaskState.waitingNoCancel },
          { userId, jobId: fresh.job_id },
        )
      ) {
        await this.o.queue.cancel(fresh.job_id);
      }
    }
    this.o.log.info({ task: id }, 'task cancel requested');
    return this.view(await this.owned(userId, id));
  }

  /**
   * A cloud was deleted: every task of its owner that is queued, running or stopping with it as
   * source or target is canceled at once (state 4); a running job is aborted wherever it runs.
   */
  async cancelUsingCloud(userId: string, cloudId: string): Promise<string[]> {
    const stoppable = [...ACTIVE, TaskState.waitingNoCancel];
    const rows = await this.o.repo.inStates(userId, stoppable);
    const using = rows.filter((r) => parseSource(r).cloud_id === cloudId || parseTarget(r).cloud_id === cloudId);
    const canceled: string[] = [];
    for (const row of using) {
      const now = this.o.now();
      const patch = { state: TaskState.canceled, finished_at: now, duration: now - (row.started_at ?? now) };
      if (!(await this.o.repo.transition(row.id, stoppable, patch, { userId, jobId: row.job_id }))) continue;
      // The run finds its task canceled and writes nothing more.
      if (row.job_id) await this.o.queue.cancel(row.job_id);
      await this.o.progress.delete(row.id);
      canceled.push(row.id);
    }
    if (canceled.length > 0)
      this.o.log.info({ cloud: cloudId, tasks: canceled }, 'tasks canceled: their cloud was deleted');
    return canceled;
  }

  async remove(userId: string, id: string): Promise<void> {
    const row = await this.owned(userId, id);
    if (row.job_id && (ACTIVE as readonly number[]).includes(row.state)) await this.o.queue.cancel(row.job_id);
    await this.o.repo.delete(userId, id);
    await this.o.progress.delete(id);
    this.o.log.info({ task: id }, 'task deleted');
  }

  /** Deleting an account: every task of the user is canceled where it runs, and removed. */
  async removeAllOf(userId: string): Promise<number> {
    const ids = await this.o.repo.idsOf(userId);
    for (const id of ids)
      await this.remove(userId, id).catch((err: unknown) => this.o.log.warn({ err, task: id }, 'task not removed'));
    return ids.length;
  }

  /**
   * Puts a task in the queue for a new run (state 8). Refused while a run is queued, running or
   * stopping.
   */
  private async startRun(row: TaskRow, mode: 'full' | 'retry' | 'resync', jobId: string): Promise<void> {
    // A finished state is written by the previous run's worker as its last step (only the e-mail
    // follows), so a new run may start as soon as the task shows one.
    if (!(STARTABLE as readonly number[]).includes(row.state)) throw new ApiError(Code.CONFLICT, 'task_running');
    const ok = await this.o.repo.transition(
      row.id,
      [row.state],
      {
        state: TaskState.waiting,
        job_id: jobId,
        run_mode: mode,
        run_count: row.run_count + 1,
        needed_size: null,
        started_at: null,
        finished_at: null,
      },
      { jobId: row.job_id },
    );
    if (!ok) throw new ApiError(Code.CONFLICT, 'task_running');
    await this.o.progress.delete(row.id);
    await this.enqueueOrUndo(row.id, row.user_id, jobId, row.state);
  }

  private async enqueueOrUndo(taskId: string, userId: string, jobId: string, undoState: number): Promise<void> {
    try {
      await this.o.queue.enqueue({ taskId, userId }, { jobId, group: userId });
    } catch (err) {
      await this.o.repo.transition(taskId, [TaskState.waiting], { state: undoState }, { jobId });
      throw err;
    }
  }

  /** The scheduler's hand: a slot came due. A task still busy with an earlier run skips the slot. */
  async fireScheduled(task: ScheduledTask, slot: number): Promise<void> {
    const row = await this.o.repo.getById(task.id);
    if (!row) return;
    if (!(STARTABLE as readonly number[]).includes(row.state)) {
      this.o.log.info({ task: task.id, slot }, 'scheduled run skipped: the task is still busy');
      return;
    }
    try {
      await this.startRun(row, 'full', `t-${task.id}-s${slot}`);
      this.o.log.info({ task: task.id, slot }, 'scheduled run queued');
    } catch (err) {
      if (err instanceof ApiError && err.code === Code.CONFLICT) {
        this.o.log.info({ task: task.id, slot }, 'scheduled run skipped: the task is still busy');
        return;
      }
      throw err;
    }
  }

  /** The queue gave up on a job (its attempts ran out): the task fails, unless it moved on meanwhile. */
  async jobFailed(taskId: string, jobId: string, error: string): Promise<void> {
    const now = this.o.now();
    const result = {
      outcome: 'failed',
      success_count: 0,
      total_count: 0,
      total_size: 0,
      time_taken: 0,
      added: 0,
      updated: 0,
      deleted: 0,
      skipped: 0,
      failed: 0,
      error: { code: 'worker_failed', message: error },
    };
    await this.o.repo.transition(
      taskId,
      [...ACTIVE],
      { state: TaskState.failed, finished_at: now, result: JSON.stringify(result) },
      { jobId },
    );
    await this.o.progress.delete(taskId);
    this.o.log.warn({ task: taskId, job: jobId, error }, 'task job failed for good');
  }
}

/**
 * The 409005 prompt for a plan that deletes more than half of a side's files: the side that loses
 * them (a two-way sync may delete on either, the source too), how many, of how many.
 */
export function confirmDeletionsError(plan: Pick<TransferPlan, 'deletes'>): ApiError {
  const { target, source } = plan.deletes.sides;
  const onTarget = target.files * 2 > target.of || source.files === 0;
  const side = onTarget ? target : source;
  const params = { count: side.files, total: Math.max(side.of, side.files) };
  const data: DeletionsPromptData = { ...params, side: onTarget ? 'target' : 'source' };
  return new ApiError(
    Code.CONFIRM_DELETIONS,
    onTarget ? 'confirm_deletions' : 'confirm_deletions_source',
    params,
    data,
  );
}

/**
 * The target path is a folder, or is missing below a folder (the run creates it); a file there, or
 * on the way there, is refused.
 */
async function checkTarget(target: Provider, path: string): Promise<void> {
  for (let p = path; p !== '/'; p = parentOf(p)) {
    let entry;
    try {
      entry = await target.stat(p);
    } catch (err) {
      if (ProviderError.is(err, 'not_found')) continue;
      if (ProviderError.is(err, 'not_dir')) throw errors.badRequest('target_not_folder');
      throw err;
    }
    if (entry.kind !== 'dir') throw errors.badRequest('target_not_folder');
    return;
  }
}

/** A readable default name: "Photos → Backup", "Photos +2 → Backup", the cloud's name for a root. */
export function defaultTaskName(source: CloudRecord, paths: string[], target: CloudRecord, targetPath: string): string {
  const first = paths[0] ?? '/';
  const from = first === '/' ? shortCloudLabel(source) : baseName(first);
  const more = paths.length > 1 ? ` +${paths.length - 1}` : '';
  const to = targetPath === '/' ? shortCloudLabel(target) : baseName(targetPath);
  return `${from}${more} → ${to}`.slice(0, 255);
}

/** A plan as a dry run shows it: totals and a page of items (default the first 1000 of all actions). */
export function planView(plan: TransferPlan, query: PlanQuery = {}, timesKept: TaskPlan['times_kept']): TaskPlan {
  const page = planPage(plan, {
    actions: query.actions,
    offset: query.offset ?? 0,
    limit: Math.min(query.limit ?? MAX_PLAN_ITEMS, MAX_PLAN_ITEMS),
  });
  return {
    summary: plan.summary,
    bytes_to_target: plan.bytesTo.target,
    bytes_to_source: plan.bytesTo.source,
    files_to_transfer: plan.filesToTransfer,
    files_matched: plan.deletes.sides.source.of,
    deletes: {
      count: plan.deletes.count,
      files: plan.deletes.files,
      needs_confirmation: plan.deletes.needsConfirmation,
    },
    items: page.items.map((item) => {
      const p = itemPaths(plan, item);
      return {
        action: item.action,
        kind: item.kind,
        side: item.side,
        source_path: p.source,
        target_path: p.target,
        reason: item.reason,
        size: item.size,
        ...(item.link ? { link: item.link } : {}),
      };
    }),
    total_items: page.total,
    errors: plan.errors.map((e) => ({ side: e.side, path: e.path, message: e.message })),
    times_kept: timesKept,
  };
}

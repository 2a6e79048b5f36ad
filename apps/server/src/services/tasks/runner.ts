import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Code,
  MAX_SET_ASIDE_ITEMS,
  TaskState,
  hasGoogleDocs,
  message as catalogueMessage,
  type ConflictResolution,
  type FileFilter,
  type SameNamePolicy,
  type TaskOutcome,
  type TaskProgress,
  type TaskResult,
} from '@skyferry/contract';
import {
  copiedFiles,
  deleteMoved,
  emptyResultSummary,
  executePlan,
  planRetry,
  planTransfer,
  streamable,
  streamTransfer,
  taskStateOf,
  type FailedItem,
  type ItemEvent,
  type PlanItem,
  type ScanProgress,
  type Moved,
  type TrafficHook,
  type TransferMode,
  type TransferPlan,
  type TransferProgress,
  type TransferResult,
} from '@skyferry/engine';
import { googleDocsLeftOut, setGoogleDocsMode } from '@skyferry/providers';
import { abortReasonOf, JobAbortedError, type RunningJob } from '@skyferry/queue';
import type { Database, Kysely } from '@skyferry/db';
import type { Logger } from 'pino';
import { ApiError } from '../../http/errors.ts';
import type { ProgressSnapshot, ProgressStore } from '../../repositories/task-progress.ts';
import { SyncPairLocksRepository } from '../../repositories/sync-pair-locks.ts';
import { TaskCheckpointStore, TaskTwoWayStateStore } from '../../repositories/task-run-state.ts';
import type { FailedFileRow, TaskRow, TasksRepository } from '../../repositories/tasks.ts';
import type { CloudsService } from '../clouds.ts';
import type { TaskMetrics } from '../metrics.ts';
import { transferFinishedEmail, type Mailer } from '../mail/index.ts';
import type { UsersService } from '../users.ts';
import type { TaskJob } from './tasks-service.ts';
import { markRefusedExpired } from './expired.ts';
import type { RunRecorder, RunsService } from './runs.ts';
import { cloudLabel, conflictSideNames, parseSource, parseTarget } from './views.ts';

export interface TaskRunnerOptions {
  repo: TasksRepository;
  /** The database, for the run's checkpoints and two-way state. */
  db: Kysely<Database>;
  progress: ProgressStore;
  clouds: CloudsService;
  users: UsersService;
  mailer: Mailer;
  billingMode: 'off' | 'test' | 'stripe';
  /** Where the e-mail sends the user. */
  appUrl: string;
  log: Logger;
  /** Files in parallel within one run (engine default 8). */
  transfers?: number;
  /** How often live progress is written while a task runs (default 1 s; at most that long between writes). */
  progressEveryMs?: number;
  /**
   * How long a sync's hold on its pair of folders lasts without renewal (default 30 s, renewed
   * every third of it): a run whose worker died frees the pair after it.
   */
  pairLockMs?: number;
  /** How often a sync waiting for its pair looks again (default 1 s). */
  pairWaitMs?: number;
  /** The run history: each run and the files it handled (services/tasks/runs.ts). */
  runs?: RunsService;
  /** Prometheus figures of runs, files, bytes and errors (services/metrics.ts). */
  metrics?: TaskMetrics;
}

type OpenedCloud = Awaited<ReturnType<CloudsService['open']>>;

/** What a run did: its plan (none when it could not plan) and result, and the Google Docs it left out. */
interface RunOutcome {
  plan: TransferPlan | undefined;
  result: TransferResult;
  /** Google Workspace items the source's listings left out (skipped by the task's choice, or not exportable). */
  docsLeftOut?: number;
  /** A move: what its second half deleted and kept. */
  moved?: Moved;
}

const ZERO: TaskProgress = { percentage: 0, speed: 0, transferred: 0, length: 0, eta: null };

/** The spec's e-mail outcomes: a run stopped for space, traffic or a needed confirmation failed. */
function mailOutcome(state: number): TaskOutcome {
  if (state === TaskState.completed) return 'success';
  if (state === TaskState.partial) return 'partial';
  if (state === TaskState.canceled) return 'canceled';
  return 'failed';
}

/**
 * Why a run stopped, as the task's result shows it. A used-up transaction cap (Backblaze B2's) gets
 * the catalogue's words for 6007001 (spec section 8) rather than the service's raw error.
 */
function runError(error: { code: string; message: string }): { code: string; message: string } {
  if (error.code === 'transaction_cap') return { code: error.code, message: catalogueMessage('en', 'transaction_cap') };
  return { code: error.code, message: error.message };
}

/** A run that could not start (clouds unavailable, licence gone, planning failed). */
function failedResult(startedAt: number, code: string, message: string): TransferResult {
  const now = Date.now();
  return {
    outcome: 'failed',
    successCount: 0,
    totalCount: 0,
    totalSize: 0,
    transferredBytes: 0,
    timeTakenMs: now - startedAt,
    startedAt,
    finishedAt: now,
    source: { kind: '', paths: [] },
    target: { kind: '', path: '' },
    failed: [],
    summary: emptyResultSummary(),
    error: { code, message },
  };
}

/**
 * The job handler of a task run: opens both clouds for the task's owner, plans (the whole task, or
 * only its failed part), executes with checkpoints and two-way state in the database, writes live
 * progress about once a second, maps the outcome to the task state, and sends the e-mail when the
 * user asked for it. A run interrupted by a shutdown or a lost lease writes nothing final: the
 * queue gives the job to another worker, which resumes from the checkpoints.
 */
export class TaskRunner {
  private readonly o: TaskRunnerOptions;
  /** The history record of each run going on in this process, by job id. */
  private readonly recordings = new Map<string, RunRecorder>();

  constructor(options: TaskRunnerOptions) {
    this.o = options;
  }

  readonly handle = async (job: RunningJob<TaskJob>): Promise<void> => {
    const { repo, log } = this.o;
    const taskId = job.data.taskId;
    const row = await repo.getById(taskId);
    if (!row || row.job_id !== job.id) return; // deleted, or a newer run replaced this one
    if (row.state === TaskState.waitingNoCancel || row.state === TaskState.canceled) {
      await repo.transition(taskId, [TaskState.waitingNoCancel], { state: TaskState.canceled }, { jobId: job.id });
      return;
    }
    // An attempt resuming the run (the one before it was cut off while scanning or running, the
    // task still says so) keeps its start and goes on from the progress that one showed.
    const resuming = row.state === TaskState.scanning || row.state === TaskState.running;
    const startedAt = (job.attempt > 1 || resuming) && row.started_at !== null ? row.started_at : Date.now();
    const began = await repo.transition(
      taskId,
      [TaskState.waiting, TaskState.scanning, TaskState.running],
      { state: TaskState.scanning, started_at: startedAt, finished_at: null },
      { jobId: job.id },
    );
    if (!began) return;
    log.info({ task: taskId, job: job.id, attempt: job.attempt }, 'task run started');
    const attemptStarted = Date.now();
    // The queue wait of a first start: the task became waiting when it was last updated.
    this.o.metrics?.runStarted(
      job.attempt === 1 && row.state === TaskState.waiting ? attemptStarted - row.updated_at : undefined,
    );
    const recorder = await this.o.runs?.begin(row, job.id, job.attempt).catch((err: unknown) => {
      log.warn({ err, task: taskId }, 'run history not recorded');
      return undefined;
    });
    if (recorder) this.recordings.set(job.id, recorder);

    const live = new LiveProgress(this.o.progress, taskId, this.o.progressEveryMs ?? 1000, log);
    const shown = resuming ? await this.o.progress.get(taskId) : undefined;
    if (shown) live.resumeFrom(shown);
    else live.set(TaskState.scanning, ZERO, 0, 0);
    let result: TransferResult;
    let plan: TransferPlan | undefined;
    let docsLeftOut = 0;
    let moved: Moved | undefined;
    const charged = { bytes: 0 };
    try {
      const outcome = await this.run(row, job, startedAt, live, charged);
      ({ plan, result, moved } = outcome);
      docsLeftOut = outcome.docsLeftOut ?? 0;
    } catch (err) {
      result = failedResult(startedAt, 'internal', err instanceof Error ? err.message : String(err));
      log.error({ err, task: taskId }, 'task run crashed');
    } finally {
      await live.stop();
    }
    const reason = abortReasonOf(job.signal);
    if (reason && reason !== 'canceled') {
      // Shutdown, lost lease or crash: another worker takes over from the checkpoints.
      log.info({ task: taskId, job: job.id, reason }, 'task run interrupted');
      this.o.metrics?.runInterrupted(reason);
      await recorder?.interrupted();
      this.recordings.delete(job.id);
      throw new JobAbortedError(reason);
    }
    try {
      await this.finish(row, job.id ?? '', result, plan, charged.bytes, docsLeftOut, moved);
    } finally {
      this.recordings.delete(job.id);
      this.o.metrics?.runFinished(result.outcome, Date.now() - attemptStarted);
      // An error that stopped the whole run (the files' own errors are counted as they happen).
      if (result.error && result.outcome !== 'success') this.o.metrics?.error('run', result.error.code);
    }
  };

  private async run(
    row: TaskRow,
    job: RunningJob<TaskJob>,
    startedAt: number,
    live: LiveProgress,
    charged: { bytes: number },
  ): Promise<RunOutcome> {
    const { users, clouds, billingMode } = this.o;
    const userId = row.user_id;
    if (billingMode !== 'off' && !(await users.isPremium(userId))) {
      return {
        plan: undefined,
        result: failedResult(startedAt, 'license_expired', 'Your current license has expired.'),
      };
    }
    const from = parseSource(row);
    const to = parseTarget(row);
    let source: OpenedCloud;
    let target: OpenedCloud;
    try {
      source = await clouds.open({ kind: 'user', userId }, from.cloud_id);
      target = from.cloud_id === to.cloud_id ? source : await clouds.open({ kind: 'user', userId }, to.cloud_id);
      if (hasGoogleDocs(source.cloud.kind))
        setGoogleDocsMode(source.provider, row.google_docs === 'skip' ? 'skip' : 'export');
    } catch (err) {
      const code = !(err instanceof ApiError)
        ? 'unavailable'
        : err.key === 'cloud_auth_expired'
          ? 'auth_expired'
          : err.code === Code.LOCAL_FOLDER_FORBIDDEN
            ? 'permission'
            : 'not_found';
      const message = err instanceof ApiError ? err.key : err instanceof Error ? err.message : String(err);
      return { plan: undefined, result: failedResult(startedAt, code, message) };
    }
    try {
      const outcome = await this.transfer(row, job, startedAt, live, charged, from, to, source, target);
      await this.expireRefused(outcome.result, source, target);
      return { ...outcome, docsLeftOut: googleDocsLeftOut(source.provider) };
    } finally {
      await source.provider.close?.().catch(() => undefined);
      if (target !== source) await target.provider.close?.().catch(() => undefined);
    }
  }

  /** A run stopped by a refused authorisation (a revoked grant) marks the cloud that refused expired. */
  private async expireRefused(result: TransferResult, source: OpenedCloud, target: OpenedCloud): Promise<void> {
    if (result.error?.code === 'auth_expired' || result.error?.code === 'auth_invalid')
      await markRefusedExpired(this.o.clouds, [source, target]);
  }

  private async transfer(
    row: TaskRow,
    job: RunningJob<TaskJob>,
    startedAt: number,
    live: LiveProgress,
    charged: { bytes: number },
    from: ReturnType<typeof parseSource>,
    to: ReturnType<typeof parseTarget>,
    source: OpenedCloud,
    target: OpenedCloud,
  ): Promise<{ plan: TransferPlan | undefined; result: TransferResult; moved?: Moved }> {
    const mode: TransferMode = (row.sync_mode as TransferMode | null) ?? 'migrate';
    const options = {
      mode,
      sourcePaths: from.paths,
      targetPath: to.path,
      sameNamePolicy: row.same_name_policy as SameNamePolicy,
      filter: row.filter ? (JSON.parse(row.filter) as FileFilter) : null,
      conflictResolution: row.conflict_resolution as ConflictResolution,
      followLinks: row.follow_links === 1,
    };
    // One sync of a pair of folders at a time, across every worker: a second one waits its turn.
    const pair = mode === 'migrate' ? undefined : await this.holdPair(row, job, from, to);
    if (pair === null) {
      const result = failedResult(startedAt, 'canceled', 'canceled while waiting for another sync of this pair');
      result.outcome = 'canceled';
      return { plan: undefined, result };
    }
    try {
      return await this.transferHeld(row, job, startedAt, live, charged, options, source, target, from, to);
    } finally {
      await pair?.release();
    }
  }

  /**
   * Waits until this sync holds its pair of folders (source and target, in either order), then
   * keeps the hold renewed until released. Null when the job was stopped while it waited.
   */
  private async holdPair(
    row: TaskRow,
    job: RunningJob<TaskJob>,
    from: ReturnType<typeof parseSource>,
    to: ReturnType<typeof parseTarget>,
  ): Promise<{ release: () => Promise<void> } | null> {
    const locks = new SyncPairLocksRepository(this.o.db);
    const ttl = this.o.pairLockMs ?? 30_000;
    const sides = [`${from.cloud_id}:${from.paths[0] ?? '/'}`, `${to.cloud_id}:${to.path}`].sort();
    const key = createHash('sha256').update(JSON.stringify(sides)).digest('hex');
    const owner = `${job.id}:${randomUUID()}`;
    let told = false;
    for (;;) {
      const got = await locks.acquire(key, owner, row.id, ttl);
      if (got.taken) break;
      if (!told) {
        told = true;
        this.o.log.info({ task: row.id, holder: got.taskId }, 'waiting for another sync of the same folders');
      }
      try {
        await sleep(this.o.pairWaitMs ?? 1000, undefined, { signal: job.signal });
      } catch {
        return null;
      }
    }
    const timer = setInterval(() => {
      locks.renew(key, owner, ttl).then(
        (held) => {
          if (!held) this.o.log.warn({ task: row.id }, 'the hold on the pair of folders was lost');
        },
        (err: unknown) => this.o.log.warn({ err, task: row.id }, 'the hold on the pair of folders not renewed'),
      );
    }, ttl / 3);
    timer.unref();
    return {
      release: async () => {
        clearInterval(timer);
        await locks
          .release(key, owner)
          .catch((err: unknown) =>
            this.o.log.warn({ err, task: row.id }, 'the hold on the pair of folders not released'),
          );
      },
    };
  }

  /** A run's planning and execution, with the pair held where it is a sync. */
  private async transferHeld(
    row: TaskRow,
    job: RunningJob<TaskJob>,
    startedAt: number,
    live: LiveProgress,
    charged: { bytes: number },
    options: {
      mode: TransferMode;
      sourcePaths: string[];
      targetPath: string;
      sameNamePolicy: SameNamePolicy;
      filter: FileFilter | null;
      conflictResolution: ConflictResolution;
      followLinks: boolean;
    },
    source: OpenedCloud,
    target: OpenedCloud,
    from: ReturnType<typeof parseSource>,
    to: ReturnType<typeof parseTarget>,
  ): Promise<{ plan: TransferPlan | undefined; result: TransferResult; moved?: Moved }> {
    const { users, billingMode } = this.o;
    const userId = row.user_id;
    const db = this.o.db;
    // A move's deletions need the path each written file was read from; other runs keep rows smaller.
    const checkpoints = new TaskCheckpointStore(db, row.id, job.id, {
      keepReadPaths: from.move === true && options.mode === 'migrate',
    });
    const twoWayState = new TaskTwoWayStateStore(db, row.id);
    const sideNames = conflictSideNames(source.cloud, target.cloud);
    const recorder = this.recordings.get(job.id);
    const planReq = {
      source: source.provider,
      target: target.provider,
      ...options,
      twoWayState,
      // Asked for this run (GET /api/tasks/run/{id}?resync=1): a merge, past a side missing or emptied.
      resync: row.run_mode === 'resync',
      signal: job.signal,
      sideNames,
    };
    let traffic: TrafficHook | undefined;
    if (billingMode !== 'off') {
      let remaining = await users.remainingTraffic(userId);
      // Files in flight together each hold their size from their start, so that they cannot
      // overdraw the allowance between them; a file that fails gives its hold back.
      const held = new Map<string, number>();
      const release = (path: string) => {
        remaining += held.get(path) ?? 0;
        held.delete(path);
      };
      traffic = {
        beforeRun: (bytes) => bytes <= remaining,
        beforeBytes: (bytes, info) => {
          if (bytes > remaining) return false;
          remaining -= bytes;
          held.set(info.path, (held.get(info.path) ?? 0) + bytes);
          return true;
        },
        released: (info) => release(info.path),
        afterBytes: async (bytes, info) => {
          release(info.path);
          remaining -= bytes;
          // Keyed by the run and the file: a resumed attempt that copies the file again is not charged twice.
          const charge = await users.chargeTraffic(userId, bytes, `${row.id}:${job.id}:${info.path}`);
          charged.bytes += charge.charged;
          if (charge.shortfall > 0) remaining = 0;
        },
      };
    }
    /** The task runs from here: its totals as far as they are known (a streamed run counts as it goes). */
    const running = async (p: TransferPlan, counting: boolean) => {
      const total = counting ? 0 : p.bytesTo.target + p.bytesTo.source;
      const count = counting ? 0 : p.filesToTransfer + p.deletes.count;
      await this.o.repo.transition(
        row.id,
        [TaskState.scanning],
        { state: TaskState.running, size: total, total_counts: count },
        { jobId: row.job_id },
      );
      live.set(TaskState.running, { ...ZERO, length: total }, count, 0, counting);
    };
    // The plan the items belong to (the streamed run's is known once its roots are).
    let plan: TransferPlan | undefined;
    // A move trusts by size only what this run (or an interrupted attempt of it) wrote and checked;
    // it keeps that record past the copy, until its deletions are done.
    let moving: ReturnType<typeof copiedFiles> | undefined;
    const execution = () => ({
      source: source.provider,
      target: target.provider,
      signal: job.signal,
      checkpoints: moving ? checkpoints.keepingRecords() : checkpoints,
      twoWayState,
      confirmDeletes: row.confirm_deletes === 1,
      traffic,
      tokenIds: { source: from.cloud_id, target: to.cloud_id },
      progressIntervalMs: Math.min(500, this.o.progressEveryMs ?? 1000),
      // A move records what it copied; the run's record keeps every item; metrics count it.
      onItem: (e: ItemEvent) => {
        moving?.onItem(e);
        if (plan) recorder?.item(plan, e);
        this.o.metrics?.item(e.type, e.bytes);
        // Skips and names left alone carry their reason too; only failures are errors.
        if (e.type === 'failed' && e.error)
          this.o.metrics?.error((e.item.side === 'source' ? source : target).cloud.kind, e.error.code);
      },
      ...(this.o.transfers ? { transfers: this.o.transfers } : {}),
      onProgress: (p: TransferProgress) =>
        live.set(
          TaskState.running,
          { percentage: p.percentage, speed: p.speed, transferred: p.transferred, length: p.length, eta: p.eta },
          p.totalCounts,
          p.finishedCounts,
          p.counting === true,
        ),
    });
    const planFailed = (err: unknown) => {
      // A two-way side found missing or emptied is named as such: the client offers a resync.
      const e = err as { code?: string; serviceCode?: string };
      const code =
        e.serviceCode === 'side_missing' || e.serviceCode === 'side_emptied' ? e.serviceCode : (e.code ?? 'unknown');
      const message = err instanceof Error ? err.message : String(err);
      const result = failedResult(startedAt, code, message);
      if (job.signal.aborted) result.outcome = 'canceled';
      return { plan: undefined, result };
    };
    const isMove = from.move === true && options.mode === 'migrate';
    let executed: TransferResult;
    if (row.run_mode === 'retry' || isMove) {
      // A retry plans only the failed part; a move's deletions judge the whole plan.
      try {
        if (row.run_mode === 'retry') {
          const failed = (await this.o.repo.failedFiles(row.id)).map((f) => JSON.parse(f.item) as FailedItem);
          plan = await planRetry({ ...planReq, failed, options });
        } else {
          plan = await planTransfer({
            ...planReq,
            keepSkipped: recorder !== undefined,
            onScan: (scan) => live.set(TaskState.scanning, ZERO, scan.files + scan.folders, 0),
          });
        }
      } catch (err) {
        return planFailed(err);
      }
      recorder?.planned(plan);
      await running(plan, false);
      moving = isMove ? copiedFiles(plan, await checkpoints.all()) : undefined;
      executed = await executePlan(plan, execution());
    } else {
      // Copies and one-way syncs plan and copy folder by folder, in bounded memory, their totals
      // growing while the walk goes; mirror and two-way runs plan the whole tree first (the engine decides).
      const streamed = streamable(planReq);
      const run = await streamTransfer({
        ...planReq,
        ...execution(),
        // A whole plan drops its skips once the run's record has listed them; a streamed one never keeps them.
        keepSkipped: recorder !== undefined,
        ...(streamed
          ? { onSkipped: (it: PlanItem) => plan && recorder?.skipped(plan, it) }
          : { onScan: (scan: ScanProgress) => live.set(TaskState.scanning, ZERO, scan.files + scan.folders, 0) }),
        beforeWrites: async (p) => {
          plan = p;
          if (!streamed) recorder?.planned(p);
          await running(p, streamed);
        },
      });
      if (!run.plan) return planFailed(run.planError);
      plan = run.plan;
      // The links a streamed walk left alone are known at its end.
      if (streamed) recorder?.planned(plan);
      executed = run.result;
    }
    // The engine counts what interrupted attempts of this run did (its checkpoints): the figures
    // are the whole run's. "Partially successful" needs a success: a run whose only items failed
    // (a source folder that is gone, say) failed.
    let result: TransferResult = executed;
    if (result.outcome === 'partial' && result.successCount === 0 && result.summary.failed > 0) {
      result = { ...result, outcome: 'failed' };
    }
    // Usage: what this attempt moved (or was charged for) and what the attempts before it moved.
    charged.bytes = (billingMode === 'off' ? result.transferredBytes : charged.bytes) + (result.resumedBytes ?? 0);
    // A move deletes from the source only after a copy that ran to its end (some files may have failed).
    if (!moving || (result.outcome !== 'success' && result.outcome !== 'partial')) return { plan, result };
    let moved: Moved;
    try {
      moved = await deleteMoved({
        source: source.provider,
        target: target.provider,
        plan,
        copied: moving.copied,
        filter: options.filter,
        download: false,
        removeEmptyFolders: true,
        signal: job.signal,
      });
    } catch (err) {
      // Stopped while comparing and deleting: the copy stands, the rest of the sources stay.
      const e = err as { code?: string; message?: string };
      const stopped = job.signal.aborted;
      return {
        plan,
        result: {
          ...result,
          outcome: stopped ? 'canceled' : 'partial',
          error: { code: e.code ?? 'unknown', message: e.message ?? String(err) },
        },
      };
    }
    await checkpoints.clear();
    if (result.outcome === 'success' && (moved.kept.length > 0 || moved.failed.length > 0))
      result = { ...result, outcome: 'partial' };
    return { plan, result, moved };
  }

  /** Writes the run's outcome (unless the task moved on) and sends the e-mail. */
  private async finish(
    row: TaskRow,
    jobId: string,
    result: TransferResult,
    plan: TransferPlan | undefined,
    usage: number,
    docsLeftOut = 0,
    moved?: Moved,
  ): Promise<void> {
    const { repo, log } = this.o;
    const finishedAt = Date.now();
    const startedAt = (await repo.getById(row.id))?.started_at ?? result.startedAt;
    const state = result.outcome === 'canceled' ? TaskState.canceled : taskStateOf(result.outcome);
    const view: TaskResult = {
      outcome: result.outcome,
      success_count: result.successCount,
      total_count: result.totalCount,
      total_size: result.totalSize,
      time_taken: finishedAt - startedAt,
      added: result.summary.added,
      updated: result.summary.updated,
      deleted: result.summary.deleted,
      // Google Docs the source left out count as skipped (the plan never saw them).
      skipped: result.summary.skipped + docsLeftOut,
      failed: result.summary.failed,
      conflicts: result.summary.conflicts,
      not_done: result.summary.notDone,
      error: result.error ? runError(result.error) : null,
    };
    if (moved) {
      view.moved = {
        deleted: moved.deleted,
        kept: moved.kept.length,
        failed: moved.failed.length,
        folders_removed: moved.foldersRemoved,
        kept_items: [...moved.kept, ...moved.failed].slice(0, MAX_SET_ASIDE_ITEMS),
      };
    }
    if (result.setAside && result.setAside.length > 0) {
      view.set_aside = result.setAside
        .slice(0, MAX_SET_ASIDE_ITEMS)
        .map((s) => ({ side: s.side, path: s.path, reason: s.reason, detail: s.detail }));
    }
    const patch = {
      finished_at: finishedAt,
      duration: finishedAt - startedAt,
      size: result.totalSize,
      usage,
      total_counts: result.totalCount,
      finished_counts: result.successCount,
      needed_size: result.neededBytes ?? null,
      result: JSON.stringify(view),
      // A confirmation to delete was given for this run (as its plan stood), not for later ones.
      confirm_deletes: 0,
    };
    const failedRows: FailedFileRow[] = result.failed.map((f) => ({
      name: f.sourceFile.name,
      parent: f.sourceFile.parent,
      token_id: f.sourceTokenId ?? null,
      reason: f.reason,
      message: f.message,
      item: JSON.stringify(f),
    }));
    // Failed files, the run's history and progress first: the final state is the last thing
    // written, and a new run (a retry reads the failed files) may start as soon as it is.
    const recorder = this.recordings.get(jobId);
    const recorded = () =>
      recorder
        ?.finish(result, view, finishedAt)
        .catch((err: unknown) => log.warn({ err, task: row.id }, 'run history not recorded'));
    if ((await repo.getById(row.id))?.job_id !== jobId) {
      await recorded();
      return; // deleted meanwhile
    }
    await repo.replaceFailedFiles(row.id, failedRows);
    await recorded();
    await this.o.progress.delete(row.id);
    let finalState: number = state;
    let written = await repo.transition(
      row.id,
      [TaskState.scanning, TaskState.running],
      { ...patch, state },
      { jobId },
    );
    if (!written) {
      // The user canceled while the run was finishing: the run counts as canceled.
      finalState = TaskState.canceled;
      written = await repo.transition(
        row.id,
        [TaskState.waitingNoCancel],
        { ...patch, state: TaskState.canceled },
        { jobId },
      );
    }
    if (!written) return;
    log.info({ task: row.id, job: jobId, state: finalState, outcome: result.outcome }, 'task run finished');
    await this.mail(row, finalState, view, startedAt, finishedAt, result.transferredBytes, recorder).catch(
      (err: unknown) => log.warn({ err, task: row.id }, 'transfer e-mail not sent'),
    );
  }

  private async mail(
    row: TaskRow,
    state: number,
    view: TaskResult,
    startedAt: number,
    endedAt: number,
    bytesMoved: number,
    run?: RunRecorder,
  ): Promise<void> {
    const user = await this.o.users.get(row.user_id);
    if (!user || !user.remindMe || !user.notifyEmail) return;
    const owned = await this.o.clouds.listOwned({ kind: 'user', userId: row.user_id });
    const byId = new Map(owned.map((c) => [c.id, c]));
    const from = parseSource(row);
    const to = parseTarget(row);
    const content = transferFinishedEmail(
      {
        taskName: row.task_name,
        taskType: row.task_type,
        outcome: mailOutcome(state),
        startedAt,
        endedAt,
        from: { cloud: cloudLabel(byId.get(from.cloud_id)), paths: from.paths },
        to: { cloud: cloudLabel(byId.get(to.cloud_id)), path: to.path },
        added: view.added,
        updated: view.updated,
        deleted: view.deleted,
        failed: view.failed,
        bytesMoved,
        conflicts: view.conflicts,
        notDone: view.not_done,
        conflictNames: run?.conflicts ?? [],
        deletedNames: run?.deletions ?? [],
        runUrl: run
          ? `${this.o.appUrl}/tasks/${encodeURIComponent(row.id)}/runs/${encodeURIComponent(run.runId)}`
          : undefined,
      },
      { language: user.language, timeZone: row.time_zone, appUrl: this.o.appUrl },
    );
    const sent = await this.o.mailer.send({ to: user.notifyEmail, ...content });
    this.o.log.info(
      { task: row.id, delivered: sent.deliveredTo === 'smtp' ? 'smtp' : 'outbox' },
      'transfer e-mail sent',
    );
  }
}

/**
 * The latest progress of a run, written to the progress store at most every `everyMs` and at
 * least that often while the run goes (so pollers see it move even when nothing changed). The
 * percentage, the bytes moved and the files finished never go back within a run, across its
 * attempts too.
 */
class LiveProgress {
  private latest: ProgressSnapshot | undefined;
  private readonly timer: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private readonly store: ProgressStore;
  private readonly taskId: string;
  private readonly log: Logger;

  constructor(store: ProgressStore, taskId: string, everyMs: number, log: Logger) {
    this.store = store;
    this.taskId = taskId;
    this.log = log;
    this.timer = setInterval(() => this.flush(), everyMs);
    this.timer.unref();
  }

  /** The most shown so far. */
  private readonly most = { percentage: 0, transferred: 0, finished: 0 };
  /** An attempt resuming the run lists again: what the one before it showed stays meanwhile. */
  private holding = false;

  /** Goes on from what an earlier attempt of the run showed (its figures stay until this one's pass them). */
  resumeFrom(shown: ProgressSnapshot): void {
    this.most.percentage = shown.progress.percentage;
    this.most.transferred = shown.progress.transferred;
    this.most.finished = shown.finishedCounts;
    this.latest = { ...shown, updatedAt: Date.now() };
    this.holding = true;
  }

  /**
   * `counting`: the run still plans while it goes, its totals growing: the percentage holds until
   * they are whole (a share of what is counted so far would run ahead and then fall back).
   */
  set(state: number, progress: TaskProgress, totalCounts: number, finishedCounts: number, counting = false): void {
    if (this.holding && state === TaskState.scanning) return;
    // A streamed run is running as soon as its first folders are judged: a later scan figure is not shown.
    if (state === TaskState.scanning && this.latest?.state === TaskState.running) return;
    this.holding = false;
    const most = this.most;
    if (!counting) most.percentage = Math.max(most.percentage, progress.percentage);
    most.transferred = Math.max(most.transferred, progress.transferred);
    most.finished = Math.max(most.finished, finishedCounts);
    const first = this.latest === undefined || this.latest.state !== state;
    this.latest = {
      state,
      progress: {
        ...progress,
        percentage: most.percentage,
        transferred: most.transferred,
        ...(counting ? { eta: null, counting: true } : {}),
      },
      totalCounts: Math.max(totalCounts, most.finished),
      finishedCounts: most.finished,
      updatedAt: Date.now(),
    };
    if (first) this.flush();
  }

  private flush(): void {
    const snapshot = this.latest;
    if (!snapshot) return;
    this.writing = this.writing
      .then(() => this.store.set(this.taskId, { ...snapshot, updatedAt: Date.now() }))
      .catch((err: unknown) => this.log.warn({ err, task: this.taskId }, 'progress not written'));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.writing;
  }
}

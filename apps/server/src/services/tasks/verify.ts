import { randomUUID } from 'node:crypto';
import {
  Code,
  TaskType,
  hasGoogleDocs,
  type FileFilter,
  type RunFileCounts,
  type TaskRun,
  type VerifyFileOutcome,
} from '@skyferry/contract';
import { checkTrees, joinRel, type CheckDifference, type CheckResult } from '@skyferry/engine';
import { baseName, setGoogleDocsMode, toProviderError, type Provider } from '@skyferry/providers';
import { abortReasonOf, JobAbortedError, type JobQueue, type RunningJob } from '@skyferry/queue';
import type { Logger } from 'pino';
import { ApiError, errors } from '../../http/errors.ts';
import type { TaskRunsRepository } from '../../repositories/task-runs.ts';
import type { TaskRow, TasksRepository } from '../../repositories/tasks.ts';
import type { CloudsService } from '../clouds.ts';
import { NO_FIGURES, toTaskRun, type FileRows, type RunFigures, type RunsService } from './runs.ts';
import { parseSource, parseTarget } from './views.ts';

/** What a verification job carries through the queue. */
export interface VerifyJob {
  taskId: string;
  userId: string;
  runId: string;
}
export type VerifyQueue = JobQueue<VerifyJob>;

export interface VerifyServiceOptions {
  runs: RunsService;
  tasks: TasksRepository;
  queue: VerifyQueue;
  clouds: CloudsService;
  log: Logger;
  /** How often a verification's progress is written (default 1 s). */
  progressEveryMs?: number;
}

/** One pair of roots a verification compares: a migration has one per selected path, a sync one. */
interface VerifyPair {
  source: string;
  target: string;
}

const DIFFERENCE: Record<CheckDifference['kind'], VerifyFileOutcome> = {
  missing_on_target: 'missing_on_target',
  missing_on_source: 'missing_on_source',
  size: 'size_differs',
  content: 'content_differs',
};

/** Where a migration puts a selected path: under its own name in the target folder (the root's contents as they are). */
function migratedTo(targetPath: string, sourcePath: string): string {
  return sourcePath === '/' ? targetPath : joinRel(targetPath, `/${baseName(sourcePath)}`);
}

/** The pairs a task's runs write: what a verification compares, and whether extras on the target count. */
export function verifyPairs(row: TaskRow): { pairs: VerifyPair[]; oneWay: boolean } {
  const from = parseSource(row);
  const to = parseTarget(row);
  if (row.task_type === TaskType.migrate) {
    return { pairs: from.paths.map((p) => ({ source: p, target: migratedTo(to.path, p) })), oneWay: true };
  }
  const mode = row.sync_mode ?? 'one_way';
  return {
    pairs: [{ source: from.paths[0] ?? '/', target: to.path }],
    // One-way and incremental syncs leave the target's own files alone; mirror and two-way make both sides alike.
    oneWay: mode === 'one_way' || mode === 'incremental',
  };
}

/**
 * Verify: compares a task's source and target as `skyferry check` does (sizes, then a hash both
 * sides give; nothing is written), as a job on its own queue, on any process with workers. The
 * comparison is a run of kind `verify` in the task's history; each difference is one of its file
 * rows (missing on either side, of another size or content, or unreadable).
 */
export class VerifyService {
  private readonly o: VerifyServiceOptions;

  constructor(options: VerifyServiceOptions) {
    this.o = options;
  }

  get queue(): VerifyQueue {
    return this.o.queue;
  }

  private get repo(): TaskRunsRepository {
    return this.o.runs.repo;
  }

  private async task(userId: string, taskId: string): Promise<TaskRow> {
    const task = await this.o.tasks.get(userId, taskId);
    if (!task) throw errors.notFound('task_not_found');
    return task;
  }

  /** POST /api/tasks/{id}/verify: queues a verification (409006 while one of the task's runs). */
  async start(userId: string, taskId: string): Promise<TaskRun> {
    const task = await this.task(userId, taskId);
    const last = await this.repo.latest(taskId, 'verify');
    if (last && last.finished_at === null) {
      const job = last.job_id ? await this.o.queue.get(last.job_id) : undefined;
      if (job && (job.state === 'waiting' || job.state === 'delayed' || job.state === 'active')) {
        throw new ApiError(Code.CONFLICT, 'verify_running');
      }
      await this.repo.finish(last.id, { outcome: 'failed', finished_at: Date.now() });
    }
    const id = randomUUID();
    const jobId = `v-${id}`;
    await this.o.runs.open({ id, taskId, userId, jobId, kind: 'verify', trigger: 'manual', startedAt: Date.now() });
    try {
      await this.o.queue.enqueue({ taskId, userId, runId: id }, { jobId, group: userId, maxAttempts: 3 });
    } catch (err) {
      await this.repo.finish(id, { outcome: 'failed', finished_at: Date.now() });
      throw err;
    }
    this.o.log.info({ task: taskId, run: id }, 'verification queued');
    const row = await this.repo.getById(id);
    if (!row) throw errors.notFound('run_not_found');
    return toTaskRun(row, task, undefined, Date.now());
  }

  /** DELETE /api/tasks/{id}/verify: stops the task's verification; null when none runs. */
  async cancel(userId: string, taskId: string): Promise<TaskRun | null> {
    const task = await this.task(userId, taskId);
    const last = await this.repo.latest(taskId, 'verify');
    if (!last || last.finished_at !== null) return null;
    if (last.job_id) await this.o.queue.cancel(last.job_id);
    const job = last.job_id ? await this.o.queue.get(last.job_id) : undefined;
    // A job that never started (or is gone) ends here; a running one ends itself as canceled.
    if (!job || job.state !== 'active')
      await this.repo.finish(last.id, { outcome: 'canceled', finished_at: Date.now() });
    const row = await this.repo.getById(last.id);
    return row ? toTaskRun(row, task, undefined, Date.now()) : null;
  }

  /** The queue gave up on a verification job: its run failed. */
  async jobFailed(runId: string, error: string): Promise<void> {
    await this.repo.finish(runId, {
      outcome: 'failed',
      finished_at: Date.now(),
      error: JSON.stringify({ code: 'worker_failed', message: error }),
    });
  }

  readonly handle = async (job: RunningJob<VerifyJob>): Promise<void> => {
    const { runId, taskId, userId } = job.data;
    const run = await this.repo.getById(runId);
    if (!run || run.finished_at !== null) return;
    const task = await this.o.tasks.getById(taskId);
    if (!task) {
      await this.repo.finish(runId, { outcome: 'canceled', finished_at: Date.now() });
      return;
    }
    // A verification started again (its worker stopped) compares from the start.
    await this.repo.deleteRunFiles(runId);
    const rows = this.o.runs.fileRows(runId);
    const figures: RunFigures = { ...NO_FIGURES };
    let lastWrite = 0;
    const every = this.o.progressEveryMs ?? 1000;
    let outcome: 'same' | 'differs' | 'partial' | 'failed' | 'canceled';
    let error: { code: string; message: string } | null = null;
    const found: RunFileCounts = {};
    const count = (k: VerifyFileOutcome) => (found[k] = (found[k] ?? 0) + 1);
    let source: Provider | undefined;
    let target: Provider | undefined;
    try {
      const from = parseSource(task);
      const to = parseTarget(task);
      const identity = { kind: 'user' as const, userId };
      const s = await this.o.clouds.open(identity, from.cloud_id);
      source = s.provider;
      if (hasGoogleDocs(s.cloud.kind)) setGoogleDocsMode(source, task.google_docs === 'skip' ? 'skip' : 'export');
      target = from.cloud_id === to.cloud_id ? source : (await this.o.clouds.open(identity, to.cloud_id)).provider;
      const { pairs, oneWay } = verifyPairs(task);
      const filter = task.filter ? (JSON.parse(task.filter) as FileFilter) : null;
      let base = { ...figures };
      for (const pair of pairs) {
        const sourceIsFile = await source
          .stat(pair.source, { signal: job.signal })
          .then((e) => e.kind === 'file')
          .catch(() => false);
        const result: CheckResult = await checkTrees({
          source,
          sourcePath: pair.source,
          target,
          targetPath: pair.target,
          filter,
          oneWay,
          signal: job.signal,
          onProgress: (p) => {
            figures.compared = base.compared + p.compared;
            if (Date.now() - lastWrite >= every) {
              lastWrite = Date.now();
              void this.repo
                .update(runId, { figures: JSON.stringify(figures) })
                .catch((err: unknown) => this.o.log.warn({ err, run: runId }, 'verification progress not written'));
            }
          },
        });
        this.record(rows, pair, sourceIsFile, result, count);
        figures.compared = base.compared + result.compared;
        figures.same_by_hash += result.sameByHash;
        figures.same_by_content += result.sameByContent;
        figures.size_only += result.sizeOnly;
        base = { ...figures };
      }
      const differences = Object.entries(found)
        .filter(([k]) => k !== 'unreadable')
        .reduce((s, [, n]) => s + (n ?? 0), 0);
      outcome = differences > 0 ? 'differs' : (found.unreadable ?? 0) > 0 ? 'partial' : 'same';
    } catch (err) {
      const reason = abortReasonOf(job.signal);
      if (reason && reason !== 'canceled') {
        await rows.close();
        throw new JobAbortedError(reason);
      }
      if (reason === 'canceled') outcome = 'canceled';
      else {
        outcome = 'failed';
        const e = err instanceof ApiError ? { code: err.key, message: err.key } : toProviderError(err);
        error = { code: e.code === undefined ? 'unknown' : String(e.code), message: e.message };
      }
    } finally {
      await source?.close?.().catch(() => undefined);
      if (target && target !== source) await target.close?.().catch(() => undefined);
    }
    await rows.close();
    const ended = await this.repo.finish(runId, {
      outcome,
      finished_at: Date.now(),
      counts: JSON.stringify(found),
      listed: JSON.stringify(rows.listed),
      figures: JSON.stringify(figures),
      error: error ? JSON.stringify(error) : null,
    });
    // The task (and its history) was deleted meanwhile: the rows written since go too.
    if (!ended) await this.repo.deleteRunFiles(runId);
    this.o.log.info({ task: taskId, run: runId, outcome }, 'verification finished');
  };

  /** The differences and unreadable places of one pair as file rows, with absolute paths. */
  private record(
    rows: FileRows,
    pair: VerifyPair,
    sourceIsFile: boolean,
    result: CheckResult,
    count: (k: VerifyFileOutcome) => void,
  ): void {
    const onSource = (rel: string) => (sourceIsFile ? pair.source : joinRel(pair.source, rel));
    const onTarget = (rel: string) => (sourceIsFile ? pair.target : joinRel(pair.target, rel));
    for (const d of result.differences) {
      const outcome = DIFFERENCE[d.kind];
      count(outcome);
      const missingOnSource = d.kind === 'missing_on_source';
      rows.add({
        outcome,
        kind: 'file',
        side: missingOnSource ? 'target' : 'source',
        path: missingOnSource ? onTarget(d.path) : onSource(d.path),
        other_path: d.kind === 'size' || d.kind === 'content' ? onTarget(d.path) : null,
        size: d.sourceSize ?? d.targetSize ?? null,
        // size: the target's size; content: the hash that differed ("content" when the bytes were read).
        reason: d.kind === 'size' ? String(d.targetSize ?? '') : d.kind === 'content' ? (d.hash ?? 'content') : null,
        message: null,
      });
    }
    for (const e of result.errors) {
      count('unreadable');
      const side = e.side ?? 'source';
      rows.add({
        outcome: 'unreadable',
        kind: 'file',
        side,
        path: side === 'target' ? onTarget(e.path) : onSource(e.path),
        other_path: null,
        size: null,
        reason: e.code,
        message: e.message,
      });
    }
  }
}

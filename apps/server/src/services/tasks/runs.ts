import { randomUUID } from 'node:crypto';
import {
  TaskState,
  formatBytes,
  type ListRunsData,
  type ListRunsQuery,
  type RunFile,
  type RunFileCounts,
  type RunFileOutcome,
  type RunKind,
  type RunFilesData,
  type RunFilesQuery,
  type RunLogFormat,
  type RunOutcome,
  type RunTrigger,
  type TaskResult,
  type TaskRun,
} from '@skyferry/contract';
import { joinRel, type ItemEvent, type PlanItem, type TransferPlan, type TransferResult } from '@skyferry/engine';
import { parentPath } from '@skyferry/providers';
import type { Logger } from 'pino';
import { errors } from '../../http/errors.ts';
import type { NewRunFileRow, RunFileRow, TaskRunRow, TaskRunsRepository } from '../../repositories/task-runs.ts';
import type { TaskRow, TasksRepository } from '../../repositories/tasks.ts';

/** Rows a run buffers before writing them in one go (a write is a few multi-row INSERTs). */
const FLUSH_ROWS = 1000;
/** Longest a row waits in the buffer while the run goes on. */
const FLUSH_EVERY_MS = 2000;
/** Conflicts and deletions the completion e-mail names (the rest are counted). */
export const MAIL_NAMES = 20;

export interface RunFigures {
  total_count: number;
  success_count: number;
  bytes: number;
  size: number;
  compared: number;
  same_by_hash: number;
  same_by_content: number;
  size_only: number;
}

export const NO_FIGURES: RunFigures = {
  total_count: 0,
  success_count: 0,
  bytes: 0,
  size: 0,
  compared: 0,
  same_by_hash: 0,
  same_by_content: 0,
  size_only: 0,
};

/** A file row without the run's id and its place, as the recorders make them. */
export type RunFileInput = Omit<NewRunFileRow, 'run_id' | 'seq'>;

export interface RunsServiceOptions {
  repo: TaskRunsRepository;
  tasks: TasksRepository;
  log: Logger;
  /** Most file rows a run keeps for each outcome (SKYFERRY_RUN_FILE_ROWS). */
  fileRowsPerOutcome: number;
  /** Runs are kept this many days after they end (SKYFERRY_RUN_HISTORY_DAYS). */
  historyDays: number;
  now?: () => number;
}

/** What started a transfer run, from its job: schedule slots and retries have job ids of their own. */
export function runTrigger(row: Pick<TaskRow, 'run_mode'>, jobId: string, attempt: number): RunTrigger {
  if (attempt > 1) return 'resume';
  if (/-s\d+$/.test(jobId)) return 'schedule';
  if (/-r\d+$/.test(jobId) || row.run_mode === 'retry') return 'retry';
  return 'manual';
}

const ACTIVE_RUN_STATES: readonly number[] = [TaskState.scanning, TaskState.running, TaskState.waitingNoCancel];

/** A run row as the API shows it. An open transfer run whose job the task no longer runs was interrupted. */
export function toTaskRun(
  row: TaskRunRow,
  task: TaskRow | undefined,
  latestId: string | undefined,
  now: number,
): TaskRun {
  const figures = { ...NO_FIGURES, ...(JSON.parse(row.figures) as Partial<RunFigures>) };
  let outcome = (row.outcome as RunOutcome | null) ?? null;
  let end = row.finished_at;
  if (end === null && row.kind === 'transfer') {
    const running = task !== undefined && task.job_id === row.job_id && ACTIVE_RUN_STATES.includes(task.state);
    if (!running) {
      outcome = 'interrupted';
      end = row.started_at;
    }
  }
  const duration = Math.max(0, (end ?? now) - row.started_at);
  return {
    id: row.id,
    task_id: row.task_id,
    kind: row.kind === 'verify' ? 'verify' : 'transfer',
    trigger: row.trigger as RunTrigger,
    outcome,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration,
    counts: JSON.parse(row.counts) as RunFileCounts,
    listed: JSON.parse(row.listed) as RunFileCounts,
    total_count: figures.total_count,
    success_count: figures.success_count,
    bytes: figures.bytes,
    size: figures.size,
    speed: duration > 0 ? Math.round((figures.bytes * 1000) / duration) : 0,
    compared: figures.compared,
    same_by_hash: figures.same_by_hash,
    same_by_content: figures.same_by_content,
    size_only: figures.size_only,
    error: row.error ? (JSON.parse(row.error) as { code: string; message: string }) : null,
    is_latest: row.kind === 'transfer' && row.id === latestId,
  };
}

export function toRunFile(row: RunFileRow): RunFile {
  return {
    outcome: row.outcome as RunFileOutcome,
    kind: row.kind === 'dir' ? 'dir' : 'file',
    side: row.side === 'source' ? 'source' : 'target',
    path: row.path,
    other_path: row.other_path,
    size: row.size,
    reason: row.reason,
    message: row.message,
  };
}

/**
 * File rows of one run: buffered and written in multi-row INSERTs (every FLUSH_ROWS rows, and at
 * least every FLUSH_EVERY_MS), at most `cap` rows for each outcome; the run's counts are kept apart
 * from the rows, so they stay whole whatever was dropped. Writes go one after another and never
 * hold the run up: a failed write is logged and the run goes on.
 */
export class FileRows {
  readonly runId: string;
  readonly listed: RunFileCounts = {};
  private readonly repo: TaskRunsRepository;
  private readonly cap: number;
  private readonly log: Logger;
  private seq = 0;
  private buffer: NewRunFileRow[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(repo: TaskRunsRepository, runId: string, cap: number, log: Logger) {
    this.repo = repo;
    this.runId = runId;
    this.cap = cap;
    this.log = log;
    this.timer = setInterval(() => this.flush(), FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** Whether rows of this outcome are listed no more (the cap is reached). */
  full(outcome: RunFileOutcome): boolean {
    return (this.listed[outcome] ?? 0) >= this.cap;
  }

  add(row: RunFileInput): void {
    const outcome = row.outcome as RunFileOutcome;
    const n = this.listed[outcome] ?? 0;
    if (n >= this.cap) return;
    this.listed[outcome] = n + 1;
    this.buffer.push({ ...row, run_id: this.runId, seq: this.seq++ });
    if (this.buffer.length >= FLUSH_ROWS) this.flush();
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = this.writing
      .then(() => this.repo.insertFiles(batch))
      .catch((err: unknown) => this.log.warn({ err, run: this.runId }, 'run file rows not written'));
  }

  /** Writes what is buffered and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    await this.writing;
  }
}

/** The path of a plan item on one side. */
function pathOf(plan: TransferPlan, item: PlanItem, side: 'source' | 'target', rel = item.rel): string {
  const pair = plan.pairs[item.pair];
  return joinRel((side === 'source' ? pair?.source : pair?.target) ?? '/', rel);
}

const DONE_OUTCOME: Partial<Record<PlanItem['action'], RunFileOutcome>> = {
  copy: 'added',
  update: 'updated',
  delete: 'deleted',
  conflict: 'conflict',
};

/**
 * What a transfer run did, as it happens: the run's row (begun when the worker starts the run,
 * ended with its figures) and its file rows (skips from the plan, then each item done, then the
 * failed files), plus the first conflicts and deletions for the completion e-mail.
 */
export class RunRecorder {
  readonly runId: string;
  readonly taskId: string;
  readonly trigger: RunTrigger;
  readonly conflicts: Array<{ path: string; other: string | null }> = [];
  readonly deletions: string[] = [];
  private readonly rows: FileRows;
  private readonly repo: TaskRunsRepository;

  constructor(repo: TaskRunsRepository, rows: FileRows, taskId: string, trigger: RunTrigger) {
    this.repo = repo;
    this.rows = rows;
    this.runId = rows.runId;
    this.taskId = taskId;
    this.trigger = trigger;
  }

  /**
   * Records the plan's skipped files. Only two-way runs need skip items while executing (they
   * carry unchanged files into the next state); the others drop them here, so a plan of millions
   * of skipped files does not stay in memory for the whole run.
   */
  planned(plan: TransferPlan): void {
    let kept = 0;
    for (const item of plan.items) {
      if (item.action === 'skip') {
        this.skipped(plan, item);
        if (plan.options.mode === 'two_way') plan.items[kept++] = item;
      } else {
        plan.items[kept++] = item;
      }
    }
    plan.items.length = kept;
  }

  /** A skip of the plan (a streamed plan hands each over as it is judged, and keeps none). */
  skipped(plan: TransferPlan, item: PlanItem): void {
    // Called for every file a run skips: past the cap, nothing is built.
    if (item.action !== 'skip' || item.kind !== 'file' || this.rows.full('skipped')) return;
    this.rows.add({
      outcome: 'skipped',
      kind: 'file',
      side: item.side,
      path: pathOf(plan, item, item.side),
      other_path: null,
      size: item.size,
      reason: item.reason,
      message: null,
    });
  }

  /** An item the executor finished (now, or an earlier attempt of the run). */
  item(plan: TransferPlan, e: ItemEvent): void {
    if (e.type === 'failed') return; // failures are final only at the end (a last round may retry them)
    // Names the run could not act on are in the result's failed list, recorded by `finish`.
    if (e.type === 'conflict') return;
    const item = e.item;
    if (e.type === 'skipped') {
      // Left alone for a reason (a file changed after the plan, a folder not empty): not done.
      this.rows.add({
        outcome: 'skipped',
        kind: item.kind === 'dir' ? 'dir' : 'file',
        side: item.side,
        path: pathOf(plan, item, item.side),
        other_path: null,
        size: item.size,
        reason: e.error?.code ?? item.reason,
        message: e.error?.message ?? null,
      });
      return;
    }
    const outcome = DONE_OUTCOME[item.action];
    if (!outcome) return;
    if (outcome === 'conflict') {
      const c = item.conflict;
      const path = pathOf(plan, item, 'target');
      const other = c?.loserName
        ? pathOf(plan, item, 'target', joinRel(parentPath(item.rel), `/${c.loserName}`))
        : null;
      if (this.conflicts.length < MAIL_NAMES) this.conflicts.push({ path, other });
      this.rows.add({
        outcome,
        kind: 'file',
        side: c?.winner ?? 'target',
        path,
        other_path: other,
        size: item.size,
        reason: c?.resolution ?? null,
        message: null,
      });
      return;
    }
    const path = pathOf(plan, item, item.side);
    if (outcome === 'deleted' && this.deletions.length < MAIL_NAMES) this.deletions.push(path);
    this.rows.add({
      outcome,
      kind: item.kind === 'dir' ? 'dir' : 'file',
      side: item.side,
      path,
      other_path: null,
      size: item.action === 'delete' ? item.size : e.bytes || item.size,
      reason: item.reason,
      message: null,
    });
  }

  /** Writes what is buffered (a run interrupted by a shutdown, resumed elsewhere as a new run). */
  async interrupted(): Promise<void> {
    await this.rows.close();
  }

  /** Records the failed files and the run's figures; `view` is the task's result of the run. */
  async finish(result: TransferResult, view: TaskResult, finishedAt: number): Promise<void> {
    for (const f of result.failed) {
      const parent = f.sourceFile.parent;
      this.rows.add({
        outcome: f.notDone ? 'not_done' : f.conflict ? 'conflict' : 'failed',
        kind: f.item.kind === 'dir' ? 'dir' : 'file',
        side: f.sourceSide,
        path: parent === '/' ? `/${f.sourceFile.name}` : `${parent}/${f.sourceFile.name}`,
        other_path: null,
        size: f.item.size,
        reason: f.reason,
        message: f.message,
      });
    }
    await this.rows.close();
    const counts: RunFileCounts = {
      added: view.added,
      updated: view.updated,
      deleted: view.deleted,
      conflict: view.conflicts,
      skipped: view.skipped,
      failed: view.failed,
      not_done: view.not_done,
    };
    const figures: RunFigures = {
      ...NO_FIGURES,
      total_count: view.total_count,
      success_count: view.success_count,
      bytes: result.transferredBytes,
      size: view.total_size,
    };
    const res = await this.repo.finish(this.runId, {
      outcome: view.outcome,
      finished_at: finishedAt,
      counts: JSON.stringify(counts),
      listed: JSON.stringify(this.rows.listed),
      figures: JSON.stringify(figures),
      error: view.error ? JSON.stringify(view.error) : null,
    });
    // The task (and its history) was deleted while the run finished: its rows go too.
    if (!res) await this.repo.deleteRunFiles(this.runId);
  }
}

/** The run history: runs begun by workers, read by the Tasks page, pruned by age. */
export class RunsService {
  private readonly o: Required<RunsServiceOptions>;

  constructor(options: RunsServiceOptions) {
    this.o = { now: () => Date.now(), ...options };
  }

  get repo(): TaskRunsRepository {
    return this.o.repo;
  }

  /** New file rows for a run, capped per outcome. */
  fileRows(runId: string): FileRows {
    return new FileRows(this.o.repo, runId, this.o.fileRowsPerOutcome, this.o.log);
  }

  /**
   * Starts the record of a transfer run (a worker began the task's job): an earlier attempt of
   * the same job still open was interrupted, and this one resumes it.
   */
  async begin(row: TaskRow, jobId: string, attempt: number): Promise<RunRecorder> {
    const now = Date.now();
    // A job handed back by a worker that shut down starts again as attempt 1: its open run says it resumes.
    const interrupted = await this.o.repo.closeOpen(jobId, 'interrupted', now);
    const trigger = interrupted > 0 ? 'resume' : runTrigger(row, jobId, attempt);
    const id = await this.open({
      taskId: row.id,
      userId: row.user_id,
      jobId,
      kind: 'transfer',
      trigger,
      startedAt: now,
    });
    return new RunRecorder(this.o.repo, this.fileRows(id), row.id, trigger);
  }

  /** A new run in the history, going on (no outcome yet); answers its id. */
  async open(run: {
    taskId: string;
    userId: string;
    jobId: string;
    kind: RunKind;
    trigger: RunTrigger;
    startedAt: number;
    id?: string;
  }): Promise<string> {
    const id = run.id ?? randomUUID();
    await this.o.repo.insert({
      id,
      task_id: run.taskId,
      user_id: run.userId,
      job_id: run.jobId,
      kind: run.kind,
      trigger: run.trigger,
      outcome: null,
      started_at: run.startedAt,
      finished_at: null,
      counts: '{}',
      listed: '{}',
      figures: JSON.stringify(NO_FIGURES),
      error: null,
    });
    return id;
  }

  private async task(userId: string, taskId: string): Promise<TaskRow> {
    const task = await this.o.tasks.get(userId, taskId);
    if (!task) throw errors.notFound('task_not_found');
    return task;
  }

  /** The task and one of its runs, both the caller's (asked at once: each read names the owner). */
  private async run(userId: string, taskId: string, runId: string): Promise<{ task: TaskRow; run: TaskRunRow }> {
    const [task, run] = await Promise.all([this.task(userId, taskId), this.o.repo.get(userId, taskId, runId)]);
    if (!run) throw errors.notFound('run_not_found');
    return { task, run };
  }

  async list(userId: string, taskId: string, query: ListRunsQuery): Promise<ListRunsData> {
    // The reads go out together; the runs are read through the owner's id, so nothing leaks
    // before the task is found to be the caller's.
    const [task, page, latest] = await Promise.all([
      this.task(userId, taskId),
      this.o.repo.list(userId, taskId, query.page, query.page_size, query.kind),
      this.o.repo.latest(taskId, 'transfer'),
    ]);
    const now = this.o.now();
    return { items: page.rows.map((r) => toTaskRun(r, task, latest?.id, now)), total: page.total };
  }

  async get(userId: string, taskId: string, runId: string): Promise<TaskRun> {
    const [{ task, run }, latest] = await Promise.all([
      this.run(userId, taskId, runId),
      this.o.repo.latest(taskId, 'transfer'),
    ]);
    return toTaskRun(run, task, latest?.id, this.o.now());
  }

  async files(userId: string, taskId: string, runId: string, query: RunFilesQuery): Promise<RunFilesData> {
    const { run } = await this.run(userId, taskId, runId);
    const q = query.q?.trim() || undefined;
    const rows = await this.o.repo.files(run.id, {
      outcome: query.outcome,
      q,
      after: query.cursor,
      limit: query.limit + 1,
    });
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    let total: number | null = null;
    if (!q && run.finished_at !== null) {
      const listed = JSON.parse(run.listed) as RunFileCounts;
      total = query.outcome ? (listed[query.outcome] ?? 0) : Object.values(listed).reduce((s, n) => s + (n ?? 0), 0);
    }
    return {
      items: page.map(toRunFile),
      next_cursor: more ? (page[page.length - 1]?.seq ?? null) : null,
      total,
    };
  }

  /**
   * The log of a run, as lines of text or JSON: the run's figures first, then each file row
   * (read a page at a time, so a run of millions streams in constant memory). The run is looked
   * up before the answer starts (404 as an envelope), the lines are made as they are sent.
   */
  async log(
    userId: string,
    taskId: string,
    runId: string,
    format: RunLogFormat,
  ): Promise<{ name: string; lines: AsyncGenerator<string> }> {
    const { task, run } = await this.run(userId, taskId, runId);
    const latest = await this.o.repo.latest(taskId, 'transfer');
    const view = toTaskRun(run, task, latest?.id, this.o.now());
    const day = new Date(view.started_at).toISOString().slice(0, 19).replace(/[:T]/g, '-');
    return {
      name: `skyferry-run-${day}.${format === 'jsonl' ? 'jsonl' : 'log'}`,
      lines: this.logLines(task, view, format),
    };
  }

  private async *logLines(task: TaskRow, view: TaskRun, format: RunLogFormat): AsyncGenerator<string> {
    yield format === 'jsonl'
      ? JSON.stringify({ type: 'run', task_name: task.task_name, ...view }) + '\n'
      : runHeader(task, view);
    let after: number | undefined;
    for (;;) {
      const rows = await this.o.repo.files(view.id, { after, limit: 2000 });
      if (rows.length === 0) break;
      let chunk = '';
      for (const r of rows) {
        chunk += format === 'jsonl' ? JSON.stringify({ type: 'file', ...toRunFile(r) }) + '\n' : fileLine(r);
      }
      yield chunk;
      after = rows[rows.length - 1]?.seq;
    }
    if (format === 'text') {
      const dropped = Object.entries(view.counts)
        .map(([k, n]) => [k, (n ?? 0) - (view.listed[k as RunFileOutcome] ?? 0)] as const)
        .filter(([, n]) => n > 0);
      if (dropped.length > 0) {
        yield `\nCounted but not listed one by one (a run keeps ${this.o.fileRowsPerOutcome} rows of each outcome): ${dropped
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}\n`;
      }
    }
  }

  /** Removes runs that ended more than SKYFERRY_RUN_HISTORY_DAYS ago, with their files. */
  async prune(): Promise<number> {
    const cutoff = this.o.now() - this.o.historyDays * 86_400_000;
    let total = 0;
    for (;;) {
      const n = await this.o.repo.pruneFinishedBefore(cutoff);
      total += n;
      if (n < 200) break;
    }
    if (total > 0) this.o.log.info({ runs: total }, 'old runs pruned');
    return total;
  }
}

const iso = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function runHeader(task: TaskRow, run: TaskRun): string {
  const counts = Object.entries(run.counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [
    `Task: ${task.task_name}`,
    `Run: ${run.id} (${run.kind}, ${run.trigger})`,
    `Outcome: ${run.outcome ?? 'running'}`,
    `Started: ${iso(run.started_at)}`,
    `Ended: ${iso(run.finished_at)}`,
    `Duration: ${Math.round(run.duration / 1000)} s`,
    `Files: ${counts || 'none'}`,
  ];
  if (run.kind === 'transfer') {
    lines.push(`Moved: ${formatBytes(run.bytes)} of ${formatBytes(run.size)} (${formatBytes(run.speed)}/s)`);
  } else {
    lines.push(
      `Compared: ${run.compared} (same by hash ${run.same_by_hash}, by content ${run.same_by_content}, by size only ${run.size_only})`,
    );
  }
  if (run.error) lines.push(`Error: ${run.error.code}: ${run.error.message}`);
  return `${lines.join('\n')}\n\n`;
}

function fileLine(r: RunFileRow): string {
  const parts = [r.outcome.padEnd(17), r.side === 'source' ? 'source' : 'target', r.path];
  if (r.other_path) parts.push(`-> ${r.other_path}`);
  if (r.size !== null) parts.push(`(${formatBytes(r.size)})`);
  if (r.reason) parts.push(`[${r.reason}]`);
  if (r.message) parts.push(r.message);
  return `${parts.join(' ')}\n`;
}

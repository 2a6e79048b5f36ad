import type { Database, Insertable, Kysely, Selectable, TasksTable, Updateable } from '@skyferry/db';

export type TaskRow = Selectable<TasksTable>;
export type NewTaskRow = Insertable<TasksTable>;
export type TaskPatch = Updateable<TasksTable>;

/** A task whose schedule is on, as the scheduler needs it. */
export interface DueTask {
  id: string;
  userId: string;
  schedule: string;
  timeZone: string;
  nextRunTime: number;
}

/**
 * Server tasks. Every read and write a user can cause goes through the owner's id; the unscoped
 * methods (`…ById`) are for workers and the scheduler, which act for the owner of a task they hold.
 */
export class TasksRepository {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async insert(row: NewTaskRow): Promise<void> {
    await this.db.insertInto('tasks').values(row).execute();
  }

  async get(userId: string, id: string): Promise<TaskRow | undefined> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async getById(id: string): Promise<TaskRow | undefined> {
    return this.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * A page of the user's tasks in the given states, newest first, and how many there are. The page
   * and the count come from one statement (a window count), so they agree: as two queries on
   * PostgreSQL's pool they could see different moments, a task finishing between them counted in
   * the total but missing from the page.
   */
  async list(
    userId: string,
    states: readonly number[],
    page: number,
    pageSize: number,
  ): Promise<{ rows: TaskRow[]; total: number }> {
    const base = this.db
      .selectFrom('tasks')
      .where('user_id', '=', userId)
      .where('state', 'in', [...states]);
    const found = await base
      .selectAll()
      .select((eb) => eb.fn.countAll<number>().over().as('_total'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(pageSize)
      .offset((page - 1) * pageSize)
      .execute();
    const first = found[0];
    if (first) return { rows: found.map(({ _total, ...row }) => row), total: Number(first._total) };
    // A page past the end carries no count: ask for it alone.
    const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: [], total: Number(count.n) };
  }

  /** All of the user's tasks in the given states (for the few in a running state, not for listing). */
  async inStates(userId: string, states: readonly number[]): Promise<TaskRow[]> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('user_id', '=', userId)
      .where('state', 'in', [...states])
      .execute();
  }

  /** Ids of every task of the user (deleting an account). */
  async idsOf(userId: string): Promise<string[]> {
    return (await this.db.selectFrom('tasks').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('tasks').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) return false;
    await Promise.all(
      (['task_progress', 'task_failed_files', 'task_checkpoints', 'task_sync_state'] as const).map((table) =>
        this.db.deleteFrom(table).where('task_id', '=', id).execute(),
      ),
    );
    // The run history goes with the task.
    const runs = this.db.selectFrom('task_runs').select('id').where('task_id', '=', id);
    await this.db.deleteFrom('task_run_file_blocks').where('run_id', 'in', runs).execute();
    await this.db.deleteFrom('task_runs').where('task_id', '=', id).execute();
    return true;
  }

  /**
   * Applies `patch` when the task is (still) in one of `fromStates` (and, when given, still holds
   * `jobId`); true when it did. State changes race between API and workers: this keeps them honest.
   */
  async transition(
    id: string,
    fromStates: readonly number[] | 'any',
    patch: TaskPatch,
    options: { userId?: string; jobId?: string | null } = {},
  ): Promise<boolean> {
    let q = this.db
      .updateTable('tasks')
      .set({ ...patch, updated_at: patch.updated_at ?? Date.now() })
      .where('id', '=', id);
    if (fromStates !== 'any') q = q.where('state', 'in', [...fromStates]);
    if (options.userId !== undefined) q = q.where('user_id', '=', options.userId);
    if (options.jobId !== undefined) {
      q = options.jobId === null ? q.where('job_id', 'is', null) : q.where('job_id', '=', options.jobId);
    }
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  // --- scheduler -----------------------------------------------------------------------------

  /** Tasks whose schedule is on and whose next run time has come, earliest first. */
  async due(now: number, limit: number): Promise<DueTask[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['id', 'user_id', 'schedule', 'time_zone', 'next_run_time'])
      .where('is_schedule', '=', 2)
      .where('next_run_time', 'is not', null)
      .where('next_run_time', '<=', now)
      .where('schedule', 'is not', null)
      .orderBy('next_run_time')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      userId: r.user_id,
      schedule: r.schedule ?? '',
      timeZone: r.time_zone,
      nextRunTime: Number(r.next_run_time),
    }));
  }

  /**
   * Moves a task's next run time from `expected` to `next` unless another process already did:
   * the conditional UPDATE is what makes a schedule fire once across processes.
   */
  async advanceSchedule(id: string, expected: number | null, next: number | null): Promise<boolean> {
    let q = this.db.updateTable('tasks').set({ next_run_time: next, updated_at: Date.now() }).where('id', '=', id);
    q = expected === null ? q.where('next_run_time', 'is', null) : q.where('next_run_time', '=', expected);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  // --- failed files of the last run -----------------------------------------------------------

  /** Replaces the task's failed files with `files` (in order). */
  async replaceFailedFiles(taskId: string, files: readonly FailedFileRow[]): Promise<void> {
    await this.db.deleteFrom('task_failed_files').where('task_id', '=', taskId).execute();
    for (let i = 0; i < files.length; i += 200) {
      const batch = files.slice(i, i + 200).map((f, j) => ({ ...f, task_id: taskId, seq: i + j }));
      await this.db.insertInto('task_failed_files').values(batch).execute();
    }
  }

  async failedFiles(taskId: string, limit = Number.MAX_SAFE_INTEGER): Promise<FailedFileRow[]> {
    return this.db
      .selectFrom('task_failed_files')
      .select(['name', 'parent', 'token_id', 'reason', 'message', 'item'])
      .where('task_id', '=', taskId)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  async countFailedFiles(taskId: string): Promise<number> {
    const row = await this.db
      .selectFrom('task_failed_files')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Tasks of every account by state (the metrics' queue depth). */
  async countByState(): Promise<Array<{ state: number; count: number }>> {
    const rows = await this.db
      .selectFrom('tasks')
      .select((eb) => ['state', eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute();
    return rows.map((r) => ({ state: Number(r.state), count: Number(r.n) }));
  }
}

export interface FailedFileRow {
  name: string;
  parent: string;
  token_id: string | null;
  reason: string;
  message: string;
  /** The engine's FailedItem, JSON (what a retry needs). */
  item: string;
}

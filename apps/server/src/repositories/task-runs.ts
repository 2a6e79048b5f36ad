import {
  packRunFiles,
  sql,
  unpackRunFiles,
  type Database,
  type Dialect,
  type Insertable,
  type Kysely,
  type Selectable,
  type TaskRunFilesTable,
  type TaskRunsTable,
  type Updateable,
} from '@skyferry/db';

export type TaskRunRow = Selectable<TaskRunsTable>;
export type NewTaskRunRow = Insertable<TaskRunsTable>;
export type TaskRunPatch = Updateable<TaskRunsTable>;
export type RunFileRow = Selectable<TaskRunFilesTable>;
export type NewRunFileRow = Insertable<TaskRunFilesTable>;

/** Blocks per INSERT (6 parameters each). */
const INSERT_BLOCKS = 50;
/** Blocks a page of files reads at a time. */
const READ_BLOCKS = 4;
/** Runs whose files one pruning statement removes. */
const PRUNE_BATCH = 20;

export interface RunFilesFilter {
  outcome?: string;
  /** Part of the path (case-insensitive for ASCII letters). */
  q?: string;
  /** Rows after this `seq`. */
  after?: number;
  limit: number;
}

/** `%` and `_` match themselves in a search: escaped for LIKE. */
function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Lower case for ASCII letters only (a search is case-insensitive for ASCII). */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (c) => c.toLowerCase());
}

/**
 * The run history of server tasks and the files of each run. Reads a user can cause name the
 * owner's id; writes come from workers, which act for the owner of the task they hold.
 */
export class TaskRunsRepository {
  private readonly db: Kysely<Database>;
  private readonly dialect: Dialect;

  constructor(db: Kysely<Database>, dialect: Dialect) {
    this.db = db;
    this.dialect = dialect;
  }

  async insert(row: NewTaskRunRow): Promise<void> {
    await this.db.insertInto('task_runs').values(row).execute();
  }

  async update(id: string, patch: TaskRunPatch): Promise<void> {
    await this.db.updateTable('task_runs').set(patch).where('id', '=', id).execute();
  }

  /** Ends an open run with its figures; false when the run is gone (its task was deleted). */
  async finish(id: string, patch: TaskRunPatch): Promise<boolean> {
    const res = await this.db
      .updateTable('task_runs')
      .set(patch)
      .where('id', '=', id)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Ends the runs of a job still open (an earlier attempt whose worker stopped) with `outcome`. */
  async closeOpen(jobId: string, outcome: string, now: number): Promise<number> {
    const res = await this.db
      .updateTable('task_runs')
      .set({ outcome, finished_at: now })
      .where('job_id', '=', jobId)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async get(userId: string, taskId: string, runId: string): Promise<TaskRunRow | undefined> {
    return this.db
      .selectFrom('task_runs')
      .selectAll()
      .where('id', '=', runId)
      .where('task_id', '=', taskId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async getById(runId: string): Promise<TaskRunRow | undefined> {
    return this.db.selectFrom('task_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  }

  /**
   * A page of a task's runs, newest first, and how many there are. Two statements on the index
   * (task_id, started_at, id): a window count would read every run of the task, JSON and all,
   * before the page is cut.
   */
  async list(
    userId: string,
    taskId: string,
    page: number,
    pageSize: number,
    kind?: string,
  ): Promise<{ rows: TaskRunRow[]; total: number }> {
    let base = this.db.selectFrom('task_runs').where('task_id', '=', taskId).where('user_id', '=', userId);
    if (kind) base = base.where('kind', '=', kind);
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy('started_at', 'desc')
        .orderBy('id', 'desc')
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** The newest run of a kind of a task (the one a retry of failed files belongs to). */
  async latest(taskId: string, kind: string): Promise<TaskRunRow | undefined> {
    return this.db
      .selectFrom('task_runs')
      .selectAll()
      .where('task_id', '=', taskId)
      .where('kind', '=', kind)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** Files of a run (each run's in `seq` order), packed into blocks written in multi-row INSERTs. */
  async insertFiles(rows: readonly NewRunFileRow[]): Promise<void> {
    const blocks = packRunFiles(
      rows.map((r) => ({
        run_id: r.run_id,
        seq: r.seq,
        outcome: r.outcome,
        kind: r.kind,
        side: r.side,
        path: r.path,
        other_path: r.other_path ?? null,
        size: r.size ?? null,
        reason: r.reason ?? null,
        message: r.message ?? null,
      })),
    );
    for (let i = 0; i < blocks.length; i += INSERT_BLOCKS) {
      await this.db
        .insertInto('task_run_file_blocks')
        .values(blocks.slice(i, i + INSERT_BLOCKS))
        .execute();
    }
  }

  /**
   * A page of a run's files in run order (keyset on `seq`). Blocks are read in the order of their
   * first file, a few at a time, until no block left can hold a file before the page's last one.
   * A search first keeps the blocks whose text holds it (its JSON form, as the paths are stored),
   * then matches each path.
   */
  async files(runId: string, f: RunFilesFilter): Promise<RunFileRow[]> {
    const after = f.after ?? -1;
    const needle = f.q ? asciiLower(f.q) : undefined;
    const pattern = f.q ? likePattern(JSON.stringify(f.q).slice(1, -1)) : undefined;
    const out: RunFileRow[] = [];
    let from: number | undefined;
    for (;;) {
      let q = this.db
        .selectFrom('task_run_file_blocks')
        .select(['run_id', 'outcome', 'first_seq', 'data'])
        .where('run_id', '=', runId)
        .where('last_seq', '>', after);
      if (f.outcome) q = q.where('outcome', '=', f.outcome);
      if (from !== undefined) q = q.where('first_seq', '>', from);
      if (pattern) {
        q =
          this.dialect === 'postgres'
            ? q.where(sql<boolean>`data ilike ${pattern} escape '\\'`)
            : q.where(sql<boolean>`data like ${pattern} escape '\\'`);
      }
      const blocks = await q.orderBy('first_seq').limit(READ_BLOCKS).execute();
      for (const b of blocks) {
        const last = out[f.limit - 1];
        if (last && Number(b.first_seq) > last.seq) return out;
        for (const r of unpackRunFiles(b)) {
          if (r.seq > after && (!needle || asciiLower(r.path).includes(needle))) out.push(r);
        }
        out.sort((x, y) => x.seq - y.seq);
        if (out.length > f.limit) out.length = f.limit;
      }
      if (blocks.length < READ_BLOCKS) return out;
      from = Number(blocks[blocks.length - 1]?.first_seq);
    }
  }

  async deleteRunFiles(runId: string): Promise<void> {
    await this.db.deleteFrom('task_run_file_blocks').where('run_id', '=', runId).execute();
  }

  private async deleteRuns(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += PRUNE_BATCH) {
      const batch = ids.slice(i, i + PRUNE_BATCH);
      await this.db.deleteFrom('task_run_file_blocks').where('run_id', 'in', batch).execute();
      await this.db.deleteFrom('task_runs').where('id', 'in', batch).execute();
    }
  }

  /**
   * Removes runs that finished before `cutoff`, with their files, at most `limit` runs at a
   * time (a caller loops while it returns `limit`). Answers how many runs went.
   */
  async pruneFinishedBefore(cutoff: number, limit = 200): Promise<number> {
    const old = await this.db
      .selectFrom('task_runs')
      .select('id')
      .where('finished_at', 'is not', null)
      .where('finished_at', '<', cutoff)
      .orderBy('finished_at')
      .limit(limit)
      .execute();
    await this.deleteRuns(old.map((r) => r.id));
    return old.length;
  }
}

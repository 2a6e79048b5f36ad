import type { Redis } from 'ioredis';
import type { Database, Kysely } from '@skyferry/db';
import type { TaskProgress } from '@skyferry/contract';

/** The live progress of a running task, as every API process reads it. */
export interface ProgressSnapshot {
  state: number;
  progress: TaskProgress;
  totalCounts: number;
  finishedCounts: number;
  updatedAt: number;
}

/**
 * Where workers put the progress of running tasks (about once a second) and API processes read it:
 * the database by default, Redis when the deployment has one.
 */
export interface ProgressStore {
  set(taskId: string, snapshot: ProgressSnapshot): Promise<void>;
  get(taskId: string): Promise<ProgressSnapshot | undefined>;
  getMany(taskIds: readonly string[]): Promise<Map<string, ProgressSnapshot>>;
  delete(taskId: string): Promise<void>;
}

export class DatabaseProgressStore implements ProgressStore {
  private readonly db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async set(taskId: string, s: ProgressSnapshot): Promise<void> {
    const values = {
      state: s.state,
      progress: JSON.stringify(s.progress),
      total_counts: s.totalCounts,
      finished_counts: s.finishedCounts,
      updated_at: s.updatedAt,
    };
    await this.db
      .insertInto('task_progress')
      .values({ task_id: taskId, ...values })
      .onConflict((oc) => oc.column('task_id').doUpdateSet(values))
      .execute();
  }

  async get(taskId: string): Promise<ProgressSnapshot | undefined> {
    const row = await this.db.selectFrom('task_progress').selectAll().where('task_id', '=', taskId).executeTakeFirst();
    return row ? toSnapshot(row) : undefined;
  }

  async getMany(taskIds: readonly string[]): Promise<Map<string, ProgressSnapshot>> {
    const out = new Map<string, ProgressSnapshot>();
    if (taskIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('task_progress')
      .selectAll()
      .where('task_id', 'in', [...taskIds])
      .execute();
    for (const row of rows) out.set(row.task_id, toSnapshot(row));
    return out;
  }

  async delete(taskId: string): Promise<void> {
    await this.db.deleteFrom('task_progress').where('task_id', '=', taskId).execute();
  }
}

function toSnapshot(row: {
  state: number;
  progress: string;
  total_counts: number;
  finished_counts: number;
  updated_at: number;
}): ProgressSnapshot {
  return {
    state: row.state,
    progress: JSON.parse(row.progress) as TaskProgress,
    totalCounts: row.total_counts,
    finishedCounts: row.finished_counts,
    updatedAt: row.updated_at,
  };
}

/** Progress in Redis: one key per running task, expiring a day after its last update. */
export class RedisProgressStore implements ProgressStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }
  private key(taskId: string) {
    return `${this.prefix}:progress:${taskId}`;
  }
  async set(taskId: string, s: ProgressSnapshot): Promise<void> {
    await this.redis.set(this.key(taskId), JSON.stringify(s), 'EX', 86_400);
  }
  async get(taskId: string): Promise<ProgressSnapshot | undefined> {
    const raw = await this.redis.get(this.key(taskId));
    return raw ? (JSON.parse(raw) as ProgressSnapshot) : undefined;
  }
  async getMany(taskIds: readonly string[]): Promise<Map<string, ProgressSnapshot>> {
    const out = new Map<string, ProgressSnapshot>();
    if (taskIds.length === 0) return out;
    const values = await this.redis.mget(taskIds.map((id) => this.key(id)));
    taskIds.forEach((id, i) => {
      const raw = values[i];
      if (raw) out.set(id, JSON.parse(raw) as ProgressSnapshot);
    });
    return out;
  }
  async delete(taskId: string): Promise<void> {
    await this.redis.del(this.key(taskId));
  }
}

import { Redis } from 'ioredis';
import type { Db } from '@skyferry/db';
import { BullJobQueue, DatabaseJobQueue } from '@skyferry/queue';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { DatabaseProgressStore, RedisProgressStore, type ProgressStore } from '../repositories/task-progress.ts';
import { TasksRepository } from '../repositories/tasks.ts';
import type { CloudsService } from '../services/clouds.ts';
import { createMailer } from '../services/mail/index.ts';
import { Scheduler } from '../services/scheduler/scheduler.ts';
import { TaskRunner, TasksService, type TaskJob, type TaskQueue } from '../services/tasks/index.ts';
import { TaskRunsRepository } from '../repositories/task-runs.ts';
import { TaskEditor } from '../services/tasks/edit.ts';
import { RunsService } from '../services/tasks/runs.ts';
import { VerifyService, type VerifyJob, type VerifyQueue } from '../services/tasks/verify.ts';
import type { UsersService } from '../services/users.ts';

/** The queue every process shares for task runs. */
export const TASK_QUEUE = 'tasks';
/** The queue of verifications (a task's source compared with its target). */
export const VERIFY_QUEUE = 'verify';
/** How often old runs are pruned (SKYFERRY_RUN_HISTORY_DAYS). */
const PRUNE_EVERY_MS = 60 * 60_000;

export interface TaskSystem {
  readonly tasks: TasksService;
  readonly queue: TaskQueue;
  readonly progress: ProgressStore;
  readonly scheduler: Scheduler;
  /** The run history (the Tasks page). */
  readonly runs: RunsService;
  /** Verifications of tasks (source compared with target). */
  readonly verify: VerifyService;
  /** Edit, plan of an edit, and Duplicate. */
  readonly editor: TaskEditor;
  /** Runs task jobs in this process, `concurrency` at once. */
  startWorkers(concurrency: number): Promise<void>;
  close(): Promise<void>;
}

export interface TaskSystemDeps {
  config: Config;
  db: Db;
  log: Logger;
  clouds: CloudsService;
  users: UsersService;
}

/**
 * Tasks, their queue (durable in the database, or BullMQ when REDIS_URL is set), live progress
 * (database or Redis), the scheduler and the workers. API and worker processes build the same
 * thing; only processes with workers run jobs. Every process runs the scheduler: a slot fires once.
 */
export function createTaskSystem(deps: TaskSystemDeps): TaskSystem {
  const { config, db, log } = deps;
  const jobLog = log.child({ component: 'tasks' });
  const onError = (err: unknown) => jobLog.warn({ err }, 'task queue error');
  // A crashed run waits half a lease (at most 5 s) before another worker resumes it.
  const queueOptions = {
    name: TASK_QUEUE,
    leaseMs: config.taskLeaseMs,
    backoffMs: Math.min(5_000, Math.round(config.taskLeaseMs / 2)),
    onError,
  };
  let redis: Redis | undefined;
  let queue: TaskQueue;
  let progress: ProgressStore;
  let verifyQueue: VerifyQueue;
  const verifyOptions = { ...queueOptions, name: VERIFY_QUEUE };
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3 });
    redis.on('error', onError);
    queue = new BullJobQueue<TaskJob>({ ...queueOptions, redisUrl: config.redisUrl, prefix: config.redisPrefix });
    progress = new RedisProgressStore(redis, config.redisPrefix);
    verifyQueue = new BullJobQueue<VerifyJob>({
      ...verifyOptions,
      redisUrl: config.redisUrl,
      prefix: config.redisPrefix,
    });
  } else {
    queue = new DatabaseJobQueue<TaskJob>(db, queueOptions);
    progress = new DatabaseProgressStore(db.kysely);
    verifyQueue = new DatabaseJobQueue<VerifyJob>(db, verifyOptions);
  }
  const repo = new TasksRepository(db.kysely);
  const tasks = new TasksService({
    repo,
    progress,
    queue,
    clouds: deps.clouds,
    users: deps.users,
    billingMode: config.billingMode,
    log: jobLog,
  });
  const runs = new RunsService({
    repo: new TaskRunsRepository(db.kysely, db.dialect),
    tasks: repo,
    log: jobLog,
    fileRowsPerOutcome: config.runFileRows,
    historyDays: config.runHistoryDays,
  });
  const verify = new VerifyService({ runs, tasks: repo, queue: verifyQueue, clouds: deps.clouds, log: jobLog });
  const editor = new TaskEditor({ tasks, repo, db: db.kysely, clouds: deps.clouds, log: jobLog });
  const prune = () => void runs.prune().catch((err: unknown) => jobLog.warn({ err }, 'old runs not pruned'));
  const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);
  pruneTimer.unref();
  prune();
  const mailer = createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: config.outboxDir });
  const runner = new TaskRunner({
    repo,
    db: db.kysely,
    progress,
    clouds: deps.clouds,
    users: deps.users,
    mailer,
    billingMode: config.billingMode,
    appUrl: config.publicUrl,
    log: jobLog,
    runs,
  });
  const scheduler = new Scheduler({
    store: repo,
    fire: (task, slot) => tasks.fireScheduled(task, slot),
    onError: (err, task) => jobLog.warn({ err, task: task?.id }, 'scheduler error'),
  });
  scheduler.start();
  return {
    tasks,
    queue,
    progress,
    scheduler,
    runs,
    verify,
    editor,
    async startWorkers(concurrency) {
      await queue.process(runner.handle, {
        concurrency,
        groupConcurrency: config.tasksPerUser,
        ...(config.tasksMax > 0 ? { globalConcurrency: config.tasksMax } : {}),
        onFailed: (job, error) => tasks.jobFailed(job.data.taskId, job.id, error),
      });
      await verifyQueue.process(verify.handle, {
        concurrency,
        groupConcurrency: config.tasksPerUser,
        onFailed: (job, error) => verify.jobFailed(job.data.runId, error),
      });
      jobLog.info({ concurrency, queue: redis ? 'bullmq' : 'database' }, 'task workers started');
    },
    async close() {
      clearInterval(pruneTimer);
      await scheduler.stop();
      await queue.close();
      await verifyQueue.close();
      mailer.close();
      redis?.disconnect();
    },
  };
}

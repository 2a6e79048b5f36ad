import type { Db } from '@skyferry/db';
import { BullJobQueue, DatabaseJobQueue } from '@skyferry/queue';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { CleanupRepository } from '../../repositories/cleanup.ts';
import type { CloudsService } from '../clouds.ts';
import type { UsersService } from '../users.ts';
import { CleanupService, type CleanupJob, type CleanupQueue } from './cleanup-service.ts';
import { CleanupRunner } from './runner.ts';

/** The queue every process shares for clean-up scans (jobs of type `cleanup_scan`). */
export const CLEANUP_QUEUE = 'cleanup';

export interface CleanupSystem {
  readonly service: CleanupService;
  readonly queue: CleanupQueue;
  /** Runs scan jobs in this process, `concurrency` at once. */
  startWorkers(concurrency: number): Promise<void>;
  close(): Promise<void>;
}

export interface CleanupSystemDeps {
  config: Config;
  db: Db;
  log: Logger;
  clouds: CloudsService;
  users: UsersService;
}

/**
 * Clean-up scans run as jobs the way server tasks do: a durable queue in the database, or BullMQ
 * when REDIS_URL is set, shared by every API and worker process; processes with workers run them.
 * Live progress is written to the scan's row, which every process reads.
 */
export function createCleanupSystem(deps: CleanupSystemDeps): CleanupSystem {
  const { config, db } = deps;
  const log = deps.log.child({ component: 'cleanup' });
  const onError = (err: unknown) => log.warn({ err }, 'clean-up queue error');
  const options = { name: CLEANUP_QUEUE, leaseMs: config.taskLeaseMs, onError };
  const queue: CleanupQueue = config.redisUrl
    ? new BullJobQueue<CleanupJob>({ ...options, redisUrl: config.redisUrl, prefix: config.redisPrefix })
    : new DatabaseJobQueue<CleanupJob>(db, options);
  const repo = new CleanupRepository(db.kysely);
  const service = new CleanupService({
    repo,
    queue,
    clouds: deps.clouds,
    users: deps.users,
    billingMode: config.billingMode,
    log,
  });
  const runner = new CleanupRunner({ repo, clouds: deps.clouds, log });
  return {
    service,
    queue,
    async startWorkers(concurrency) {
      await queue.process(runner.handle, {
        concurrency,
        groupConcurrency: config.tasksPerUser,
        onFailed: (job, error) => service.jobFailed(job.data.taskId, error),
      });
      log.info({ concurrency }, 'clean-up workers started');
    },
    async close() {
      await queue.close();
    },
  };
}

/**
 * The job queue every Skyferry process shares: API processes enqueue, worker processes (or the API
 * process itself) run the jobs. Two implementations keep the same promises, checked by one contract
 * suite (`testkit/contract.ts`): `DatabaseJobQueue` (durable in the database, the default) and
 * `BullJobQueue` (Redis with BullMQ, for many machines).
 *
 * Promises:
 * - a job runs on one worker at a time, under a lease the worker renews (heartbeat); when the worker
 *   dies the lease expires and another worker runs the job again, after a backoff;
 * - a job id is used once: enqueueing an id that already exists (in any state, until finished jobs
 *   are pruned after `retentionMs`) adds nothing and returns that id;
 * - per-group (per-user) and global concurrency limits hold across every process;
 * - cancelling a running job aborts the signal its handler received, in whichever process it runs;
 * - a handler that throws is retried with exponential backoff until `maxAttempts`, then failed.
 */

export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed' | 'canceled';

/** Why a running job's signal was aborted. */
export type AbortReason = 'canceled' | 'lease_lost' | 'shutdown' | 'crash';

export interface EnqueueOptions {
  /** Idempotence key; letters, digits, `-`, `_` and `.` only. Generated when absent. */
  jobId?: string;
  /** Earliest start, in ms since the epoch (default: now). */
  runAt?: number;
  /** Concurrency group: jobs of one group share `groupConcurrency` (the user id for tasks). */
  group?: string;
  /** Starts before the job is failed (default: the queue's `maxAttempts`). */
  maxAttempts?: number;
}

export interface JobInfo<T> {
  id: string;
  data: T;
  state: JobState;
  /** Starts so far (0 before the first). */
  attempts: number;
  group: string | undefined;
  /** The last error, for failed jobs and jobs waiting for a retry. */
  error: string | undefined;
}

/** What a handler receives. */
export interface RunningJob<T> {
  readonly id: string;
  readonly data: T;
  /** 1 on the first start, 2 on the first retry or resumption, and so on. */
  readonly attempt: number;
  readonly group: string | undefined;
  /** Aborted when the job is cancelled, its lease is lost, or the process shuts down. */
  readonly signal: AbortSignal;
}

export type JobHandler<T> = (job: RunningJob<T>) => Promise<void>;

export interface ProcessOptions<T> {
  /** Jobs this process runs at once (default 1). */
  concurrency?: number;
  /** Jobs of one group running at once across every process (default: no limit). */
  groupConcurrency?: number;
  /** Jobs running at once across every process (default: no limit). */
  globalConcurrency?: number;
  /** Called once (in one process) when a job has used all its attempts. */
  onFailed?: (job: JobInfo<T>, error: string) => void | Promise<void>;
}

export interface CloseOptions {
  /**
   * true (default): abort running handlers with reason "shutdown" and put their jobs back, so another
   * worker resumes them at once; false: wait for running handlers to finish.
   */
  abortRunning?: boolean;
  /** Longest wait for handlers to settle (default 10 s). */
  timeoutMs?: number;
}

export interface JobQueue<T> {
  readonly name: string;
  /** Adds a job (or nothing, when `jobId` exists) and returns its id. */
  enqueue(data: T, options?: EnqueueOptions): Promise<string>;
  /** The job's state, or undefined when unknown (never added, or pruned). */
  get(jobId: string): Promise<JobInfo<T> | undefined>;
  /**
   * Cancels a job: a waiting one never runs; a running one has its handler's signal aborted
   * (reason "canceled") and is not retried. False when the job is unknown or already finished.
   */
  cancel(jobId: string): Promise<boolean>;
  /** Starts running jobs in this process. Call once per queue object. */
  process(handler: JobHandler<T>, options?: ProcessOptions<T>): Promise<void>;
  /** Stops taking jobs and releases the connections. */
  close(options?: CloseOptions): Promise<void>;
}

/** Options both implementations share. Times are milliseconds. */
export interface QueueOptions {
  name: string;
  /** How long a lease lasts without a heartbeat (default 30 s); heartbeats run every third of it. */
  leaseMs?: number;
  /** How often a worker looks for jobs and cancellations (default 500 ms). */
  pollMs?: number;
  /** First retry delay; doubles with each attempt (default 5 s). */
  backoffMs?: number;
  /** Longest retry delay (default 5 min). */
  maxBackoffMs?: number;
  /** Default starts before a job fails (default 5). */
  maxAttempts?: number;
  /** How long finished jobs are kept (default 7 days). */
  retentionMs?: number;
}

export const QUEUE_DEFAULTS = {
  leaseMs: 30_000,
  pollMs: 500,
  backoffMs: 5_000,
  maxBackoffMs: 5 * 60_000,
  maxAttempts: 5,
  retentionMs: 7 * 24 * 3600_000,
} as const;

export type ResolvedQueueOptions = Required<QueueOptions>;

export function resolveQueueOptions(options: QueueOptions): ResolvedQueueOptions {
  if (!/^[A-Za-z0-9_.-]{1,100}$/.test(options.name)) throw new Error(`invalid queue name: ${options.name}`);
  return {
    name: options.name,
    leaseMs: options.leaseMs ?? QUEUE_DEFAULTS.leaseMs,
    pollMs: options.pollMs ?? QUEUE_DEFAULTS.pollMs,
    backoffMs: options.backoffMs ?? QUEUE_DEFAULTS.backoffMs,
    maxBackoffMs: options.maxBackoffMs ?? QUEUE_DEFAULTS.maxBackoffMs,
    maxAttempts: options.maxAttempts ?? QUEUE_DEFAULTS.maxAttempts,
    retentionMs: options.retentionMs ?? QUEUE_DEFAULTS.retentionMs,
  };
}

/** The delay before start number `attempt + 1`, after `attempt` failed or crashed starts. */
export function backoffDelay(attempt: number, options: Pick<ResolvedQueueOptions, 'backoffMs' | 'maxBackoffMs'>) {
  return Math.min(options.backoffMs * 2 ** Math.max(0, attempt - 1), options.maxBackoffMs);
}

const JOB_ID_RE = /^[A-Za-z0-9_.-]{1,200}$/;
export function assertJobId(id: string): void {
  if (!JOB_ID_RE.test(id)) throw new Error(`invalid job id (letters, digits, - _ . only): ${id}`);
}

/** Thrown into a handler's signal reason so handlers can tell why they were stopped. */
export class JobAbortedError extends Error {
  readonly reason: AbortReason;
  constructor(reason: AbortReason) {
    super(`job aborted: ${reason}`);
    this.name = 'JobAbortedError';
    this.reason = reason;
  }
}

/** The reason a running job's signal was aborted with, if it was. */
export function abortReasonOf(signal: AbortSignal): AbortReason | undefined {
  if (!signal.aborted) return undefined;
  const r: unknown = signal.reason;
  return r instanceof JobAbortedError ? r.reason : 'canceled';
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

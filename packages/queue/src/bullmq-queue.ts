import { randomUUID } from 'node:crypto';
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import {
  abortReasonOf,
  assertJobId,
  backoffDelay,
  errorText,
  JobAbortedError,
  resolveQueueOptions,
  type AbortReason,
  type CloseOptions,
  type EnqueueOptions,
  type JobHandler,
  type JobInfo,
  type JobQueue,
  type JobState,
  type ProcessOptions,
  type QueueOptions,
  type ResolvedQueueOptions,
} from './types.ts';

export interface BullQueueOptions extends QueueOptions {
  redisUrl: string;
  /** Key prefix in Redis (default "skyferry"); tests use one per file. */
  prefix?: string;
  onError?: (err: unknown) => void;
}

interface Payload<T> {
  data: T;
  group: string | null;
}

interface Running {
  controller: AbortController;
  group: string | undefined;
}

/** Takes a slot of a group's semaphore (a sorted set of job ids scored by lease expiry). */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

/**
 * The job queue on Redis with BullMQ, for many machines. BullMQ gives leases (job locks renewed by
 * the worker), stalled-job recovery and delays; this class adds what the contract needs on top:
 * per-group limits (a Redis semaphore per group whose slots expire with the lease), cancellation
 * of a job running in another process (a cancel key each worker polls), a backoff after a crash,
 * and one attempt count across errors and crashes.
 */
export class BullJobQueue<T> implements JobQueue<T> {
  readonly name: string;
  private readonly o: ResolvedQueueOptions;
  private readonly url: string;
  private readonly prefix: string;
  private readonly ext: string;
  private readonly onError: (err: unknown) => void;
  private readonly redis: Redis;
  private readonly queue: Queue<Payload<T>>;
  private worker: Worker<Payload<T>> | undefined;
  private handler: JobHandler<T> | undefined;
  private popts: ProcessOptions<T> = {};
  private readonly running = new Map<string, Running>();
  private watchTimer: NodeJS.Timeout | undefined;
  private lastHeartbeat = 0;
  private closed = false;
  private crashed = false;

  constructor(options: BullQueueOptions) {
    this.o = resolveQueueOptions(options);
    this.name = this.o.name;
    this.url = options.redisUrl;
    this.prefix = options.prefix ?? 'skyferry';
    this.ext = `${this.prefix}-ext:${this.name}`;
    this.onError = options.onError ?? ((err) => console.warn(`queue ${this.name}:`, err));
    this.redis = new Redis(this.url, { maxRetriesPerRequest: null });
    this.redis.on('error', (err) => this.onError(err));
    this.queue = new Queue<Payload<T>>(this.name, { connection: this.redis, prefix: this.prefix });
    this.queue.on('error', (err) => this.onError(err));
  }

  private cancelKey(id: string) {
    return `${this.ext}:cancel:${id}`;
  }
  private get startsKey() {
    return `${this.ext}:starts`;
  }
  private get stallsKey() {
    return `${this.ext}:stalls`;
  }
  private groupKey(group: string) {
    return `${this.ext}:group:${group}`;
  }

  async enqueue(data: T, options: EnqueueOptions = {}): Promise<string> {
    const id = options.jobId ?? randomUUID();
    assertJobId(id);
    // A cancelled job was removed from BullMQ; its id stays used while the cancel record lasts.
    if (options.jobId && (await this.redis.exists(this.cancelKey(id)))) return id;
    const now = Date.now();
    const keep = { age: Math.ceil(this.o.retentionMs / 1000) };
    await this.queue.add(
      'job',
      { data, group: options.group ?? null },
      {
        jobId: id,
        delay: Math.max(0, Math.round((options.runAt ?? now) - now)),
        attempts: options.maxAttempts ?? this.o.maxAttempts,
        backoff: { type: 'skyferry' },
        removeOnComplete: keep,
        removeOnFail: keep,
      },
    );
    return id;
  }

  async get(jobId: string): Promise<JobInfo<T> | undefined> {
    const [job, cancelled, starts] = await Promise.all([
      this.queue.getJob(jobId),
      this.redis.get(this.cancelKey(jobId)),
      this.redis.hget(this.startsKey, jobId),
    ]);
    const attempts = Number(starts ?? 0);
    if (!job) {
      if (!cancelled) return undefined;
      const saved = JSON.parse(cancelled) as Payload<T>;
      return {
        id: jobId,
        data: saved.data,
        state: 'canceled',
        attempts,
        group: saved.group ?? undefined,
        error: undefined,
      };
    }
    const raw = await job.getState();
    let state: JobState;
    if (raw === 'completed') state = cancelled ? 'canceled' : 'completed';
    else if (raw === 'failed') state = 'failed';
    else if (raw === 'active') state = 'active';
    else if (raw === 'delayed') state = 'delayed';
    else state = 'waiting';
    return {
      id: jobId,
      data: job.data.data,
      state,
      attempts,
      group: job.data.group ?? undefined,
      error: job.failedReason || undefined,
    };
  }

  async cancel(jobId: string): Promise<boolean> {
    const job = await this.queue.getJob(jobId);
    if (!job) return false;
    const state = await job.getState();
    if (state === 'completed' || state === 'failed' || state === 'unknown') return false;
    const record = JSON.stringify({ data: job.data.data, group: job.data.group });
    await this.redis.set(this.cancelKey(jobId), record, 'PX', this.o.retentionMs);
    if (state !== 'active') {
      try {
        await job.remove();
        return true;
      } catch {
        // It became active meanwhile (locked): its worker sees the cancel key.
      }
    }
    this.abort(jobId, 'canceled');
    return true;
  }

  async process(handler: JobHandler<T>, options: ProcessOptions<T> = {}): Promise<void> {
    if (this.handler) throw new Error(`queue ${this.name} is already processing`);
    if (this.closed) throw new Error(`queue ${this.name} is closed`);
    this.handler = handler;
    this.popts = options;
    if (options.globalConcurrency !== undefined) await this.queue.setGlobalConcurrency(options.globalConcurrency);
    const connection = new Redis(this.url, { maxRetriesPerRequest: null });
    connection.on('error', (err) => this.onError(err));
    const worker = new Worker<Payload<T>>(this.name, (job, token) => this.run(job, token), {
      connection,
      prefix: this.prefix,
      concurrency: Math.max(1, options.concurrency ?? 1),
      lockDuration: this.o.leaseMs,
      stalledInterval: Math.max(100, Math.floor(this.o.leaseMs / 2)),
      maxStalledCount: this.o.maxAttempts + 1,
      drainDelay: Math.max(1, Math.ceil(this.o.pollMs / 1000)),
      settings: {
        backoffStrategy: (attemptsMade: number) => backoffDelay(attemptsMade, this.o),
      },
    });
    worker.on('error', (err) => {
      if (!this.closed) this.onError(err);
    });
    worker.on('lockRenewalFailed', (ids) => {
      for (const id of ids) this.abort(id, 'lease_lost');
    });
    worker.on('failed', (job, err) => {
      if (job) void this.afterFailure(job, err);
    });
    this.worker = worker;
    this.watch();
  }

  async close(options: CloseOptions = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    if (options.abortRunning ?? true) for (const id of this.running.keys()) this.abort(id, 'shutdown');
    if (this.worker) {
      const worker = this.worker;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs ?? 10_000)),
      );
      const result = await Promise.race([worker.close(), timeout]);
      if (timer) clearTimeout(timer);
      if (result === 'timeout') await worker.close(true);
      await worker.disconnect().catch(() => undefined);
    }
    await this.queue.close();
    this.redis.disconnect();
  }

  /** For tests: stops like a process that died; leases are left to expire. */
  async crash(): Promise<void> {
    this.crashed = true;
    this.closed = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    for (const id of this.running.keys()) this.abort(id, 'crash');
    if (this.worker) {
      await this.worker.close(true);
      await this.worker.disconnect().catch(() => undefined);
    }
    await this.queue.close();
    this.redis.disconnect();
  }

  private abort(jobId: string, reason: AbortReason): void {
    const r = this.running.get(jobId);
    if (r && !r.controller.signal.aborted) r.controller.abort(new JobAbortedError(reason));
  }

  /** Polls cancel keys of this process's jobs and renews their group slots. */
  private watch(): void {
    if (this.closed) return;
    const every = Math.max(10, Math.min(this.o.pollMs, Math.floor(this.o.leaseMs / 3)));
    this.watchTimer = setTimeout(() => {
      void this.watchOnce()
        .catch((err: unknown) => {
          if (!this.closed) this.onError(err);
        })
        .finally(() => this.watch());
    }, every);
  }

  private async watchOnce(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length === 0) return;
    const flags = await this.redis.mget(ids.map((id) => this.cancelKey(id)));
    ids.forEach((id, i) => {
      if (flags[i]) this.abort(id, 'canceled');
    });
    const now = Date.now();
    if (now - this.lastHeartbeat >= this.o.leaseMs / 3) {
      this.lastHeartbeat = now;
      const pipeline = this.redis.pipeline();
      for (const [id, r] of this.running) {
        if (r.group !== undefined) pipeline.zadd(this.groupKey(r.group), 'XX', now + this.o.leaseMs, id);
      }
      await pipeline.exec();
    }
  }

  private async acquireGroup(group: string, jobId: string, limit: number): Promise<boolean> {
    const now = Date.now();
    const got = await this.redis.eval(
      ACQUIRE,
      1,
      this.groupKey(group),
      jobId,
      String(now),
      String(now + this.o.leaseMs),
      String(limit),
      String(this.o.leaseMs * 10),
    );
    return Number(got) === 1;
  }

  private async run(job: Job<Payload<T>>, token: string | undefined): Promise<void> {
    const handler = this.handler;
    const id = job.id;
    if (!handler || !id) throw new Error('no handler');
    if (this.closed) {
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (await this.redis.exists(this.cancelKey(id))) return;
    // A crashed start (a stalled job BullMQ put back) waits its backoff before running again.
    const handled = Number((await this.redis.hget(this.stallsKey, id)) ?? 0);
    if (job.stalledCounter > handled) {
      await this.redis.hset(this.stallsKey, id, String(job.stalledCounter));
      const starts = Number((await this.redis.hget(this.startsKey, id)) ?? 0);
      await job.moveToDelayed(Date.now() + backoffDelay(Math.max(1, starts), this.o), token);
      throw new DelayedError();
    }
    const group = job.data.group ?? undefined;
    const limit = this.popts.groupConcurrency;
    if (group !== undefined && limit !== undefined && !(await this.acquireGroup(group, id, limit))) {
      await job.moveToDelayed(Date.now() + Math.max(20, this.o.pollMs), token);
      throw new DelayedError();
    }
    const release = async () => {
      if (group !== undefined && limit !== undefined) await this.redis.zrem(this.groupKey(group), id);
    };
    const attempt = await this.redis.hincrby(this.startsKey, id, 1);
    const maxAttempts = job.opts.attempts ?? this.o.maxAttempts;
    if (attempt > maxAttempts) {
      await release();
      throw new UnrecoverableError(job.failedReason || 'the worker running the job stopped');
    }
    const controller = new AbortController();
    this.running.set(id, { controller, group });
    let ok = false;
    let failure: unknown;
    try {
      await handler({ id, data: job.data.data, attempt, group, signal: controller.signal });
      ok = true;
    } catch (err) {
      failure = err;
    } finally {
      this.running.delete(id);
    }
    // A crashed process never reports back: BullMQ's stalled check hands the job to another worker.
    if (this.crashed) return new Promise<void>(() => undefined);
    await release();
    const reason = abortReasonOf(controller.signal);
    if (reason === 'canceled' || ok) return;
    if (reason === 'shutdown') {
      await this.redis.hincrby(this.startsKey, id, -1);
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (attempt >= maxAttempts) throw new UnrecoverableError(errorText(failure));
    throw failure instanceof Error ? failure : new Error(errorText(failure));
  }

  private async afterFailure(job: Job<Payload<T>>, err: Error): Promise<void> {
    try {
      if (err instanceof DelayedError || err.name === 'DelayedError') return;
      if ((await job.getState()) !== 'failed') return;
      const info = await this.get(job.id ?? '');
      if (info) await this.popts.onFailed?.(info, err.message);
    } catch (e) {
      this.onError(e);
    }
  }
}

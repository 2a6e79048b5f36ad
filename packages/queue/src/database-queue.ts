import { randomUUID } from 'node:crypto';
import { sql, type Db, type Kysely, type Database } from '@skyferry/db';
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

export interface DatabaseQueueOptions extends QueueOptions {
  /** Where background errors (a lost database connection) are reported; console.warn by default. */
  onError?: (err: unknown) => void;
}

interface JobRow {
  id: string;
  data: string;
  grp: string | null;
  state: string;
  run_at: number;
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  cancel_requested: number;
  error: string | null;
}

interface Running {
  id: string;
  token: string;
  group: string | undefined;
  controller: AbortController;
  /** Another worker owns the job now (lease expired); this one must not write its outcome. */
  lost: boolean;
  done: Promise<void>;
}

const NO_LIMIT = 2_147_483_647;

/**
 * The durable queue: jobs are rows of the `jobs` table, claimed atomically by one worker at a time
 * (a single UPDATE ... WHERE id = (SELECT ...) statement; on PostgreSQL under a per-queue advisory
 * lock, with FOR UPDATE SKIP LOCKED), leased and renewed by heartbeats. Any number of processes may
 * share one database; SQLite serialises their writes, PostgreSQL their claims.
 */
export class DatabaseJobQueue<T> implements JobQueue<T> {
  readonly name: string;
  private readonly db: Db;
  private readonly kysely: Kysely<Database>;
  private readonly o: ResolvedQueueOptions;
  private readonly onError: (err: unknown) => void;
  private readonly workerId = randomUUID().slice(0, 8);
  private handler: JobHandler<T> | undefined;
  private popts: ProcessOptions<T> = {};
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private closed = false;
  private crashed = false;
  private lastHeartbeat = 0;
  private lastPrune = 0;

  constructor(db: Db, options: DatabaseQueueOptions) {
    this.o = resolveQueueOptions(options);
    this.name = this.o.name;
    this.db = db;
    this.kysely = db.kysely;
    this.onError = options.onError ?? ((err) => console.warn(`queue ${this.name}:`, err));
  }

  async enqueue(data: T, options: EnqueueOptions = {}): Promise<string> {
    const id = options.jobId ?? randomUUID();
    assertJobId(id);
    const now = Date.now();
    await this.kysely
      .insertInto('jobs')
      .values({
        queue: this.name,
        id,
        data: JSON.stringify(data),
        grp: options.group ?? null,
        state: 'waiting',
        run_at: Math.max(0, Math.round(options.runAt ?? now)),
        attempts: 0,
        max_attempts: options.maxAttempts ?? this.o.maxAttempts,
        lease_owner: null,
        lease_expires_at: null,
        cancel_requested: 0,
        error: null,
        created_at: now,
        started_at: null,
        finished_at: null,
      })
      .onConflict((oc) => oc.columns(['queue', 'id']).doNothing())
      .execute();
    this.poke();
    return id;
  }

  async get(jobId: string): Promise<JobInfo<T> | undefined> {
    const row = await this.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('queue', '=', this.name)
      .where('id', '=', jobId)
      .executeTakeFirst();
    if (!row) return undefined;
    return this.info(row);
  }

  async cancel(jobId: string): Promise<boolean> {
    const now = Date.now();
    const waiting = await this.kysely
      .updateTable('jobs')
      .set({ state: 'canceled', finished_at: now, cancel_requested: 1 })
      .where('queue', '=', this.name)
      .where('id', '=', jobId)
      .where('state', '=', 'waiting')
      .executeTakeFirst();
    if (Number(waiting.numUpdatedRows) > 0) return true;
    const active = await this.kysely
      .updateTable('jobs')
      .set({ cancel_requested: 1 })
      .where('queue', '=', this.name)
      .where('id', '=', jobId)
      .where('state', '=', 'active')
      .executeTakeFirst();
    if (Number(active.numUpdatedRows) === 0) return false;
    this.abort(jobId, 'canceled');
    return true;
  }

  async process(handler: JobHandler<T>, options: ProcessOptions<T> = {}): Promise<void> {
    if (this.handler) throw new Error(`queue ${this.name} is already processing`);
    if (this.closed) throw new Error(`queue ${this.name} is closed`);
    this.handler = handler;
    this.popts = options;
    this.poke();
  }

  async close(options: CloseOptions = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (options.abortRunning ?? true) for (const id of this.running.keys()) this.abort(id, 'shutdown');
    await this.settle(options.timeoutMs ?? 10_000);
  }

  /**
   * For tests: stops like a process that died. No lease is released and no outcome written; running
   * handlers get their signal aborted (reason "crash") so they stop touching shared state.
   */
  async crash(): Promise<void> {
    this.crashed = true;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const id of this.running.keys()) this.abort(id, 'crash');
    await this.settle(5_000);
  }

  private async settle(timeoutMs: number): Promise<void> {
    const all = Promise.allSettled([...this.running.values()].map((r) => r.done));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    if (timer) clearTimeout(timer);
  }

  private info(row: JobRow): JobInfo<T> {
    let state = row.state as JobState;
    if (state === 'waiting' && row.run_at > Date.now()) state = 'delayed';
    return {
      id: row.id,
      data: JSON.parse(row.data) as T,
      state,
      attempts: row.attempts,
      group: row.grp ?? undefined,
      error: row.error ?? undefined,
    };
  }

  private abort(jobId: string, reason: AbortReason): void {
    const r = this.running.get(jobId);
    if (r && !r.controller.signal.aborted) r.controller.abort(new JobAbortedError(reason));
  }

  /** Runs a tick soon (after an enqueue here, or a handler finishing). */
  private poke(): void {
    if (!this.handler || this.closed) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), 0);
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    const every = Math.max(10, Math.min(this.o.pollMs, Math.floor(this.o.leaseMs / 3)));
    this.timer = setTimeout(() => void this.tick(), every);
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      do {
        this.again = false;
        const now = Date.now();
        await this.reap(now);
        if (this.running.size > 0) await this.watchRunning(now);
        const concurrency = Math.max(1, this.popts.concurrency ?? 1);
        while (!this.closed && this.running.size < concurrency) {
          const row = await this.claim();
          if (!row) break;
          this.start(row);
        }
        if (now - this.lastPrune > 60_000) {
          this.lastPrune = now;
          await this.prune(now);
        }
      } while (this.again && !this.closed);
    } catch (err) {
      if (!this.closed) this.onError(err);
    } finally {
      this.ticking = false;
      this.schedule();
    }
  }

  /** Jobs whose worker stopped renewing its lease go back to waiting (after a backoff), or fail. */
  private async reap(now: number): Promise<void> {
    const expired = await this.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('queue', '=', this.name)
      .where('state', '=', 'active')
      .where('lease_expires_at', '<', now)
      .limit(100)
      .execute();
    for (const row of expired) {
      const exhausted = row.attempts >= row.max_attempts;
      const state = row.cancel_requested ? 'canceled' : exhausted ? 'failed' : 'waiting';
      const error = 'the worker running the job stopped';
      const res = await this.kysely
        .updateTable('jobs')
        .set({
          state,
          lease_owner: null,
          lease_expires_at: null,
          error,
          run_at: state === 'waiting' ? now + backoffDelay(row.attempts, this.o) : row.run_at,
          finished_at: state === 'waiting' ? null : now,
        })
        .where('queue', '=', this.name)
        .where('id', '=', row.id)
        .where('state', '=', 'active')
        .where('lease_owner', '=', row.lease_owner)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) > 0 && state === 'failed') {
        await this.notifyFailed({ ...row, state: 'failed', error }, error);
      }
    }
  }

  /** Renews the leases of this process's jobs and delivers cancellations and lost leases. */
  private async watchRunning(now: number): Promise<void> {
    const mine = [...this.running.values()].filter((r) => !r.lost);
    if (mine.length === 0) return;
    const tokens = mine.map((r) => r.token);
    let rows: Array<{ lease_owner: string | null; cancel_requested: number }>;
    if (now - this.lastHeartbeat >= this.o.leaseMs / 3) {
      this.lastHeartbeat = now;
      rows = await this.kysely
        .updateTable('jobs')
        .set({ lease_expires_at: now + this.o.leaseMs })
        .where('queue', '=', this.name)
        .where('state', '=', 'active')
        .where('lease_owner', 'in', tokens)
        .returning(['lease_owner', 'cancel_requested'])
        .execute();
    } else {
      rows = await this.kysely
        .selectFrom('jobs')
        .select(['lease_owner', 'cancel_requested'])
        .where('queue', '=', this.name)
        .where('state', '=', 'active')
        .where('lease_owner', 'in', tokens)
        .execute();
    }
    const byToken = new Map(rows.map((r) => [r.lease_owner, r]));
    for (const r of mine) {
      const row = byToken.get(r.token);
      if (!row) {
        r.lost = true;
        this.abort(r.id, 'lease_lost');
      } else if (row.cancel_requested) {
        this.abort(r.id, 'canceled');
      }
    }
  }

  private async claim(): Promise<JobRow | undefined> {
    const now = Date.now();
    const token = `${this.workerId}.${randomUUID()}`;
    const groupLimit = this.popts.groupConcurrency ?? NO_LIMIT;
    const globalLimit = this.popts.globalConcurrency ?? NO_LIMIT;
    const pg = this.db.dialect === 'postgres';
    const statement = sql<JobRow>`
      update jobs set state = 'active', lease_owner = ${token}, lease_expires_at = ${now + this.o.leaseMs},
        attempts = attempts + 1, started_at = ${now}
      where queue = ${this.name} and id = (
        select j.id from jobs j
        where j.queue = ${this.name} and j.state = 'waiting' and j.run_at <= ${now}
          and (j.grp is null or (
            select count(*) from jobs a where a.queue = ${this.name} and a.state = 'active' and a.grp = j.grp
          ) < ${groupLimit})
        order by j.run_at, j.created_at, j.id
        limit 1
        ${pg ? sql`for update skip locked` : sql``}
      )
      and (select count(*) from jobs g where g.queue = ${this.name} and g.state = 'active') < ${globalLimit}
      returning id, data, grp, state, run_at, attempts, max_attempts, lease_owner, cancel_requested, error`;
    if (!pg) return (await statement.execute(this.kysely)).rows[0];
    // The advisory lock makes the limit counts exact: claims of one queue happen one after another.
    return this.kysely.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`skyferry-queue:${this.name}`}))`.execute(trx);
      return (await statement.execute(trx)).rows[0];
    });
  }

  private start(row: JobRow): void {
    const handler = this.handler;
    if (!handler || !row.lease_owner) return;
    const controller = new AbortController();
    const r: Running = {
      id: row.id,
      token: row.lease_owner,
      group: row.grp ?? undefined,
      controller,
      lost: false,
      done: Promise.resolve(),
    };
    this.running.set(row.id, r);
    const job = {
      id: row.id,
      data: JSON.parse(row.data) as T,
      attempt: row.attempts,
      group: row.grp ?? undefined,
      signal: controller.signal,
    };
    r.done = (async () => {
      let failure: unknown;
      let ok = false;
      try {
        await handler(job);
        ok = true;
      } catch (err) {
        failure = err;
      }
      if (this.crashed || r.lost) return;
      const reason = abortReasonOf(controller.signal);
      if (reason === 'canceled') await this.finish(r, 'canceled', null);
      else if (ok) await this.finish(r, 'completed', null);
      else if (reason === 'shutdown') await this.release(r);
      else await this.failOrRetry(r, row, errorText(failure));
    })()
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.running.delete(row.id);
        this.poke();
      });
  }

  private async finish(r: Running, state: 'completed' | 'canceled' | 'failed', error: string | null) {
    await this.kysely
      .updateTable('jobs')
      .set({ state, error, finished_at: Date.now(), lease_owner: null, lease_expires_at: null })
      .where('queue', '=', this.name)
      .where('id', '=', r.id)
      .where('lease_owner', '=', r.token)
      .where('state', '=', 'active')
      .execute();
  }

  /** Puts a job stopped by a shutdown back at the head of the queue; the interrupted start does not count. */
  private async release(r: Running): Promise<void> {
    await this.kysely
      .updateTable('jobs')
      .set((eb) => ({
        state: 'waiting',
        run_at: Date.now(),
        attempts: eb('attempts', '-', 1),
        lease_owner: null,
        lease_expires_at: null,
      }))
      .where('queue', '=', this.name)
      .where('id', '=', r.id)
      .where('lease_owner', '=', r.token)
      .where('state', '=', 'active')
      .execute();
  }

  private async failOrRetry(r: Running, row: JobRow, error: string): Promise<void> {
    const now = Date.now();
    if (row.attempts >= row.max_attempts) {
      const res = await this.kysely
        .updateTable('jobs')
        .set({ state: 'failed', error, finished_at: now, lease_owner: null, lease_expires_at: null })
        .where('queue', '=', this.name)
        .where('id', '=', r.id)
        .where('lease_owner', '=', r.token)
        .where('state', '=', 'active')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) > 0) await this.notifyFailed({ ...row, state: 'failed', error }, error);
      return;
    }
    await this.kysely
      .updateTable('jobs')
      .set({
        state: 'waiting',
        error,
        run_at: now + backoffDelay(row.attempts, this.o),
        lease_owner: null,
        lease_expires_at: null,
      })
      .where('queue', '=', this.name)
      .where('id', '=', r.id)
      .where('lease_owner', '=', r.token)
      .where('state', '=', 'active')
      .execute();
  }

  private async notifyFailed(row: JobRow, error: string): Promise<void> {
    try {
      await this.popts.onFailed?.(this.info(row), error);
    } catch (err) {
      this.onError(err);
    }
  }

  private async prune(now: number): Promise<void> {
    await this.kysely
      .deleteFrom('jobs')
      .where('queue', '=', this.name)
      .where('state', 'in', ['completed', 'failed', 'canceled'])
      .where('finished_at', '<', now - this.o.retentionMs)
      .execute();
  }
}

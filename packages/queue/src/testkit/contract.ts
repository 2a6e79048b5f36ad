import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { abortReasonOf, type JobQueue, type QueueOptions, type RunningJob } from '../types.ts';

/** A queue object of one implementation, as a separate process would hold it. */
export type TestQueue<T> = JobQueue<T> & {
  /** Stops like a process killed with SIGKILL: leases are left to expire. */
  crash(): Promise<void>;
};

export interface QueueHarness {
  /** A new, independent queue object (its own connections) on the shared store. */
  create<T>(options: QueueOptions): TestQueue<T>;
}

/** Lease and timing settings short enough for tests. */
export const FAST = { leaseMs: 1_000, pollMs: 25, backoffMs: 150, maxBackoffMs: 2_000 } as const;

async function waitUntil(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Records each handler run, and how many ran at once (overall and per group). */
class Recorder {
  runs: Array<{ id: string; worker: string; attempt: number; start: number; end?: number; data: unknown }> = [];
  active = 0;
  maxActive = 0;
  private readonly groupActive = new Map<string, number>();
  readonly groupMax = new Map<string, number>();
  private readonly jobActive = new Map<string, number>();
  /** A job running twice at the same moment: must stay 0. */
  overlaps = 0;

  enter(job: RunningJob<unknown>, worker: string) {
    const run: (typeof this.runs)[number] = {
      id: job.id,
      worker,
      attempt: job.attempt,
      start: Date.now(),
      data: job.data as unknown,
    };
    this.runs.push(run);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    if (job.group !== undefined) {
      const n = (this.groupActive.get(job.group) ?? 0) + 1;
      this.groupActive.set(job.group, n);
      this.groupMax.set(job.group, Math.max(this.groupMax.get(job.group) ?? 0, n));
    }
    const same = (this.jobActive.get(job.id) ?? 0) + 1;
    if (same > 1) this.overlaps += 1;
    this.jobActive.set(job.id, same);
    return () => {
      run.end = Date.now();
      this.active -= 1;
      if (job.group !== undefined) this.groupActive.set(job.group, (this.groupActive.get(job.group) ?? 1) - 1);
      this.jobActive.set(job.id, (this.jobActive.get(job.id) ?? 1) - 1);
    };
  }

  runsOf(id: string) {
    return this.runs.filter((r) => r.id === id);
  }
}

/** Waits `ms`, or until the signal aborts (then throws its reason). */
function work(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

/**
 * The one suite every JobQueue implementation passes. `setup` runs in the describe block and
 * returns a harness getter (set up in the caller's beforeAll).
 */
export function jobQueueContract(label: string, harness: () => QueueHarness): void {
  describe(`JobQueue contract [${label}]`, () => {
    const open: Array<TestQueue<unknown>> = [];
    const make = <T>(extra: Partial<QueueOptions> & { name: string }): TestQueue<T> => {
      const q = harness().create<T>({ ...FAST, ...extra });
      open.push(q as TestQueue<unknown>);
      return q;
    };
    const qname = () => `q-${randomUUID().slice(0, 8)}`;

    afterEach(async () => {
      await Promise.all(open.splice(0).map((q) => q.close({ timeoutMs: 2_000 }).catch(() => undefined)));
    });

    it('runs a job with its data once and reports it completed', async () => {
      const q = make<{ n: number }>({ name: qname() });
      const seen: Array<{ n: number }> = [];
      await q.process(async (job) => {
        seen.push(job.data);
      });
      const id = await q.enqueue({ n: 1 }, { jobId: 'first-job' });
      expect(id).toBe('first-job');
      await waitUntil(async () => (await q.get(id))?.state === 'completed', 'completion');
      expect(seen).toEqual([{ n: 1 }]);
      expect(await q.get(id)).toMatchObject({ id, state: 'completed', attempts: 1, data: { n: 1 } });
      expect(await q.get('never-added')).toBeUndefined();
    });

    it('does not start a job before its run-at time', async () => {
      const q = make<string>({ name: qname() });
      let startedAt = 0;
      await q.process(async () => {
        startedAt = Date.now();
      });
      const runAt = Date.now() + 600;
      const id = await q.enqueue('later', { runAt });
      await sleep(150);
      expect((await q.get(id))?.state).toBe('delayed');
      await waitUntil(() => startedAt > 0, 'the delayed job');
      expect(startedAt).toBeGreaterThanOrEqual(runAt - 5);
    });

    it('uses a job id once: enqueueing it again adds nothing, even after the job finished', async () => {
      const name = qname();
      const q = make<string>({ name });
      const other = make<string>({ name });
      const rec = new Recorder();
      await q.process(async (job) => {
        rec.enter(job, 'a')();
      });
      const ids = await Promise.all([
        q.enqueue('one', { jobId: 'same' }),
        other.enqueue('two', { jobId: 'same' }),
        q.enqueue('three', { jobId: 'same' }),
      ]);
      expect(ids).toEqual(['same', 'same', 'same']);
      await waitUntil(async () => (await q.get('same'))?.state === 'completed', 'completion');
      await q.enqueue('four', { jobId: 'same' });
      await sleep(300);
      expect(rec.runs).toHaveLength(1);
    });

    it('keeps jobs across a restart: a worker started later runs what was queued before', async () => {
      const name = qname();
      const producer = make<number>({ name });
      for (const n of [1, 2, 3]) await producer.enqueue(n, { jobId: `job-${n}` });
      await producer.close();
      const worker = make<number>({ name });
      const seen: number[] = [];
      await worker.process(async (job) => {
        seen.push(job.data);
      });
      await waitUntil(() => seen.length === 3, 'three jobs');
      expect(seen.sort()).toEqual([1, 2, 3]);
    });

    it('runs at most `concurrency` jobs at once in one process', async () => {
      const q = make<number>({ name: qname() });
      const rec = new Recorder();
      await q.process(
        async (job) => {
          const leave = rec.enter(job, 'a');
          await sleep(150);
          leave();
        },
        { concurrency: 3 },
      );
      for (let i = 0; i < 7; i++) await q.enqueue(i);
      await waitUntil(() => rec.runs.length === 7 && rec.active === 0, 'seven jobs');
      expect(rec.maxActive).toBe(3);
    });

    it('holds the per-group limit across processes', async () => {
      const name = qname();
      const a = make<string>({ name });
      const b = make<string>({ name });
      const rec = new Recorder();
      const handler = (worker: string) => async (job: RunningJob<string>) => {
        const leave = rec.enter(job, worker);
        await sleep(120);
        leave();
      };
      for (let i = 0; i < 4; i++) await a.enqueue(`alice-${i}`, { group: 'alice' });
      for (let i = 0; i < 3; i++) await a.enqueue(`bob-${i}`, { group: 'bob' });
      await a.process(handler('a'), { concurrency: 3, groupConcurrency: 1 });
      await b.process(handler('b'), { concurrency: 3, groupConcurrency: 1 });
      await waitUntil(() => rec.runs.length === 7 && rec.active === 0, 'seven jobs', 15_000);
      expect(rec.groupMax.get('alice')).toBe(1);
      expect(rec.groupMax.get('bob')).toBe(1);
      // The limit is per group: the two users' jobs did run side by side.
      expect(rec.maxActive).toBe(2);
    });

    it('holds the global limit across processes', async () => {
      const name = qname();
      const a = make<number>({ name });
      const b = make<number>({ name });
      const rec = new Recorder();
      const handler = (worker: string) => async (job: RunningJob<number>) => {
        const leave = rec.enter(job, worker);
        await sleep(120);
        leave();
      };
      await a.process(handler('a'), { concurrency: 3, globalConcurrency: 2 });
      await b.process(handler('b'), { concurrency: 3, globalConcurrency: 2 });
      for (let i = 0; i < 8; i++) await a.enqueue(i, { group: `user-${i}` });
      await waitUntil(() => rec.runs.length === 8 && rec.active === 0, 'eight jobs', 15_000);
      expect(rec.maxActive).toBe(2);
    });

    it('cancels a waiting job: it never runs', async () => {
      const q = make<string>({ name: qname() });
      const seen: string[] = [];
      const id = await q.enqueue('doomed', { runAt: Date.now() + 300 });
      expect(await q.cancel(id)).toBe(true);
      expect((await q.get(id))?.state).toBe('canceled');
      await q.process(async (job) => {
        seen.push(job.data);
      });
      await q.enqueue('kept', { runAt: Date.now() + 300 });
      await waitUntil(() => seen.length === 1, 'the other job');
      await sleep(200);
      expect(seen).toEqual(['kept']);
      expect(await q.cancel(id)).toBe(false);
      expect(await q.cancel('unknown-job')).toBe(false);
    });

    it('cancels a running job from another process: its handler is signalled and it is not retried', async () => {
      const name = qname();
      const worker = make<string>({ name });
      const api = make<string>({ name });
      const rec = new Recorder();
      let reason: string | undefined;
      await worker.process(async (job) => {
        const leave = rec.enter(job, 'w');
        try {
          await work(8_000, job.signal);
        } finally {
          reason = abortReasonOf(job.signal);
          leave();
        }
      });
      const id = await api.enqueue('long');
      await waitUntil(() => rec.active === 1, 'the job to start');
      const asked = Date.now();
      expect(await api.cancel(id)).toBe(true);
      await waitUntil(() => rec.active === 0, 'the handler to stop', 5_000);
      // Delivered within a few polls (25 ms here), even on a busy machine.
      expect(Date.now() - asked).toBeLessThan(3_000);
      expect(reason).toBe('canceled');
      await waitUntil(async () => (await api.get(id))?.state === 'canceled', 'state canceled');
      await sleep(FAST.backoffMs * 3);
      expect(rec.runsOf(id)).toHaveLength(1);
    });

    it('retries a failing job with growing backoff, then fails it and reports it once', async () => {
      const q = make<string>({ name: qname() });
      const starts: number[] = [];
      const failed: Array<{ id: string; error: string }> = [];
      await q.process(
        async () => {
          starts.push(Date.now());
          throw new Error(`boom ${starts.length}`);
        },
        { onFailed: (job, error) => void failed.push({ id: job.id, error }) },
      );
      const id = await q.enqueue('bad', { maxAttempts: 3 });
      await waitUntil(async () => (await q.get(id))?.state === 'failed', 'failure');
      await waitUntil(() => failed.length === 1, 'the failure report');
      expect(starts).toHaveLength(3);
      expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(FAST.backoffMs - 10);
      expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(FAST.backoffMs * 2 - 10);
      expect(failed[0]).toEqual({ id, error: 'boom 3' });
      expect(await q.get(id)).toMatchObject({ state: 'failed', attempts: 3 });
      await sleep(300);
      expect(starts).toHaveLength(3);
    });

    it('completes a job that fails once and then succeeds, on its second attempt', async () => {
      const q = make<string>({ name: qname() });
      const attempts: number[] = [];
      await q.process(async (job) => {
        attempts.push(job.attempt);
        if (job.attempt === 1) throw new Error('transient');
      });
      const id = await q.enqueue('flaky');
      await waitUntil(async () => (await q.get(id))?.state === 'completed', 'completion');
      expect(attempts).toEqual([1, 2]);
    });

    it('resumes the job of a worker that died, after its lease expired, never running it twice at once', async () => {
      const name = qname();
      const doomed = make<string>({ name });
      const survivor = make<string>({ name });
      const rec = new Recorder();
      const handler = (worker: string) => async (job: RunningJob<string>) => {
        const leave = rec.enter(job, worker);
        try {
          await work(worker === 'doomed' ? 20_000 : 50, job.signal);
        } finally {
          leave();
        }
      };
      await doomed.process(handler('doomed'));
      const id = await doomed.enqueue('precious');
      await waitUntil(() => rec.active === 1, 'the first start');
      await survivor.process(handler('survivor'));
      const died = Date.now();
      await doomed.crash();
      await waitUntil(async () => (await survivor.get(id))?.state === 'completed', 'resumption', 15_000);
      const runs = rec.runsOf(id);
      expect(runs.map((r) => [r.worker, r.attempt])).toEqual([
        ['doomed', 1],
        ['survivor', 2],
      ]);
      // The survivor waited for the lease to run out (and a backoff) before taking the job.
      expect(runs[1]!.start - died).toBeGreaterThanOrEqual(FAST.leaseMs * 0.8);
      expect(rec.overlaps).toBe(0);
    });

    it('keeps the lease with heartbeats: a job longer than the lease is not taken by another worker', async () => {
      const name = qname();
      const a = make<string>({ name });
      const b = make<string>({ name });
      const rec = new Recorder();
      const handler = (worker: string) => async (job: RunningJob<string>) => {
        const leave = rec.enter(job, worker);
        try {
          await work(FAST.leaseMs * 2.5, job.signal);
        } finally {
          leave();
        }
      };
      await a.process(handler('a'));
      await b.process(handler('b'));
      const id = await a.enqueue('slow');
      await waitUntil(async () => (await a.get(id))?.state === 'completed', 'completion', 10_000);
      expect(rec.runsOf(id)).toHaveLength(1);
      expect(rec.overlaps).toBe(0);
    });

    it('on close, puts a running job back for another worker, or waits for it when asked to', async () => {
      const name = qname();
      const first = make<string>({ name });
      const second = make<string>({ name });
      const rec = new Recorder();
      const reasons: Array<string | undefined> = [];
      const handler = (worker: string) => async (job: RunningJob<string>) => {
        const leave = rec.enter(job, worker);
        try {
          await work(worker === 'first' ? 20_000 : 300, job.signal);
        } finally {
          reasons.push(abortReasonOf(job.signal));
          leave();
        }
      };
      await first.process(handler('first'));
      const id = await first.enqueue('interrupted');
      await waitUntil(() => rec.active === 1, 'the first start');
      await first.close();
      expect(reasons).toEqual(['shutdown']);
      // A closed queue takes nothing more.
      await second.enqueue('after-close', { jobId: 'after-close' });
      await sleep(200);
      expect(rec.runsOf('after-close')).toHaveLength(0);
      await second.process(handler('second'));
      await waitUntil(async () => (await second.get(id))?.state === 'completed', 'resumption', 5_000);
      expect(rec.runsOf(id).map((r) => [r.worker, r.attempt])).toEqual([
        ['first', 1],
        ['second', 1],
      ]);
      // close({ abortRunning: false }) lets a running job finish.
      await waitUntil(async () => (await second.get('after-close'))?.state === 'completed', 'the second job');
      const last = await second.enqueue('drained');
      await waitUntil(() => rec.runsOf(last).length === 1, 'the last start');
      await second.close({ abortRunning: false });
      expect((await make<string>({ name }).get(last))?.state).toBe('completed');
      expect(rec.overlaps).toBe(0);
    });
  });
}

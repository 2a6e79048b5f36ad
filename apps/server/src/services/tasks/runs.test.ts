import { describe, expect, it } from 'vitest';
import type { TaskRunRow } from '../../repositories/task-runs.ts';
import type { TaskRow } from '../../repositories/tasks.ts';
import { runTrigger, toTaskRun } from './runs.ts';

describe('what started a run', () => {
  it('reads it from the job: a schedule slot, a retry, a worker resuming an interrupted run, or the user', () => {
    expect(runTrigger({ run_mode: 'full' }, 't-abc-3', 1)).toBe('manual');
    expect(runTrigger({ run_mode: 'full' }, 't-abc-s1764327600000', 1)).toBe('schedule');
    expect(runTrigger({ run_mode: 'retry' }, 't-abc-r4', 1)).toBe('retry');
    // A run of a task stopped for space or traffic goes again whole, still as a retry.
    expect(runTrigger({ run_mode: 'full' }, 't-abc-r5', 1)).toBe('retry');
    expect(runTrigger({ run_mode: 'full' }, 't-abc-s1764327600000', 2)).toBe('resume');
    expect(runTrigger({ run_mode: 'retry' }, 't-abc-r4', 3)).toBe('resume');
  });
});

describe('a run as the API shows it', () => {
  const row: TaskRunRow = {
    id: 'r1',
    task_id: 't1',
    user_id: 'u1',
    job_id: 't-t1-2',
    kind: 'transfer',
    trigger: 'manual',
    outcome: null,
    started_at: 1_000,
    finished_at: null,
    counts: '{}',
    listed: '{}',
    figures: '{"bytes":5000}',
    error: null,
  };
  const task = (state: number, jobId: string | null) => ({ state, job_id: jobId }) as TaskRow;

  it('an open run is running while its task runs its job (also while it stops after a cancel)', () => {
    for (const state of [1, 2, 9]) {
      expect(toTaskRun(row, task(state, 't-t1-2'), 'r1', 11_000)).toMatchObject({ outcome: null, duration: 10_000 });
    }
  });

  it('an open run whose task moved on (its worker died, the queue gave up) was interrupted', () => {
    expect(toTaskRun(row, task(3, 't-t1-2'), 'r1', 11_000)).toMatchObject({ outcome: 'interrupted', duration: 0 });
    expect(toTaskRun(row, task(2, 't-t1-3'), 'r1', 11_000).outcome).toBe('interrupted');
    // Waiting again for a worker to resume it: that attempt is over; the resumed one is a new run.
    expect(toTaskRun(row, task(8, 't-t1-2'), 'r1', 11_000).outcome).toBe('interrupted');
  });

  it('figures: speed over the run; only the latest transfer run is the latest', () => {
    const done = { ...row, outcome: 'success', finished_at: 3_000 };
    expect(toTaskRun(done, task(0, 't-t1-2'), 'r1', 11_000)).toMatchObject({
      outcome: 'success',
      duration: 2_000,
      bytes: 5_000,
      speed: 2_500,
      is_latest: true,
      compared: 0,
    });
    expect(toTaskRun(done, task(0, 't-t1-2'), 'r0', 11_000).is_latest).toBe(false);
    expect(toTaskRun({ ...done, kind: 'verify' }, task(0, null), 'r1', 11_000).is_latest).toBe(false);
  });
});

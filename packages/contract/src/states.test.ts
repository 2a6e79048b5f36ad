import { describe, expect, it } from 'vitest';
import {
  CleanupStatus,
  CloudAuthStatus,
  ExportTaskStatus,
  LocalTaskStatus,
  ScheduleSwitch,
  TASK_STATES,
  TASK_STATE_INFO,
  TaskState,
  isFinishedState,
  isRunningState,
  localStatusOfDownloadEvent,
  outcomeState,
  taskActions,
  toggleSchedule,
} from './index.ts';

describe('server task states (spec section 4)', () => {
  it('numbers the eleven states 0 to 10', () => {
    expect(TaskState).toEqual({
      completed: 0,
      scanning: 1,
      running: 2,
      failed: 3,
      canceled: 4,
      partial: 5,
      insufficientStorage: 6,
      pending: 7,
      waiting: 8,
      waitingNoCancel: 9,
      notEnoughTraffic: 10,
    });
    expect([...TASK_STATES].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it.each([
    [0, 'Completed', 0, ['view', 'delete']],
    [1, 'Scanning', null, ['cancel', 'delete']],
    [2, 'Transferring', 2, ['cancel', 'delete']],
    [3, 'Failed', 3, ['details', 'retry', 'delete']],
    [4, 'Canceled', null, ['restart', 'delete']],
    [5, 'Partially Success', null, ['details', 'retry', 'delete']],
    [6, 'Insufficient target cloud storage', 3, ['retry', 'delete']],
    [7, 'Pending', null, ['start_now', 'toggle_schedule', 'delete']],
    [8, 'Waiting', null, ['cancel', 'delete']],
    // Issue 35: a task being cancelled reads "Cancelling" (the spec's "Waiting" read as waiting for a worker).
    [9, 'Cancelling', null, ['delete']],
    [10, 'Not enough traffic', null, ['delete']],
  ] as const)('state %i shows "%s", display class %s, actions %j', (state, label, displayClass, actions) => {
    const info = TASK_STATE_INFO[state];
    expect(info.state).toBe(state);
    expect(info.label).toBe(label);
    expect(info.displayClass).toBe(displayClass);
    expect(info.actions).toEqual(actions);
    expect(taskActions(state)).toEqual(actions);
  });

  it('gives every state a delete-record control', () => {
    for (const state of TASK_STATES) expect(taskActions(state)).toContain('delete');
  });

  it('offers cancel on 1, 2 and 8 only (9 is waiting without cancel)', () => {
    const cancellable = TASK_STATES.filter((s) => taskActions(s).includes('cancel')).sort((a, b) => a - b);
    expect(cancellable).toEqual([1, 2, 8]);
  });

  it('offers retry on failed, partial and insufficient storage; restart only on canceled', () => {
    expect(TASK_STATES.filter((s) => taskActions(s).includes('retry')).sort((a, b) => a - b)).toEqual([3, 5, 6]);
    expect(TASK_STATES.filter((s) => taskActions(s).includes('restart'))).toEqual([4]);
  });

  it('gives not-enough-traffic no action button besides delete', () => {
    expect(taskActions(TaskState.notEnoughTraffic)).toEqual(['delete']);
  });

  it('lets an unknown state only be deleted', () => {
    expect(taskActions(11)).toEqual(['delete']);
    expect(taskActions(-1)).toEqual(['delete']);
  });

  it('counts only states 1 and 2 as running', () => {
    expect(TASK_STATES.filter(isRunningState).sort((a, b) => a - b)).toEqual([1, 2]);
    expect(isRunningState(11)).toBe(false);
  });

  it('files outcomes and dead ends in the completed list, not pending or waiting tasks', () => {
    expect(TASK_STATES.filter(isFinishedState).sort((a, b) => a - b)).toEqual([0, 3, 4, 5, 6, 10]);
    for (const state of TASK_STATES) {
      expect(isRunningState(state) && isFinishedState(state)).toBe(false);
    }
  });

  it('maps migration and sync outcomes to states', () => {
    expect(outcomeState('success')).toBe(0);
    expect(outcomeState('partial')).toBe(5);
    expect(outcomeState('failed')).toBe(3);
    expect(outcomeState('canceled')).toBe(4);
  });

  it('flips is_schedule between 1 (off) and 2 (on)', () => {
    expect(ScheduleSwitch).toEqual({ off: 1, on: 2 });
    expect(toggleSchedule(1)).toBe(2);
    expect(toggleSchedule(2)).toBe(1);
    expect(toggleSchedule(toggleSchedule(1))).toBe(1);
  });
});

describe('local upload/download task status', () => {
  it('is 0 progressing, 1 completed, -1 failed with retry, -2 failed', () => {
    expect(LocalTaskStatus).toEqual({ progressing: 0, completed: 1, failedRetry: -1, failed: -2 });
  });
  it('maps download events: progressing 0, failed -2, completed 1', () => {
    expect(localStatusOfDownloadEvent('progressing')).toBe(0);
    expect(localStatusOfDownloadEvent('failed')).toBe(-2);
    expect(localStatusOfDownloadEvent('completed')).toBe(1);
  });
});

describe('export upload task status', () => {
  it('is 0 waiting, 1 success, -2 failure', () => {
    expect(ExportTaskStatus).toEqual({ waiting: 0, success: 1, failure: -2 });
  });
});

describe('clean-up status', () => {
  it('starts at -1 and is 4 when cancelled', () => {
    expect(CleanupStatus.starting).toBe(-1);
    expect(CleanupStatus.canceled).toBe(4);
  });
  it('uses the task numbers for completed, scanning and failed', () => {
    expect(CleanupStatus.completed).toBe(TaskState.completed);
    expect(CleanupStatus.scanning).toBe(TaskState.scanning);
    expect(CleanupStatus.failed).toBe(TaskState.failed);
    expect(CleanupStatus.canceled).toBe(TaskState.canceled);
    const values = Object.values(CleanupStatus);
    expect(new Set(values).size).toBe(values.length);
  });
});

describe('cloud authorisation status', () => {
  it('is authorized or expired', () => {
    expect(CloudAuthStatus.authorized).not.toBe(CloudAuthStatus.expired);
    expect(CloudAuthStatus).toEqual({ authorized: 1, expired: 0 });
  });
});

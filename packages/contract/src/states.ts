/** Server task states (spec section 4). */
export const TaskState = {
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
} as const;
export type TaskStateValue = (typeof TaskState)[keyof typeof TaskState];
export const TASK_STATES = Object.values(TaskState) as TaskStateValue[];

export type TaskAction =
  'view' | 'cancel' | 'retry' | 'restart' | 'details' | 'start_now' | 'toggle_schedule' | 'delete';
/** Display class: 0 complete, 2 progress bar, 3 failure; null for the others. */
export type TaskDisplayClass = 0 | 2 | 3 | null;

export interface TaskStateInfo {
  state: TaskStateValue;
  /** English label; the web app translates it. */
  label: string;
  displayClass: TaskDisplayClass;
  actions: readonly TaskAction[];
}

export const TASK_STATE_INFO: Record<TaskStateValue, TaskStateInfo> = {
  0: { state: 0, label: 'Completed', displayClass: 0, actions: ['view', 'delete'] },
  1: { state: 1, label: 'Scanning', displayClass: null, actions: ['cancel', 'delete'] },
  2: { state: 2, label: 'Transferring', displayClass: 2, actions: ['cancel', 'delete'] },
  3: { state: 3, label: 'Failed', displayClass: 3, actions: ['details', 'retry', 'delete'] },
  4: { state: 4, label: 'Canceled', displayClass: null, actions: ['restart', 'delete'] },
  5: { state: 5, label: 'Partially Success', displayClass: null, actions: ['details', 'retry', 'delete'] },
  6: { state: 6, label: 'Insufficient target cloud storage', displayClass: 3, actions: ['retry', 'delete'] },
  7: { state: 7, label: 'Pending', displayClass: null, actions: ['start_now', 'toggle_schedule', 'delete'] },
  8: { state: 8, label: 'Waiting', displayClass: null, actions: ['cancel', 'delete'] },
  9: { state: 9, label: 'Cancelling', displayClass: null, actions: ['delete'] },
  10: { state: 10, label: 'Not enough traffic', displayClass: null, actions: ['delete'] },
};

export function taskActions(state: number): readonly TaskAction[] {
  return TASK_STATE_INFO[state as TaskStateValue]?.actions ?? ['delete'];
}

/** States 1 and 2 count as running; progress polling stops for the others. */
export function isRunningState(state: number): boolean {
  return state === TaskState.scanning || state === TaskState.running;
}

/** States that belong to the "Transfer complete" list. */
export function isFinishedState(state: number): boolean {
  return (
    state === TaskState.completed ||
    state === TaskState.failed ||
    state === TaskState.canceled ||
    state === TaskState.partial ||
    state === TaskState.insufficientStorage ||
    state === TaskState.notEnoughTraffic
  );
}

/** is_schedule: 1 off, 2 on. */
export const ScheduleSwitch = { off: 1, on: 2 } as const;
export function toggleSchedule(isSchedule: number): 1 | 2 {
  return isSchedule === ScheduleSwitch.on ? ScheduleSwitch.off : ScheduleSwitch.on;
}

export type TaskOutcome = 'success' | 'partial' | 'failed' | 'canceled';
export function outcomeState(outcome: TaskOutcome): TaskStateValue {
  return { success: 0, partial: 5, failed: 3, canceled: 4 }[outcome] as TaskStateValue;
}

/** Local upload/download task status. */
export const LocalTaskStatus = { progressing: 0, completed: 1, failedRetry: -1, failed: -2 } as const;
/** Download events map to local statuses. */
export function localStatusOfDownloadEvent(event: 'progressing' | 'completed' | 'failed'): number {
  return { progressing: 0, completed: 1, failed: -2 }[event];
}
/** Export upload task status. */
export const ExportTaskStatus = { waiting: 0, success: 1, failure: -2 } as const;

/** Clean-up task status as the server reports it (client sets -1 while starting). */
export const CleanupStatus = {
  starting: -1,
  completed: 0,
  scanning: 1,
  failed: 3,
  canceled: 4,
} as const;
/** The clean-up screen's stages. */
export type CleanupStage = 'idle' | 'scanning' | 'results' | 'deleting' | 'done';

/** Cloud authorisation status. */
export const CloudAuthStatus = { authorized: 1, expired: 0 } as const;

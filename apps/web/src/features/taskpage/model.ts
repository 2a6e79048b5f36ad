import {
  TaskState,
  TaskType,
  parseWallClock,
  repeatKind,
  type ConflictResolution,
  type FileFilter,
  type RunFileOutcome,
  type RunOutcome,
  type SameNamePolicy,
  type Schedule,
  type ScheduleDialogValue,
  type ServerTask,
  type SyncMode,
  type TaskRun,
  type UpdateTaskBody,
} from '@skyferry/contract';

/** The state filter of the Tasks page, and the states each choice lists. */
export const STATE_FILTERS = ['all', 'active', 'scheduled', 'done', 'problems', 'canceled'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];
export const FILTER_STATES: Record<StateFilter, readonly number[] | undefined> = {
  all: undefined,
  active: [TaskState.scanning, TaskState.running, TaskState.waiting, TaskState.waitingNoCancel],
  scheduled: [TaskState.pending],
  done: [TaskState.completed],
  problems: [TaskState.failed, TaskState.partial, TaskState.insufficientStorage, TaskState.notEnoughTraffic],
  canceled: [TaskState.canceled],
};

/** States with a run queued, going or stopping: Run now waits, what runs do cannot be edited. */
export function hasActiveRun(state: number): boolean {
  return (FILTER_STATES.active as readonly number[]).includes(state);
}

/** States Retry may send the failed files again from. */
export function canRetry(state: number): boolean {
  return (
    state === TaskState.failed ||
    state === TaskState.partial ||
    state === TaskState.insufficientStorage ||
    state === TaskState.notEnoughTraffic
  );
}

/** Badge colours of run outcomes (shade 9 outlines keep AA contrast on white). */
export const OUTCOME_COLOURS: Record<RunOutcome | 'running', string> = {
  running: 'blue.9',
  success: 'teal.9',
  same: 'teal.9',
  partial: 'grape.9',
  differs: 'orange.9',
  failed: 'red.9',
  insufficient_space: 'red.9',
  traffic_exceeded: 'grape.9',
  needs_delete_confirmation: 'orange.9',
  canceled: 'gray.7',
  interrupted: 'gray.7',
};

/** The file outcomes a run of each kind shows, in this order. */
export const TRANSFER_TABS: readonly RunFileOutcome[] = [
  'conflict',
  'failed',
  'not_done',
  'deleted',
  'added',
  'updated',
  'skipped',
];
export const VERIFY_TABS: readonly RunFileOutcome[] = [
  'missing_on_target',
  'missing_on_source',
  'size_differs',
  'content_differs',
  'unreadable',
];

/** The outcomes of a run worth a tab: those it has files of. */
export function runTabs(run: Pick<TaskRun, 'kind' | 'counts'>): RunFileOutcome[] {
  const order = run.kind === 'verify' ? VERIFY_TABS : TRANSFER_TABS;
  return order.filter((o) => (run.counts[o] ?? 0) > 0);
}

/** Files counted but not kept as rows (past SKYFERRY_RUN_FILE_ROWS, or never listed one by one). */
export function notListed(run: Pick<TaskRun, 'counts' | 'listed'>, outcome: RunFileOutcome | 'all'): number {
  const of = (o: RunFileOutcome) => Math.max(0, (run.counts[o] ?? 0) - (run.listed[o] ?? 0));
  if (outcome !== 'all') return of(outcome);
  return (Object.keys(run.counts) as RunFileOutcome[]).reduce((s, o) => s + of(o), 0);
}

export function runOutcomeKey(run: Pick<TaskRun, 'outcome'>): RunOutcome | 'running' {
  return run.outcome ?? 'running';
}

/** A wall-clock schedule as the Scheduled task dialog starts from it (a start already past moves to today). */
export function dialogValueOf(schedule: Schedule | null, now = new Date()): ScheduleDialogValue | null {
  if (!schedule) return null;
  const w = parseWallClock(schedule.start_date);
  if (!w) return null;
  const kind = repeatKind(schedule.repeat_type);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hour = schedule.hour ?? w.hour;
  const minute = schedule.minute ?? w.minute;
  const today = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  let day = `${w.year}-${pad(w.month)}-${pad(w.day)}`;
  if (day < today && kind !== 'once') day = today;
  return {
    datetime: `${day} ${pad(hour)}:${pad(minute)}:00`,
    needRepeat: kind !== 'once',
    repeatType: kind === 'once' ? 'daily' : kind,
  };
}

/** The settings the Edit dialog holds. */
export interface EditForm {
  name: string;
  /** null: no schedule. */
  schedule: Schedule | null;
  scheduleOn: boolean;
  /** The zone the schedule is read in (the browser's once the user picks a new time). */
  timeZone: string;
  syncMode: SyncMode | null;
  sameNamePolicy: SameNamePolicy;
  filter: FileFilter | null;
  conflictResolution: ConflictResolution;
}

export function editFormOf(task: ServerTask): EditForm {
  return {
    name: task.task_name,
    schedule: task.schedule,
    scheduleOn: task.schedule !== null && task.is_schedule === 2,
    timeZone: task.time_zone,
    syncMode: task.sync_mode,
    sameNamePolicy: task.same_name_policy,
    filter: task.filter,
    conflictResolution: task.conflict_resolution,
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The PUT body of an edit: only what changed. */
export function editBody(task: ServerTask, form: EditForm): UpdateTaskBody {
  const body: UpdateTaskBody = {};
  const name = form.name.trim();
  if (name && name !== task.task_name) body.task_name = name;
  if (!same(form.schedule, task.schedule) || (form.schedule && form.timeZone !== task.time_zone)) {
    body.schedule = form.schedule;
    if (form.schedule) {
      body.time_zone = form.timeZone;
      body.is_schedule = form.scheduleOn ? 2 : 1;
    }
  } else if (form.schedule && form.scheduleOn !== (task.is_schedule === 2)) {
    body.is_schedule = form.scheduleOn ? 2 : 1;
  }
  if (task.task_type === TaskType.sync && form.syncMode && form.syncMode !== task.sync_mode) {
    body.sync_mode = form.syncMode;
  }
  if (form.sameNamePolicy !== task.same_name_policy) body.same_name_policy = form.sameNamePolicy;
  if (!same(form.filter, task.filter)) body.filter = form.filter;
  if (task.task_type === TaskType.sync && form.conflictResolution !== task.conflict_resolution) {
    body.conflict_resolution = form.conflictResolution;
  }
  return body;
}

/** Whether an edit changes what runs do (then it is refused while a run goes on). */
export function changesRuns(body: UpdateTaskBody): boolean {
  return (
    body.sync_mode !== undefined ||
    body.same_name_policy !== undefined ||
    body.filter !== undefined ||
    body.conflict_resolution !== undefined
  );
}

/** Whether the edited task's next run may delete (a mirror or two-way sync): its plan is shown before saving. */
export function editMayDelete(task: ServerTask, body: UpdateTaskBody): boolean {
  const mode = body.sync_mode ?? task.sync_mode;
  return task.task_type === TaskType.sync && changesRuns(body) && (mode === 'mirror' || mode === 'two_way');
}

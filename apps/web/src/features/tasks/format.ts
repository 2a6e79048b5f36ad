import type { TFunction } from 'i18next';
import { TaskState, TaskType, formatBytes, isRunningState, type ServerTask } from '@skyferry/contract';

/** A duration in ms as h:mm:ss (m:ss under an hour), language-neutral. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** Bytes per second as "1.50 MB/s". */
export function formatSpeed(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** State 2 before any progress shows "Scanning" instead of the bar (spec section 4). */
export function hasProgress(task: Pick<ServerTask, 'state' | 'progress' | 'finished_counts'>): boolean {
  const p = task.progress;
  return p.percentage > 0 || p.transferred > 0 || task.finished_counts > 0;
}

/**
 * What the running line shows after the bar: bytes moved of the total, or, when no bytes are to
 * move (only deletions or folders), the counts.
 */
export function progressAmount(task: Pick<ServerTask, 'progress' | 'finished_counts' | 'total_counts'>): string {
  const p = task.progress;
  if (p.length > 0) return `${formatBytes(p.transferred)}/${formatBytes(p.length)}`;
  return `${task.finished_counts}/${task.total_counts}`;
}

/** Percentage shown with the bar: whole numbers, never past 100. */
export function percentText(percentage: number): string {
  return `${Math.min(100, Math.max(0, Math.floor(percentage)))}%`;
}

/** Whether a task is one the spec calls running (1, 2); such rows are polled. */
export function isRunning(task: Pick<ServerTask, 'state'>): boolean {
  return isRunningState(task.state);
}

/** A task whose schedule repeats or is still to come shows the tick box and next run time. */
export function showsSchedule(task: Pick<ServerTask, 'state' | 'schedule'>): boolean {
  if (!task.schedule) return false;
  return task.state === TaskState.pending || task.schedule.repeat_type !== undefined;
}

/** "Migration Failed" or "Sync Failed" (MSG-19, MSG-20), with the run's reason when it gave one. */
export function failedLine(task: Pick<ServerTask, 'task_type' | 'result'>, t: TFunction): string {
  const key = task.task_type === TaskType.migrate ? 'migrationFailed' : 'syncFailed';
  const reason = task.result?.error?.message;
  return reason ? t(`${key}Because`, { ns: 'transmission', reason }) : t(key, { ns: 'transmission' });
}
